"""Where a throw or a drop would go: a ballistic path traced through the level.

The preview steps the same gravity and damping that pymunk applies to a free body, and
stops where the path first meets something solid, so the dotted arc on screen ends
where the prop would land (spin and bounces aside).
"""

from __future__ import annotations

import pymunk

from game.sim.categories import NPC, PROP, STATIC
from game.sim.snapshot import Vec

PATH_FILTER = pymunk.ShapeFilter(mask=STATIC | NPC | PROP)
MAX_STEPS = 150
SAMPLE_EVERY = 3


def trace(
    space: pymunk.Space, start: Vec, velocity: Vec, radius: float, dt: float
) -> tuple[Vec, ...]:
    """Points along the path of a body launched from ``start`` at ``velocity``.

    One point every few ticks, ending at the first contact with anything solid (a prop
    being carried is not solid to this query, since it is not in the ``PROP`` category).
    """
    gx, gy = space.gravity
    keep = space.damping**dt
    x, y = start
    vx, vy = velocity
    points: list[Vec] = [(x, y)]
    for step in range(1, MAX_STEPS + 1):
        vx, vy = vx * keep + gx * dt, vy * keep + gy * dt
        nx, ny = x + vx * dt, y + vy * dt
        hit = space.segment_query_first((x, y), (nx, ny), radius, PATH_FILTER)
        if hit is not None:
            points.append((hit.point.x, hit.point.y))
            break
        x, y = nx, ny
        if step % SAMPLE_EVERY == 0:
            points.append((x, y))
    return tuple(points)
