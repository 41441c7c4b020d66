"""Behind the level: the sky's gradient and the parallax hills (the far ones with clouds).

Painted once, like the level layer, and scrolled at a fraction of the camera's speed.
"""

from __future__ import annotations

import math

import pygame

from game.render.palette import (
    GROUND_MATERIALS,
    HILLS_FAR,
    HILLS_NEAR,
    SKY_BOTTOM,
    SKY_TOP,
    lighten,
    mix,
)
from game.render.scenery import ground_reference, new_layer
from game.sim.snapshot import LevelView

FAR_PARALLAX = 0.3
NEAR_PARALLAX = 0.55

Point = tuple[float, float]


def build_sky(size: tuple[int, int]) -> pygame.Surface:
    """A vertical gradient the size of the screen, opaque, so its blit is a plain copy."""
    width, height = max(1, size[0]), max(1, size[1])
    sky = pygame.Surface((width, height))
    for row in range(height):
        pygame.draw.line(sky, mix(SKY_TOP, SKY_BOTTOM, row / height), (0, row), (width, row))
    return sky


def build_hills(
    level: LevelView, zoom: float, viewport_width: int, parallax: float, near: bool
) -> tuple[pygame.Surface, int]:
    """One parallax layer: rolling hills (and, on the far layer, clouds).

    The layer is wide enough to cover the screen for every camera position when it scrolls
    at ``parallax`` times the camera's speed. Vertically it is only the band that has
    something in it, from the clouds (or hilltops) down to just below the lowest ground;
    the second value is that band's top in level-layer pixels, where it is to be blitted.
    """
    width = int(level.width * zoom * parallax) + viewport_width + 2
    ground = (level.height - ground_reference(level)) * zoom
    lowest = min(
        (p[1] for s in level.statics if s.material in GROUND_MATERIALS for p in s.points),
        default=0.0,
    )
    bottom = math.ceil((level.height - lowest) * zoom) + 12
    top = max(0, math.floor(ground - (300 if near else 700) * zoom))
    height = max(1, bottom - top)
    layer = new_layer((width, height))
    base = ground - top
    if near:
        color, rise, amp = HILLS_NEAR, 90.0, 45.0
        waves = ((0.0041, 1.0, 0.3), (0.011, 0.45, 2.1), (0.0023, 0.6, 4.0))
    else:
        color, rise, amp = HILLS_FAR, 190.0, 70.0
        waves = ((0.0027, 1.0, 1.2), (0.0071, 0.35, 0.4), (0.0013, 0.7, 2.9))
        _draw_clouds(layer, zoom, base)
    points: list[Point] = [(0.0, float(height))]
    for px in range(0, width + 8, 8):
        wx = px / zoom
        wave = sum(weight * math.sin(wx * freq + phase) for freq, weight, phase in waves)
        points.append((float(px), base - (rise + amp * wave / 2.05) * zoom))
    points.append((float(width), float(height)))
    pygame.draw.polygon(layer, color, points)
    if near:
        # A few round trees on the near hills give the parallax something to read by.
        for i, (tx, ty) in enumerate(points[1:-1:9]):
            if i % 3 != 1:
                r = (10 + (i * 7) % 8) * zoom
                pygame.draw.circle(layer, mix(color, (60, 110, 60), 0.5), (tx, ty - r * 0.6), r)
    return layer, top


def _draw_clouds(layer: pygame.Surface, zoom: float, base: float) -> None:
    width = layer.get_width()
    for i, cx in enumerate(range(180, width, 430)):
        cy = base - (420 + (i * 137) % 220) * zoom
        s = (0.8 + (i % 3) * 0.25) * zoom
        for dx, dy, r in ((-38, 6, 24), (-12, -8, 32), (22, 0, 28), (46, 8, 18)):
            pygame.draw.circle(layer, lighten(SKY_BOTTOM, 0.6), (cx + dx * s, cy + dy * s), r * s)
