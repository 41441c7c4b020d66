"""What every decor painter shares: the canvas it paints on, the colours, a line width
that follows the zoom, the sign boards and the windows."""

from __future__ import annotations

from dataclasses import dataclass

import pygame

from game.render.palette import Material, Rgb, darken
from game.render.text import TextCache

ROOF = (150, 62, 50)
ROOF_DARK = (104, 40, 34)
WINDOW_GLASS = (250, 222, 140)
DOOR = (112, 72, 42)
AWNING_A = (214, 66, 58)
AWNING_B = (248, 240, 226)
SIGN_BOARD = (120, 82, 48)
SIGN_TEXT = (250, 240, 214)
LEAVES = (88, 150, 72)
BARK = (110, 78, 52)


@dataclass(frozen=True, slots=True)
class Canvas:
    """Where and how to paint one decor item."""

    layer: pygame.Surface
    rect: pygame.Rect
    look: Material
    label: str
    text: TextCache
    zoom: float
    roof_y: int | None = None  # screen y of a collision roof resting on this item
    signs: list[pygame.Rect] | None = None  # collects the sign boards painted, if given


def line_w(zoom: float, px: float = 2.0) -> int:
    """A line ``px`` pixels wide at zoom 1, never thinner than one pixel."""
    return max(1, round(px * zoom))


def sign_board(c: Canvas, center: tuple[int, int]) -> None:
    """The item's label on a wooden board centred on ``center``; nothing without a label."""
    layer, label, text, zoom = c.layer, c.label, c.text, c.zoom
    if not label:
        return
    glyphs = text.render(label, max(10, round(14 * zoom)), SIGN_TEXT, bold=True)
    board = glyphs.get_rect(center=center).inflate(round(12 * zoom), round(6 * zoom))
    if c.signs is not None:
        c.signs.append(board.copy())
    pygame.draw.rect(layer, SIGN_BOARD, board, border_radius=3)
    pygame.draw.rect(layer, darken(SIGN_BOARD, 0.6), board, line_w(zoom), border_radius=3)
    layer.blit(glyphs, glyphs.get_rect(center=board.center))


def window_pane(layer: pygame.Surface, rect: pygame.Rect, frame: Rgb, zoom: float) -> None:
    """A lit window with its cross bars and sill."""
    pygame.draw.rect(layer, WINDOW_GLASS, rect)
    pygame.draw.rect(layer, frame, rect, line_w(zoom, 3))
    pygame.draw.line(layer, frame, rect.midtop, rect.midbottom, line_w(zoom))
    pygame.draw.line(layer, frame, rect.midleft, rect.midright, line_w(zoom))
    sill = pygame.Rect(rect.left - 3, rect.bottom, rect.width + 6, line_w(zoom, 4))
    pygame.draw.rect(layer, frame, sill)
