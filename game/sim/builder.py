"""Turning level data into pymunk objects: the space, static geometry and sensor zones."""

from __future__ import annotations

import logging

import pymunk

from game.sim.categories import (
    NET_FILTER,
    PROP,
    STATIC,
    STATIC_FILTER,
    ZONE_FILTER,
    CollisionType,
)
from game.sim.level import Level, ZoneSpec

logger = logging.getLogger(__name__)

ITERATIONS = 10
COLLISION_SLOP = 0.5
DAMPING = 0.8
"""Fraction of velocity kept per second; it stands in for rolling resistance and air drag."""
SLEEP_TIME = 0.5
"""Seconds of stillness before a body sleeps; resting props then cost nothing to step."""
FREE_SPOT_TRIES = 60
FREE_SPOT_STEP = 12.0
NET_MATERIAL = "net"


def make_space(level: Level) -> pymunk.Space:
    """An empty space with the level's gravity and the solver settings the game uses."""
    space = pymunk.Space()
    space.gravity = level.gravity
    space.iterations = ITERATIONS
    space.collision_slop = COLLISION_SLOP
    space.sleep_time_threshold = SLEEP_TIME
    space.damping = DAMPING
    return space


def add_statics(space: pymunk.Space, level: Level) -> list[pymunk.Shape]:
    """Add the ground, boundary walls and the level's static shapes."""
    shapes: list[pymunk.Shape] = []
    for spec in level.all_statics():
        shape: pymunk.Shape
        if spec.kind == "segment":
            shape = pymunk.Segment(space.static_body, spec.points[0], spec.points[1], spec.radius)
        else:
            shape = pymunk.Poly(space.static_body, list(spec.points), radius=spec.radius)
        shape.friction = 0.9
        shape.elasticity = 0.1
        # Netting holds people up and lets props drop through (the basket's mouth).
        shape.filter = NET_FILTER if spec.material == NET_MATERIAL else STATIC_FILTER
        shape.collision_type = CollisionType.STATIC
        shapes.append(shape)
    space.add(*shapes)
    return shapes


def add_zone(space: pymunk.Space, zone: ZoneSpec) -> pymunk.Shape:
    """Add a sensor rectangle for ``zone``; it reports props entering and leaving."""
    corners = [
        (zone.x, zone.y),
        (zone.x + zone.w, zone.y),
        (zone.x + zone.w, zone.y + zone.h),
        (zone.x, zone.y + zone.h),
    ]
    shape = pymunk.Poly(space.static_body, corners)
    shape.sensor = True
    shape.filter = ZONE_FILTER
    shape.collision_type = CollisionType.ZONE
    space.add(shape)
    return shape


def free_height(space: pymunk.Space, x: float, y: float, size: float) -> float:
    """The lowest height from ``y`` up where a prop of ``size`` overlaps nothing solid."""
    query = pymunk.ShapeFilter(mask=STATIC | PROP)
    for _ in range(FREE_SPOT_TRIES):
        if space.point_query_nearest((x, y), size / 2 + 1.0, query) is None:
            return y
        y += FREE_SPOT_STEP
    return y
