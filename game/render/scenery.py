"""The level's still picture: ground, houses and zones, drawn once (the sky and the
hills behind are in ``backdrop.py``).

Nothing here changes while the level is loaded, so it is painted into large surfaces when
the renderer starts (and again only if the zoom or the window width changes). A frame then
costs three or four blits instead of hundreds of draw calls. The level layer is in level
pixel space: world (x, y) lands on pixel (x * zoom, (level.height - y) * zoom).

Decor and zone rectangles are read as (x, y) = bottom-left corner, with w and h growing
right and up, in world units.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable

import pygame

from game.render import decor as decor_art
from game.render.palette import (
    EARTH,
    EARTH_DARK,
    GROUND_MATERIALS,
    PEBBLE,
    TAG_BG,
    WHITE,
    ZONE_LINE,
    Rgb,
    lighten,
    material,
)
from game.render.text import TextCache
from game.sim.snapshot import DecorView, LevelView, StaticShapeView

logger = logging.getLogger(__name__)

#: Transparent colour of the pre-rendered layers. A colour key with RLE blits skips empty
#: runs, which measured faster here than per-pixel alpha for a mostly empty 1280x720 blit.
COLORKEY: Rgb = (255, 0, 255)

#: World units of earth shown under the lowest ground point, so the ground never sits on
#: the bottom edge of the screen.
EARTH_DEPTH = 160.0
ROOF_MATERIALS = frozenset({"thatch", "tile", "slate"})
#: Decor set into the ground; painted after it so the earth does not cover it.
SUNKEN_KINDS = frozenset({"basket"})

Point = tuple[float, float]


def new_layer(size: tuple[int, int]) -> pygame.Surface:
    """An empty colour-keyed surface; draw on it with solid colours only (no antialiasing)."""
    surface = pygame.Surface((max(1, size[0]), max(1, size[1])))
    surface.fill(COLORKEY)
    surface.set_colorkey(COLORKEY, pygame.RLEACCEL)
    return surface


def level_bottom(level: LevelView) -> float:
    """The lowest world y the camera may show: y = 0, or lower when the ground dips."""
    lowest = min(
        [0.0]
        + [p[1] - s.radius for s in level.statics for p in s.points]
        + [d.y for d in level.decor]
        + [z.y for z in level.zones]
    )
    return min(0.0, lowest - EARTH_DEPTH)


def layer_size(level: LevelView, zoom: float) -> tuple[int, int]:
    """Pixel size of a layer spanning the whole level, from ``level_bottom`` to the top."""
    return math.ceil(level.width * zoom), math.ceil((level.height - level_bottom(level)) * zoom)


def ground_reference(level: LevelView) -> float:
    """A typical height of the ground's top surface, where the hills stand."""
    ys = sorted(
        max(p[1] for p in s.points) + s.radius
        for s in level.statics
        if s.material in GROUND_MATERIALS and s.points
    )
    return ys[len(ys) // 2] if ys else level.height * 0.15


def build_level_layer(
    level: LevelView, zoom: float, text: TextCache, signs: list[pygame.Rect] | None = None
) -> pygame.Surface:
    """Paint decor, static geometry and zones into one level-sized colour-keyed surface.

    The rects of sign boards and zone plates are appended to ``signs`` when it is given.
    """
    size = layer_size(level, zoom)
    layer = new_layer(size)

    def to_px(p: Point) -> Point:
        return p[0] * zoom, (level.height - p[1]) * zoom

    # A zone names itself by its outline, so a house or basket inside it does not repeat
    # the name, and a signpost saying the same thing is left out: two plates with one
    # name read as a glitch, and a post at ground level hides behind whoever stands there.
    zone_labels = {z.label for z in level.zones}
    decor = [d for d in level.decor if not (d.kind == "sign" and d.label in zone_labels)]
    # Sunken items (a basket in the ground) paint after the ground so they show in it.
    sunken = [d for d in decor if d.kind in SUNKEN_KINDS]
    for item in [d for d in decor if d.kind not in SUNKEN_KINDS]:
        _draw_decor_item(layer, level, item, "" if item.label in zone_labels else item.label,
                         to_px, text, zoom, signs)  # fmt: skip
    for shape in level.statics:
        _draw_static(layer, shape, to_px, float(size[1]), zoom)
    for item in sunken:
        _draw_decor_item(layer, level, item, "" if item.label in zone_labels else item.label,
                         to_px, text, zoom, signs)  # fmt: skip
    ground = ground_reference(level)
    for zone in level.zones:
        top_left = to_px((zone.x, zone.y + zone.h))
        rect = pygame.Rect(
            round(top_left[0]), round(top_left[1]), round(zone.w * zoom), round(zone.h * zoom)
        )
        # A zone that reaches down into the ground is named in the earth below it: above
        # it, at walking height, villagers and their name tags would cover the plate. So
        # is a stack's zone: its plate above would sit at the head of a player on the stack.
        below = zone.y < ground - 20 or zone.stacked
        plate = _draw_zone(layer, rect, zone.label, text, below=below)
        if plate is not None and signs is not None:
            signs.append(plate)
    logger.debug("level layer %dx%d painted", *size)
    return layer


def _draw_decor_item(
    layer: pygame.Surface,
    level: LevelView,
    item: DecorView,
    label: str,
    to_px: Callable[[Point], Point],
    text: TextCache,
    zoom: float,
    signs: list[pygame.Rect] | None = None,
) -> None:
    top_left = to_px((item.x, item.y + item.h))
    rect = pygame.Rect(
        round(top_left[0]), round(top_left[1]), round(item.w * zoom), round(item.h * zoom)
    )
    roof = _roof_above(level, item.x, item.y + item.h, item.w)
    roof_px = None if roof is None else round(to_px((0.0, roof))[1])
    decor_art.draw_decor(layer, item.kind, rect, item.material, label, text, zoom, roof_px, signs)


def _roof_above(level: LevelView, x: float, top: float, w: float) -> float | None:
    """The underside of a static shape resting on (or just above) a decor item, if any.

    Levels may model roofs as collision shapes; the house then draws walls only, and the
    well's posts reach up to its roof.
    """
    best: float | None = None
    for shape in level.statics:
        if shape.material in GROUND_MATERIALS or not shape.points:
            continue
        xs = [p[0] for p in shape.points]
        low = min(p[1] for p in shape.points) - shape.radius
        covers = min(xs) <= x + w * 0.5 <= max(xs) and max(xs) - min(xs) >= w * 0.5
        if covers and top - 6 <= low <= top + 90 and (best is None or low < best):
            best = low
    return best


def _draw_static(
    layer: pygame.Surface,
    shape: StaticShapeView,
    to_px: Callable[[Point], Point],
    bottom_px: float,
    zoom: float,
) -> None:
    pts: list[Point] = [to_px(p) for p in shape.points]
    if not pts:
        return
    look = material(shape.material)
    radius = max(1.0, shape.radius * zoom)
    ground = shape.material in GROUND_MATERIALS
    if shape.kind == "segment" and len(pts) >= 2:
        (ax, ay), (bx, by) = pts[0], pts[1]
        if ground:
            top_a, top_b = (ax, ay - radius), (bx, by - radius)
            pygame.draw.polygon(layer, EARTH, [top_a, top_b, (bx, bottom_px), (ax, bottom_px)])
            _pebbles(layer, top_a, top_b, bottom_px, zoom)
            _grass_edge(layer, top_a, top_b, look.fill, look.outline, zoom)
            return
        quad = _thick_segment((ax, ay), (bx, by), radius)
        pygame.draw.polygon(layer, look.fill, quad)
        pygame.draw.polygon(layer, look.outline, quad, max(1, round(2 * zoom)))
        for end in ((ax, ay), (bx, by)):
            pygame.draw.circle(layer, look.fill, end, radius)
        return
    if len(pts) < 3:
        return
    if ground:
        pygame.draw.polygon(layer, EARTH, pts)
        pygame.draw.polygon(layer, EARTH_DARK, pts, max(1, round(2 * zoom)))
        for a, b in _upward_edges(pts):
            _grass_edge(layer, a, b, look.fill, look.outline, zoom)
        return
    pygame.draw.polygon(layer, look.fill, pts)
    if shape.material in ROOF_MATERIALS:
        _roof_rows(layer, pts, look.detail, zoom, bricks=shape.material != "thatch")
    pygame.draw.polygon(layer, look.outline, pts, max(1, round(2 * zoom)))


def _roof_rows(
    layer: pygame.Surface, pts: list[Point], color: Rgb, zoom: float, *, bricks: bool
) -> None:
    """Rows of tiles or thatch across a convex roof polygon."""
    top, bottom = min(p[1] for p in pts), max(p[1] for p in pts)
    step = max(4.0, 8 * zoom)
    y, row = top + step, 0
    while y < bottom - 1:
        span = _hspan(pts, y)
        if span is not None:
            pygame.draw.line(layer, color, (span[0] + 1, y), (span[1] - 1, y), 1)
            if bricks:
                x = span[0] + (row % 2 + 1) * step
                while x < span[1] - 2:
                    pygame.draw.line(layer, color, (x, y - step + 2), (x, y - 1), 1)
                    x += 2 * step
        y += step
        row += 1


def _hspan(pts: list[Point], y: float) -> tuple[float, float] | None:
    """Where the horizontal line at ``y`` enters and leaves a convex polygon."""
    xs: list[float] = []
    for i, (ax, ay) in enumerate(pts):
        bx, by = pts[(i + 1) % len(pts)]
        if (ay <= y < by) or (by <= y < ay):
            xs.append(ax + (y - ay) * (bx - ax) / (by - ay))
    return (min(xs), max(xs)) if len(xs) >= 2 else None


def _grass_edge(
    layer: pygame.Surface, a: Point, b: Point, fill: Rgb, dark: Rgb, zoom: float
) -> None:
    """A grass band along a ground edge, with round joints so slopes meet without gaps."""
    band = max(4, round(12 * zoom))
    down = band / 2
    a2, b2 = (a[0], a[1] + down), (b[0], b[1] + down)
    pygame.draw.line(layer, fill, a2, b2, band)
    pygame.draw.line(layer, dark, (a2[0], a2[1] + down), (b2[0], b2[1] + down), max(1, band // 4))
    for p in (a2, b2):
        pygame.draw.circle(layer, fill, p, down)
    pygame.draw.line(layer, lighten(fill, 0.25), a, b, max(1, round(2 * zoom)))


def _pebbles(layer: pygame.Surface, a: Point, b: Point, bottom_px: float, zoom: float) -> None:
    """Scatter stones in the earth under a ground edge; seeded by position, so stable."""
    rng = random.Random(int(a[0] * 7919 + a[1]))
    span = b[0] - a[0]
    for _ in range(int(abs(span) / (28 * zoom))):
        t = rng.random()
        x = a[0] + span * t
        top = a[1] + (b[1] - a[1]) * t + 22 * zoom
        if top >= bottom_px - 6:
            continue
        y = top + rng.random() * (bottom_px - top - 6)
        w, h = (4 + rng.random() * 8) * zoom, (3 + rng.random() * 4) * zoom
        pygame.draw.ellipse(layer, EARTH_DARK if rng.random() < 0.7 else PEBBLE, (x, y, w, h))


def _upward_edges(pts: list[Point]) -> list[tuple[Point, Point]]:
    """Edges of a convex polygon (screen space, y down) whose outward normal points up."""
    cx = sum(p[0] for p in pts) / len(pts)
    cy = sum(p[1] for p in pts) / len(pts)
    edges: list[tuple[Point, Point]] = []
    for i, a in enumerate(pts):
        b = pts[(i + 1) % len(pts)]
        nx, ny = b[1] - a[1], a[0] - b[0]
        mx, my = (a[0] + b[0]) / 2 - cx, (a[1] + b[1]) / 2 - cy
        if nx * mx + ny * my < 0:
            nx, ny = -nx, -ny
        length = math.hypot(nx, ny) or 1.0
        if ny / length < -0.5:
            edges.append((a, b))
    return edges


def _thick_segment(a: Point, b: Point, radius: float) -> list[Point]:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = math.hypot(dx, dy) or 1.0
    nx, ny = -dy / length * radius, dx / length * radius
    return [
        (a[0] + nx, a[1] + ny),
        (b[0] + nx, b[1] + ny),
        (b[0] - nx, b[1] - ny),
        (a[0] - nx, a[1] - ny),
    ]


def _draw_zone(
    layer: pygame.Surface, rect: pygame.Rect, label: str, text: TextCache, *, below: bool = False
) -> pygame.Rect | None:
    """Outline a zone and name it on a plate; return the plate's rect, if any."""
    dashed_rect(layer, ZONE_LINE, rect, dash=10, gap=6, width=2)
    if not label:
        return None
    if label:
        glyphs = text.render(label, 14, WHITE, bold=True)
        plate = glyphs.get_rect(midbottom=(rect.centerx, rect.top - 4))
        if below:
            plate.midtop = (rect.centerx, rect.bottom + 6)
        plate = plate.inflate(10, 4)
        # An opaque plate: antialiased text over the colour key would leave pink fringes.
        pygame.draw.rect(layer, TAG_BG, plate, border_radius=4)
        layer.blit(glyphs, glyphs.get_rect(center=plate.center))
    return plate


def dashed_rect(
    surface: pygame.Surface, color: Rgb, rect: pygame.Rect, dash: int, gap: int, width: int
) -> None:
    """Outline ``rect`` with dashes of ``dash`` pixels separated by ``gap``."""
    corners = [rect.topleft, rect.topright, rect.bottomright, rect.bottomleft]
    for i, (ax, ay) in enumerate(corners):
        bx, by = corners[(i + 1) % 4]
        length = math.hypot(bx - ax, by - ay)
        if length == 0:
            continue
        ux, uy = (bx - ax) / length, (by - ay) / length
        pos = 0.0
        while pos < length:
            end = min(pos + dash, length)
            pygame.draw.line(
                surface,
                color,
                (ax + ux * pos, ay + uy * pos),
                (ax + ux * end, ay + uy * end),
                width,
            )
            pos = end + gap
