"""Scenery pieces (houses, the well, the market stall, trees, signs) drawn into a rect.

Each function paints one ``DecorView`` into its screen-space rectangle on the colour-keyed
level layer, so only solid colours are used, and text sits on opaque boards.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import pygame

from game.render.palette import INK, Material, Rgb, darken, lighten, material
from game.render.text import TextCache

logger = logging.getLogger(__name__)

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
class _Canvas:
    """Where and how to paint one decor item."""

    layer: pygame.Surface
    rect: pygame.Rect
    look: Material
    label: str
    text: TextCache
    zoom: float
    roof_y: int | None = None  # screen y of a collision roof resting on this item
    signs: list[pygame.Rect] | None = None  # collects the sign boards painted, if given


DecorPainter = Callable[[_Canvas], None]


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
    painter(_Canvas(layer, rect, material(material_name), label, text, zoom, roof_y, signs))


def _line_w(zoom: float, px: float = 2.0) -> int:
    return max(1, round(px * zoom))


def _sign(c: _Canvas, center: tuple[int, int]) -> None:
    layer, label, text, zoom = c.layer, c.label, c.text, c.zoom
    if not label:
        return
    glyphs = text.render(label, max(10, round(14 * zoom)), SIGN_TEXT, bold=True)
    board = glyphs.get_rect(center=center).inflate(round(12 * zoom), round(6 * zoom))
    if c.signs is not None:
        c.signs.append(board.copy())
    pygame.draw.rect(layer, SIGN_BOARD, board, border_radius=3)
    pygame.draw.rect(layer, darken(SIGN_BOARD, 0.6), board, _line_w(zoom), border_radius=3)
    layer.blit(glyphs, glyphs.get_rect(center=board.center))


def _window(layer: pygame.Surface, rect: pygame.Rect, frame: Rgb, zoom: float) -> None:
    pygame.draw.rect(layer, WINDOW_GLASS, rect)
    pygame.draw.rect(layer, frame, rect, _line_w(zoom, 3))
    pygame.draw.line(layer, frame, rect.midtop, rect.midbottom, _line_w(zoom))
    pygame.draw.line(layer, frame, rect.midleft, rect.midright, _line_w(zoom))
    sill = pygame.Rect(rect.left - 3, rect.bottom, rect.width + 6, _line_w(zoom, 4))
    pygame.draw.rect(layer, frame, sill)


def _draw_house(c: _Canvas) -> None:
    own_roof = c.roof_y is None
    roof_h = round(c.rect.height * 0.38) if own_roof else 0
    wall = pygame.Rect(c.rect.left, c.rect.top + roof_h, c.rect.width, c.rect.height - roof_h)
    wall_fill = c.look.fill if c.look.fill != material("wood").fill else (232, 214, 180)
    pygame.draw.rect(c.layer, wall_fill, wall)
    beam = darken(c.look.outline, 0.9)
    # Timber framing: posts and a top rail, the way the village's half-timbered houses look.
    for x in (wall.left, wall.centerx, wall.right - _line_w(c.zoom, 5)):
        pygame.draw.rect(c.layer, beam, (x, wall.top, _line_w(c.zoom, 5), wall.height))
    pygame.draw.rect(c.layer, beam, (wall.left, wall.top, wall.width, _line_w(c.zoom, 5)))
    if own_roof:
        _gable_roof(c, wall.top)
    door_w = max(8, round(wall.width * 0.2))
    door_h = round(wall.height * 0.62)
    door = pygame.Rect(0, 0, door_w, door_h)
    door.midbottom = (wall.centerx + round(wall.width * 0.12), wall.bottom)
    pygame.draw.rect(
        c.layer, DOOR, door, border_top_left_radius=door_w // 2, border_top_right_radius=door_w // 2
    )
    pygame.draw.rect(
        c.layer,
        darken(DOOR, 0.6),
        door,
        _line_w(c.zoom),
        border_top_left_radius=door_w // 2,
        border_top_right_radius=door_w // 2,
    )
    pygame.draw.circle(
        c.layer, (230, 196, 90), (door.right - door_w // 4, door.centery + 4), _line_w(c.zoom)
    )
    win = max(8, round(wall.width * 0.18))
    for cx in (wall.left + round(wall.width * 0.2), wall.right - round(wall.width * 0.14)):
        if abs(cx - door.centerx) > door_w:
            _window(
                c.layer,
                pygame.Rect(cx - win // 2, wall.top + round(wall.height * 0.2), win, win),
                beam,
                c.zoom,
            )
    _sign(c, (c.rect.centerx, wall.top + round(wall.height * 0.1)))


def _gable_roof(c: _Canvas, eaves: int) -> None:
    roof_h = eaves - c.rect.top
    overhang = round(c.rect.width * 0.08)
    chimney = pygame.Rect(
        c.rect.right - round(c.rect.width * 0.3),
        c.rect.top + round(roof_h * 0.15),
        round(c.rect.width * 0.1),
        round(roof_h * 0.6),
    )
    pygame.draw.rect(c.layer, (150, 96, 76), chimney)
    pygame.draw.rect(c.layer, darken((150, 96, 76), 0.6), chimney, _line_w(c.zoom))
    roof = [
        (c.rect.left - overhang, eaves + 2),
        (c.rect.centerx, c.rect.top),
        (c.rect.right + overhang, eaves + 2),
    ]
    pygame.draw.polygon(c.layer, ROOF, roof)
    for i in range(1, 4):  # tile rows
        t = i / 4
        y = c.rect.top + roof_h * t
        half = (c.rect.width / 2 + overhang) * t
        pygame.draw.line(
            c.layer, ROOF_DARK, (c.rect.centerx - half, y), (c.rect.centerx + half, y), 1
        )
    pygame.draw.polygon(c.layer, ROOF_DARK, roof, _line_w(c.zoom, 3))


def _draw_well(c: _Canvas) -> None:
    stone = material("stone") if c.look.fill == material("wood").fill else c.look
    own_roof = c.roof_y is None
    ring_h = round(c.rect.height * (0.38 if own_roof else 0.5))
    ring = pygame.Rect(c.rect.left, c.rect.bottom - ring_h, c.rect.width, ring_h)
    post_w = max(3, round(c.rect.width * 0.08))
    roof_h = round(c.rect.height * 0.22) if own_roof else 0
    post_top = c.rect.top + roof_h // 2 if c.roof_y is None else c.roof_y
    for x in (ring.left + post_w, ring.right - 2 * post_w):
        pygame.draw.rect(c.layer, BARK, (x, post_top, post_w, ring.top - post_top))
    axle_y = post_top + max(roof_h, round((ring.top - post_top) * 0.3))
    pygame.draw.line(
        c.layer,
        darken(BARK, 0.7),
        (ring.left + post_w, axle_y),
        (ring.right - post_w, axle_y),
        _line_w(c.zoom, 3),
    )
    pygame.draw.line(
        c.layer, INK, (c.rect.centerx, axle_y), (c.rect.centerx, ring.top - round(ring_h * 0.3)), 1
    )
    bucket = pygame.Rect(0, 0, round(c.rect.width * 0.16), round(ring_h * 0.3))
    bucket.midtop = (c.rect.centerx, ring.top - round(ring_h * 0.3))
    pygame.draw.rect(c.layer, material("wood").fill, bucket)
    pygame.draw.rect(c.layer, material("metal").outline, bucket, 1)
    if own_roof:
        roof = [
            (c.rect.left - 6, c.rect.top + roof_h),
            (c.rect.centerx, c.rect.top),
            (c.rect.right + 6, c.rect.top + roof_h),
        ]
        pygame.draw.polygon(c.layer, ROOF, roof)
        pygame.draw.polygon(c.layer, ROOF_DARK, roof, _line_w(c.zoom))
    pygame.draw.rect(c.layer, stone.fill, ring, border_top_left_radius=4, border_top_right_radius=4)
    brick_h = max(4, ring_h // 3)
    for row, y in enumerate(range(ring.top, ring.bottom, brick_h)):
        pygame.draw.line(c.layer, stone.outline, (ring.left, y), (ring.right - 1, y), 1)
        offset = (row % 2) * brick_h
        for x in range(ring.left + offset, ring.right, brick_h * 2):
            pygame.draw.line(c.layer, stone.outline, (x, y), (x, min(ring.bottom, y + brick_h)), 1)
    pygame.draw.rect(
        c.layer,
        stone.outline,
        ring,
        _line_w(c.zoom),
        border_top_left_radius=4,
        border_top_right_radius=4,
    )
    # The sign hangs high under the roof: at the ring it would sit behind whoever is at
    # the well, under their name tag.
    _sign(c, (c.rect.centerx, post_top + round(16 * c.zoom)))


def _draw_stall(c: _Canvas) -> None:
    wood = material("wood")
    counter_h = round(c.rect.height * 0.4)
    counter = pygame.Rect(c.rect.left, c.rect.bottom - counter_h, c.rect.width, counter_h)
    post_w = max(3, round(c.rect.width * 0.05))
    awning_h = round(c.rect.height * 0.24)
    for x in (c.rect.left + post_w, c.rect.right - 2 * post_w):
        pygame.draw.rect(
            c.layer,
            wood.outline,
            (x, c.rect.top + awning_h // 2, post_w, c.rect.height - awning_h // 2),
        )
    pygame.draw.rect(c.layer, wood.fill, counter)
    for y in range(counter.top, counter.bottom, max(4, round(10 * c.zoom))):
        pygame.draw.line(c.layer, wood.detail, (counter.left, y), (counter.right - 1, y), 1)
    pygame.draw.rect(c.layer, wood.outline, counter, _line_w(c.zoom))
    # Goods on the counter: a row of apples and a loaf or two.
    for i, x in enumerate(
        range(counter.left + 14, counter.right - 10, max(10, round(16 * c.zoom)))
    ):
        color = (206, 40, 44) if i % 3 else (222, 170, 90)
        pygame.draw.circle(
            c.layer, color, (x, counter.top - round(5 * c.zoom)), max(3, round(6 * c.zoom))
        )
    stripes = 7
    stripe_w = (c.rect.width + 16) / stripes
    left = c.rect.left - 8
    for i in range(stripes):
        color = AWNING_A if i % 2 == 0 else AWNING_B
        x0 = left + i * stripe_w
        pygame.draw.rect(c.layer, color, (round(x0), c.rect.top, round(stripe_w) + 1, awning_h))
        pygame.draw.circle(c.layer, color, (x0 + stripe_w / 2, c.rect.top + awning_h), stripe_w / 2)
    pygame.draw.line(
        c.layer,
        darken(AWNING_A, 0.6),
        (left, c.rect.top),
        (left + stripes * stripe_w, c.rect.top),
        _line_w(c.zoom),
    )
    _sign(c, (c.rect.centerx, c.rect.top + awning_h // 2))


def _draw_tree(c: _Canvas) -> None:
    trunk = pygame.Rect(0, 0, max(4, c.rect.width // 6), c.rect.height // 2)
    trunk.midbottom = c.rect.midbottom
    pygame.draw.rect(c.layer, BARK, trunk)
    r = c.rect.width / 3
    for dx, dy, k in ((0, -0.62, 1.0), (-0.9, -0.45, 0.8), (0.9, -0.45, 0.8), (0, -0.85, 0.8)):
        center = (c.rect.centerx + dx * r, c.rect.bottom + dy * c.rect.height)
        pygame.draw.circle(c.layer, darken(LEAVES, 0.8), center, r * k + 2)
        pygame.draw.circle(c.layer, LEAVES, center, r * k)
    _sign(c, (c.rect.centerx, c.rect.bottom - round(14 * c.zoom)))


def _draw_fence(c: _Canvas) -> None:
    step = max(8, round(22 * c.zoom))
    for x in range(c.rect.left, c.rect.right, step):
        pygame.draw.rect(c.layer, c.look.fill, (x, c.rect.top, max(3, step // 4), c.rect.height))
    for y in (c.rect.top + c.rect.height // 4, c.rect.bottom - c.rect.height // 3):
        pygame.draw.rect(
            c.layer, c.look.outline, (c.rect.left, y, c.rect.width, max(2, round(4 * c.zoom)))
        )


def _draw_sign(c: _Canvas) -> None:
    # A signpost stands on the item's bottom edge, tall enough to read over props.
    height = max(c.rect.height, round(34 * c.zoom))
    post = pygame.Rect(c.rect.centerx - 2, c.rect.bottom - height, _line_w(c.zoom, 4), height)
    pygame.draw.rect(c.layer, BARK, post)
    _sign(replace(c, label=c.label or "?"), (c.rect.centerx, post.top))


def _draw_basket(c: _Canvas) -> None:
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
    pygame.draw.polygon(c.layer, c.look.outline, body, _line_w(c.zoom))
    # The handle arches over the opening; props fall through it, as art only.
    handle_h = round(w * 0.55)
    arc = pygame.Rect(c.rect.left + 3, top - handle_h, w - 6, 2 * handle_h)
    pygame.draw.arc(c.layer, c.look.outline, arc, 0.0, math.pi, _line_w(c.zoom, 4))
    pygame.draw.arc(c.layer, c.look.fill, arc.inflate(-3, -3), 0.15, math.pi - 0.15,
                    _line_w(c.zoom, 2))  # fmt: skip
    rim = pygame.Rect(c.rect.left - 4, top - round(5 * c.zoom), w + 8, round(9 * c.zoom))
    pygame.draw.rect(c.layer, lighten(c.look.fill, 0.15), rim, border_radius=4)
    pygame.draw.rect(c.layer, c.look.outline, rim, _line_w(c.zoom), border_radius=4)


def _draw_forge(c: _Canvas) -> None:
    stone = c.look
    chimney = pygame.Rect(0, 0, max(6, c.rect.width // 4), c.rect.height)
    chimney.bottomright = (c.rect.right - c.rect.width // 8, c.rect.bottom)
    pygame.draw.rect(c.layer, darken(stone.fill, 0.9), chimney)
    pygame.draw.rect(c.layer, stone.outline, chimney, _line_w(c.zoom))
    body = pygame.Rect(c.rect.left, c.rect.top + c.rect.height * 2 // 5, c.rect.width, 0)
    body.height = c.rect.bottom - body.top
    pygame.draw.rect(c.layer, stone.fill, body, border_top_left_radius=6, border_top_right_radius=6)
    pygame.draw.rect(
        c.layer, stone.outline, body, _line_w(c.zoom), border_top_left_radius=6,
        border_top_right_radius=6,
    )  # fmt: skip
    mouth = pygame.Rect(0, 0, body.width // 2, body.height // 2)
    mouth.midbottom = (body.centerx, body.bottom - body.height // 8)
    radius = mouth.width // 2
    pygame.draw.rect(c.layer, (60, 30, 24), mouth, border_top_left_radius=radius,
                     border_top_right_radius=radius)  # fmt: skip
    glow = mouth.inflate(-mouth.width // 3, -mouth.height // 3)
    glow.bottom = mouth.bottom - 2
    pygame.draw.ellipse(c.layer, (246, 140, 40), glow)
    pygame.draw.ellipse(c.layer, (255, 220, 110), glow.inflate(-glow.width // 2, -glow.height // 2))
    # On a post above the chimney, clear of the smith's name tag while they work.
    if c.label:
        sign_y = chimney.top - round(24 * c.zoom)
        post = pygame.Rect(0, 0, _line_w(c.zoom, 4), chimney.top - sign_y)
        post.midbottom = chimney.midtop
        pygame.draw.rect(c.layer, BARK, post)
        _sign(c, (chimney.centerx, sign_y))


def _draw_window(c: _Canvas) -> None:
    _window(c.layer, c.rect, c.look.outline, c.zoom)


def _draw_roof(c: _Canvas) -> None:
    roof = [c.rect.bottomleft, c.rect.midtop, c.rect.bottomright]
    pygame.draw.polygon(c.layer, ROOF, roof)
    pygame.draw.polygon(c.layer, ROOF_DARK, roof, _line_w(c.zoom, 3))


def _draw_block(c: _Canvas) -> None:
    pygame.draw.rect(c.layer, c.look.fill, c.rect)
    pygame.draw.rect(c.layer, c.look.outline, c.rect, _line_w(c.zoom))
    if c.rect.width > 30:
        pygame.draw.line(
            c.layer, lighten(c.look.fill, 0.2), c.rect.topleft, (c.rect.right - 1, c.rect.top), 1
        )
    _sign(c, c.rect.center)


def _draw_door(c: _Canvas) -> None:
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
        _line_w(c.zoom),
        border_top_left_radius=c.rect.width // 2,
        border_top_right_radius=c.rect.width // 2,
    )


_PAINTERS: dict[str, DecorPainter] = {
    "house": _draw_house,
    "well": _draw_well,
    "stall": _draw_stall,
    "market_stall": _draw_stall,
    "market": _draw_stall,
    "tree": _draw_tree,
    "fence": _draw_fence,
    "sign": _draw_sign,
    "basket": _draw_basket,
    "forge": _draw_forge,
    "window": _draw_window,
    "roof": _draw_roof,
    "door": _draw_door,
    "wall": _draw_block,
}
