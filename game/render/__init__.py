"""Drawing: camera, shapes, speech bubbles and HUD. Reads snapshots, never changes them."""

from game.render.camera import Camera
from game.render.renderer import Renderer, screenshot
from game.render.text import TextCache

__all__ = ["Camera", "Renderer", "TextCache", "screenshot"]
