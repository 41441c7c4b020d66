"""The renderer: one ``draw`` call per frame turns two snapshots and the overlay views into
pixels. It only reads what it is given and never changes it.
"""

from __future__ import annotations

import logging
import time as _time
from collections.abc import Sequence
from pathlib import Path

import pygame

from game.render.bubbles import BubbleArtist
from game.render.camera import Camera
from game.render.hud import Hud
from game.render.scenery import (
    FAR_PARALLAX,
    NEAR_PARALLAX,
    build_hills,
    build_level_layer,
    build_sky,
    level_bottom,
)
from game.render.shapes import NameTags, blend, draw_actor, draw_prop
from game.render.text import TextCache
from game.sim.snapshot import LevelView, PropView, WorldSnapshot
from game.views import BubbleView, HudView

logger = logging.getLogger(__name__)

#: The camera aims a little above and ahead of the player, so more of what they walk
#: toward is on screen than what is behind them.
LOOK_UP = 140.0
LOOK_AHEAD = 60.0


def screenshot(surface: pygame.Surface, path: str | Path) -> Path:
    """Save ``surface`` as an image at ``path`` (format from the suffix); return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(surface, str(target))
    logger.info("screenshot saved to %s", target)
    return target


def _for_display(surface: pygame.Surface) -> pygame.Surface:
    """Convert to the display's pixel format when there is a display, for faster blits."""
    if not (pygame.display.get_init() and pygame.display.get_surface() is not None):
        return surface
    key = surface.get_colorkey()
    converted = surface.convert()
    if key is not None:
        converted.set_colorkey(key, pygame.RLEACCEL)
    return converted


class Renderer:
    """Draws the level, props, villagers, speech bubbles and HUD for one frame.

    The static picture (sky, hills, level) is painted once into large surfaces and rebuilt
    only when the zoom or the window size changes; a frame blits those, then draws the
    moving things blended between the previous and current snapshots.
    """

    def __init__(
        self, level: LevelView, *, zoom: float = 1.0, text: TextCache | None = None
    ) -> None:
        self.level = level
        self.text = text if text is not None else TextCache()
        self.camera = Camera(level.width, level.height, zoom=zoom, bottom=level_bottom(level))
        self.bubbles = BubbleArtist(self.text)
        self.hud = Hud(self.text)
        self.tags = NameTags(self.text)
        self.last_draw_ms = 0.0  # wall time of the last draw, for the stats panel
        self.last_hud_ms = 0.0  # the HUD's share of it, to show the HUD costs nothing
        self.last_bubble_rects: list[pygame.Rect] = []
        self._time = 0.0
        self._layers_key: tuple[float, int, int] | None = None
        self._sky = pygame.Surface((1, 1))
        self._far = self._sky
        self._near = self._sky
        self._far_top = self._near_top = 0
        self._level_layer = self._sky

    @property
    def time(self) -> float:
        """Seconds of frame time drawn so far; drives blinking and animated dots."""
        return self._time

    def draw(
        self,
        surface: pygame.Surface,
        prev: WorldSnapshot,
        curr: WorldSnapshot,
        alpha: float,
        bubbles: Sequence[BubbleView],
        hud: HudView,
        frame_dt: float,
    ) -> None:
        """Draw one frame of the world blended ``alpha`` (0..1) from ``prev`` to ``curr``.

        The camera follows the actor ``curr.player_id``; ``frame_dt`` (seconds since the
        last frame) paces the camera and the animations.
        """
        started = _time.perf_counter()
        self._time += max(0.0, frame_dt)
        alpha = max(0.0, min(1.0, alpha))
        width, height = surface.get_size()
        camera = self.camera
        camera.set_viewport((width, height))

        actors = blend(prev.actors, curr.actors, alpha)
        for actor, x, y, _ in actors:
            if actor.id == curr.player_id:
                facing = 1 if actor.facing >= 0 else -1
                camera.follow(x + facing * LOOK_AHEAD, y + LOOK_UP, frame_dt)
                break

        self._ensure_layers(width, height)
        ox, oy = camera.origin
        surface.blit(self._sky, (0, 0))
        surface.blit(self._far, (round(ox * FAR_PARALLAX), oy + self._far_top))
        surface.blit(self._near, (round(ox * NEAR_PARALLAX), oy + self._near_top))
        surface.blit(self._level_layer, (ox, oy))

        zoom = camera.zoom
        held: list[tuple[PropView, float, float, float]] = []
        for prop, x, y, angle in blend(prev.props, curr.props, alpha):
            sx, sy = camera.world_to_screen(x, y)
            reach = max(prop.w, prop.h) * zoom
            if sx < -reach or sx > width + reach or sy < -reach or sy > height + reach:
                continue
            if prop.held:
                held.append((prop, sx, sy, angle))
            else:
                draw_prop(surface, prop, sx, sy, angle, zoom)

        anchors: dict[int, tuple[float, float]] = {}
        # Name tags and the player's marker stay readable: bubbles keep off them too.
        keep_clear: list[pygame.Rect] = list(self.hud.rects)
        for actor, x, y, angle in actors:
            sx, sy = camera.world_to_screen(x, y)
            reach = max(actor.w, actor.h) * zoom
            if sx < -reach or sx > width + reach or sy < -reach or sy > height + reach:
                # Off screen: a bubble still points toward them from the screen edge.
                anchors[actor.id] = (sx, sy - actor.h * zoom / 2)
                continue
            top = draw_actor(surface, actor, sx, sy, angle, zoom)
            if not actor.is_player and actor.name:
                tag = self.tags.draw(surface, actor.name, sx, top - 4)
                keep_clear.append(tag)
                top = tag.top
            else:
                keep_clear.append(pygame.Rect(round(sx) - 8, round(top), 16, 12))
            anchors[actor.id] = (sx, top - 2)
        for prop, sx, sy, angle in held:
            draw_prop(surface, prop, sx, sy, angle, zoom)

        # The HUD panels are last frame's: the HUD draws after the bubbles and barely moves.
        self.last_bubble_rects = self.bubbles.draw(
            surface, bubbles, anchors, self._time, obstacles=keep_clear
        )
        hud_started = _time.perf_counter()
        self.hud.draw(surface, hud, curr, self._time)
        done = _time.perf_counter()
        self.last_hud_ms = (done - hud_started) * 1000.0
        self.last_draw_ms = (done - started) * 1000.0

    def screenshot(self, surface: pygame.Surface, path: str | Path) -> Path:
        """Save the last drawn frame on ``surface`` to ``path``; see ``screenshot``."""
        return screenshot(surface, path)

    def _ensure_layers(self, width: int, height: int) -> None:
        key = (self.camera.zoom, width, height)
        if key == self._layers_key:
            return
        started = _time.perf_counter()
        zoom = self.camera.zoom
        self._sky = _for_display(build_sky((width, height)))
        if self._layers_key is None or self._layers_key[:2] != key[:2]:
            far, self._far_top = build_hills(self.level, zoom, width, FAR_PARALLAX, near=False)
            near, self._near_top = build_hills(self.level, zoom, width, NEAR_PARALLAX, near=True)
            self._far, self._near = _for_display(far), _for_display(near)
        if self._layers_key is None or self._layers_key[0] != zoom:
            self._level_layer = _for_display(build_level_layer(self.level, zoom, self.text))
        self._layers_key = key
        logger.debug(
            "background layers for %s built in %.1f ms",
            key,
            (_time.perf_counter() - started) * 1000,
        )
