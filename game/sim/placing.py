"""Where a prop the player puts down goes, when the player means the stack.

A crate put down over the top of the stack being rebuilt sits square on the top crate.
The crates that count towards the stack (``Column``) are also out of the player's way
while it is built: grabbing passes them over and a carried crate passes in front of them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pymunk

from game.sim.categories import NET, NPC, PLAYER, PROP_FILTER, STACKED_FILTER
from game.sim.props import Prop

logger = logging.getLogger(__name__)

TOP_REACH = 1.0
"""How far in x, in crate widths, the put-down point may be off the top crate to go on it."""
TOP_RISE = 4.0
"""How high over the top crate, in crate heights, a crate may be held and still go on it."""
TOP_GAP = 0.5
OVERLAP = 1.0
"""Contact deeper than this (world units) makes a spot taken; resting against it does not."""
_SEE_ALL = pymunk.ShapeFilter()


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a put-down prop starts: position and angle."""

    x: float
    y: float
    angle: float = 0.0


class Column:
    """The crates that count towards the stack being rebuilt, updated once a tick."""

    def __init__(self) -> None:
        self.crates: tuple[Prop, ...] = ()

    def update(self, crates: Sequence[Prop]) -> None:
        """Take ``crates`` (from the ground up) as the column; set their filters to match.

        A crate only turns stacked from the plain prop filter: one just let go of keeps
        its own until it rejoins, and turns stacked on a later tick.
        """
        new = tuple(crates)
        for prop in self.crates:
            if prop not in new and prop.shape.filter == STACKED_FILTER:
                prop.shape.filter = PROP_FILTER
        for prop in new:
            if prop.shape.filter == PROP_FILTER:
                prop.shape.filter = STACKED_FILTER
        self.crates = new

    def holds(self, prop: Prop) -> bool:
        """Whether ``prop`` counts towards the stack."""
        return prop in self.crates

    def has_shape(self, shape: pymunk.Shape | None) -> bool:
        """Whether ``shape`` belongs to a crate counting towards the stack."""
        return any(prop.shape is shape for prop in self.crates)

    @property
    def top(self) -> Prop | None:
        """The highest crate of the column, or None while there is none."""
        return self.crates[-1] if self.crates else None


class Placing:
    """Finds where the player's put-down goes: onto the column, or None (set down in
    front as usual)."""

    def __init__(self) -> None:
        self.column = Column()

    def spot(self, space: pymunk.Space, prop: Prop, drop: tuple[float, float]) -> Placement | None:
        """Where ``prop`` goes, put down by a player whose usual put-down point is
        ``drop``; None when no help applies or the spot is taken."""
        return self._on_top(space, prop, drop)

    def _on_top(
        self, space: pymunk.Space, prop: Prop, drop: tuple[float, float]
    ) -> Placement | None:
        top = self.column.top
        if top is None or prop.kind.shape != "box" or top.kind.shape != "box":
            return None
        tx, ty = top.body.position
        x, y = drop
        if abs(x - tx) > top.kind.w * TOP_REACH:
            return None
        # The crate's middle must be up to the top crate's underside, and not far over it.
        if not ty - top.kind.h / 2 <= y <= ty + top.kind.h * TOP_RISE:
            return None
        quarter = math.pi / 2
        tilt = top.body.angle - round(top.body.angle / quarter) * quarter
        up = (top.kind.h + prop.kind.h) / 2 + TOP_GAP
        spot = Placement(tx - math.sin(tilt) * up, ty + math.cos(tilt) * up, tilt)
        if _taken(space, prop, spot, people=True):
            return None
        return spot

    def clear_of_column(self, prop: Prop, from_x: float) -> None:
        """Move a prop let go of inside the column's crates out to the side of ``from_x``.

        A carried crate passes in front of the column; let go there, it would otherwise
        turn solid inside it and burst it apart.
        """
        shape, space = prop.shape, prop.body.space
        if not self.column.crates or space is None:
            return
        was = shape.filter
        shape.filter = _SEE_ALL
        shape.cache_bb()
        hits = space.shape_query(shape)
        shape.filter = was
        by_shape = {crate.shape: crate for crate in self.column.crates}
        for hit in hits:
            crate = by_shape.get(hit.shape) if hit.shape is not None else None
            points = hit.contact_point_set.points
            if crate is None or not points or min(p.distance for p in points) > -OVERLAP:
                continue
            cx = crate.body.position.x
            side = 1.0 if from_x >= cx else -1.0
            reach = (crate.kind.w + prop.kind.w) / 2 + TOP_GAP
            prop.body.position = (cx + side * reach, prop.body.position.y)
            shape.cache_bb()
            return


def _taken(space: pymunk.Space, prop: Prop, spot: Placement, people: bool) -> bool:
    """Whether ``prop`` at ``spot`` would sit inside something solid (people only if
    ``people``; never netting, which props fall through)."""
    body, shape = prop.body, prop.shape
    was, was_angle, was_filter = body.position, body.angle, shape.filter
    body.position, body.angle = (spot.x, spot.y), spot.angle
    shape.filter = _SEE_ALL
    shape.cache_bb()
    skip = NET | (0 if people else PLAYER | NPC)
    taken = False
    for hit in space.shape_query(shape):
        other = hit.shape
        if other is None or other.sensor or other.filter.categories & skip:
            continue
        points = hit.contact_point_set.points
        if points and min(p.distance for p in points) < -OVERLAP:
            taken = True
            break
    body.position, body.angle, shape.filter = was, was_angle, was_filter
    shape.cache_bb()
    return taken
