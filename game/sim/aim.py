"""Where a throw or a drop would go: a ballistic path traced through the level.

The preview steps the same gravity and damping that pymunk applies to a free body, and
stops where the path first meets something solid, so the dotted arc on screen ends
where the prop would land (spin and bounces aside).
"""

from __future__ import annotations

import pymunk

from game.sim.categories import NPC, PROP, STATIC
from game.sim.player import Player
from game.sim.snapshot import AimView, Vec

PATH_FILTER = pymunk.ShapeFilter(mask=STATIC | NPC | PROP)
INTO_PATH_FILTER = pymunk.ShapeFilter(mask=STATIC | PROP)
"""A prop put into a basket falls past people."""
MAX_STEPS = 150
SAMPLE_EVERY = 3


def trace(
    space: pymunk.Space,
    start: Vec,
    velocity: Vec,
    radius: float,
    dt: float,
    solid: pymunk.ShapeFilter = PATH_FILTER,
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
        hit = space.segment_query_first((x, y), (nx, ny), radius, solid)
        if hit is not None:
            points.append((hit.point.x, hit.point.y))
            break
        x, y = nx, ny
        if step % SAMPLE_EVERY == 0:
            points.append((x, y))
    return tuple(points)


def aim_view(player: Player, space: pymunk.Space, dt: float) -> AimView | None:
    """The carried prop's path: the charged throw while throw is held, else the drop."""
    prop = player.carrying
    if prop is None:
        return None
    radius = min(prop.kind.w, prop.kind.h) / 2
    solid = PATH_FILTER
    if player.charge_ticks > 0:
        tvx, tvy = player.throw_velocity(prop)
        pvx, pvy = player.body.velocity
        sx, sy = prop.body.position
        start, velocity = (sx, sy), (tvx + pvx * 0.5, tvy + max(pvy, 0.0) * 0.5)
    else:
        spot = player.put_down_spot(space, prop)
        start, velocity = (spot.x, spot.y), (0.0, 0.0)
        if spot.into:
            solid = INTO_PATH_FILTER
    return AimView(trace(space, start, velocity, radius, dt, solid), player.charge)
