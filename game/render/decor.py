"""Scenery pieces (houses, the well, the market stall, trees, signs) drawn into a rect.

Each painter paints one ``DecorView`` into its screen-space rectangle on the colour-keyed
level layer, so only solid colours are used, and text sits on opaque boards. This module
picks the painter by kind and holds the small pieces; the buildings are in
``decor_buildings.py`` and what they all share in ``decor_canvas.py``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import replace

import pygame

from game.render.decor_buildings import draw_forge, draw_house, draw_stall, draw_well
from game.render.decor_canvas import (
    BARK,
    DOOR,
    LEAVES,
    ROOF,
    ROOF_DARK,
    Canvas,
    line_w,
    sign_board,
    window_pane,
)
from game.render.palette import darken, lighten, material
from game.render.text import TextCache

logger = logging.getLogger(__name__)

DecorPainter = Callable[[Canvas], None]


def draw_decor(
    layer: pygame.Surface,
    kind: str,
    rect: pygame.Rect,
    material_name: str,
    label: str,
    text: TextCache,
    zoom: float,
    roof_y: int | None = None,
    signs: list[pygame.Rect] | None = None,
) -> None:
    """Draw one decor item of ``kind`` filling ``rect``; unknown kinds become a plain block.

    ``roof_y`` is the screen y of a roof the level models as collision geometry on top of
    this item; a house then draws no roof of its own and a well's posts reach up to it.
    Sign boards painted are appended to ``signs`` (layer coordinates), so speech bubbles
    can keep off them.
    """
    painter = _PAINTERS.get(kind.lower(), _draw_block)
    painter(Canvas(layer, rect, material(material_name), label, text, zoom, roof_y, signs))


def _draw_tree(c: Canvas) -> None:
    trunk = pygame.Rect(0, 0, max(4, c.rect.width // 6), c.rect.height // 2)
    trunk.midbottom = c.rect.midbottom
    pygame.draw.rect(c.layer, BARK, trunk)
    r = c.rect.width / 3
    for dx, dy, k in ((0, -0.62, 1.0), (-0.9, -0.45, 0.8), (0.9, -0.45, 0.8), (0, -0.85, 0.8)):
        center = (c.rect.centerx + dx * r, c.rect.bottom + dy * c.rect.height)
        pygame.draw.circle(c.layer, darken(LEAVES, 0.8), center, r * k + 2)
        pygame.draw.circle(c.layer, LEAVES, center, r * k)
    sign_board(c, (c.rect.centerx, c.rect.bottom - round(14 * c.zoom)))


def _draw_fence(c: Canvas) -> None:
    step = max(8, round(22 * c.zoom))
    for x in range(c.rect.left, c.rect.right, step):
        pygame.draw.rect(c.layer, c.look.fill, (x, c.rect.top, max(3, step // 4), c.rect.height))
    for y in (c.rect.top + c.rect.height // 4, c.rect.bottom - c.rect.height // 3):
        pygame.draw.rect(
            c.layer, c.look.outline, (c.rect.left, y, c.rect.width, max(2, round(4 * c.zoom)))
        )


def _draw_sign(c: Canvas) -> None:
    # A signpost stands on the item's bottom edge, tall enough to read over props.
    height = max(c.rect.height, round(34 * c.zoom))
    post = pygame.Rect(c.rect.centerx - 2, c.rect.bottom - height, line_w(c.zoom, 4), height)
    pygame.draw.rect(c.layer, BARK, post)
    sign_board(replace(c, label=c.label or "?"), (c.rect.centerx, post.top))


def _draw_basket(c: Canvas) -> None:
    """A wicker basket set into the ground: its rim and handle stand at the surface.

    ``rect.top`` is the ground's surface and ``rect.bottom`` the basket's floor; the
    earth around the body is cut back a little so it reads as dug in, not as a shaft.
    """
    w = c.rect.width
    top, bottom = c.rect.top, c.rect.bottom
    inset = round(w * 0.12)
    hole = [
        (c.rect.left - 3, top),
        (c.rect.right + 3, top),
        (c.rect.right - inset + 3, bottom + 3),
        (c.rect.left + inset - 3, bottom + 3),
    ]
    pygame.draw.polygon(c.layer, darken(c.look.outline, 0.7), hole)
    body = [
        (c.rect.left, top),
        (c.rect.right, top),
        (c.rect.right - inset, bottom),
        (c.rect.left + inset, bottom),
    ]
    pygame.draw.polygon(c.layer, c.look.fill, body)
    step = max(3, round(6 * c.zoom))
    for row, y in enumerate(range(top + step, bottom, step)):
        t = (y - top) / max(1, bottom - top)
        pad = round(inset * t) + 2
        pygame.draw.line(c.layer, c.look.detail, (c.rect.left + pad, y), (c.rect.right - pad, y), 1)
        # Staggered uprights give the weave; cheap and readable at any zoom.
        for x in range(c.rect.left + pad + (row % 2 + 1) * step, c.rect.right - pad, 2 * step):
            pygame.draw.line(c.layer, c.look.outline, (x, y - step + 1), (x, y - 1), 1)
    pygame.draw.polygon(c.layer, c.look.outline, body, line_w(c.zoom))
    # The handle arches over the opening; props fall through it, as art only.
    handle_h = round(w * 0.55)
    arc = pygame.Rect(c.rect.left + 3, top - handle_h, w - 6, 2 * handle_h)
    pygame.draw.arc(c.layer, c.look.outline, arc, 0.0, math.pi, line_w(c.zoom, 4))
    pygame.draw.arc(c.layer, c.look.fill, arc.inflate(-3, -3), 0.15, math.pi - 0.15,
                    line_w(c.zoom, 2))  # fmt: skip
    rim = pygame.Rect(c.rect.left - 4, top - round(5 * c.zoom), w + 8, round(9 * c.zoom))
    pygame.draw.rect(c.layer, lighten(c.look.fill, 0.15), rim, border_radius=4)
    pygame.draw.rect(c.layer, c.look.outline, rim, line_w(c.zoom), border_radius=4)


def _draw_window(c: Canvas) -> None:
    window_pane(c.layer, c.rect, c.look.outline, c.zoom)


def _draw_roof(c: Canvas) -> None:
    roof = [c.rect.bottomleft, c.rect.midtop, c.rect.bottomright]
    pygame.draw.polygon(c.layer, ROOF, roof)
    pygame.draw.polygon(c.layer, ROOF_DARK, roof, line_w(c.zoom, 3))


def _draw_block(c: Canvas) -> None:
    pygame.draw.rect(c.layer, c.look.fill, c.rect)
    pygame.draw.rect(c.layer, c.look.outline, c.rect, line_w(c.zoom))
    if c.rect.width > 30:
        pygame.draw.line(
            c.layer, lighten(c.look.fill, 0.2), c.rect.topleft, (c.rect.right - 1, c.rect.top), 1
        )
    sign_board(c, c.rect.center)


def _draw_door(c: Canvas) -> None:
    pygame.draw.rect(
        c.layer,
        DOOR,
        c.rect,
        border_top_left_radius=c.rect.width // 2,
        border_top_right_radius=c.rect.width // 2,
    )
    pygame.draw.rect(
        c.layer,
        darken(DOOR, 0.6),
        c.rect,
        line_w(c.zoom),
        border_top_left_radius=c.rect.width // 2,
        border_top_right_radius=c.rect.width // 2,
    )


_PAINTERS: dict[str, DecorPainter] = {
    "house": draw_house,
    "well": draw_well,
    "stall": draw_stall,
    "market_stall": draw_stall,
    "market": draw_stall,
    "tree": _draw_tree,
    "fence": _draw_fence,
    "sign": _draw_sign,
    "basket": _draw_basket,
    "forge": draw_forge,
    "window": _draw_window,
    "roof": _draw_roof,
    "door": _draw_door,
    "wall": _draw_block,
}
