"""Where a prop the player puts down goes, when the player means a basket or the stack.

Two kinds of help, both judged from where the player stands and faces:
- an apple put down over (or just beside) the basket it is wanted in goes in through the
  middle of the mouth, past anyone standing on the net;
- a crate put down over the top of the stack being rebuilt sits square on the top crate.

The crates that count towards the stack (``Column``) are also out of the player's way
while it is built: grabbing passes them over and a carried crate passes in front of them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import pymunk

from game.sim.categories import NET, NPC, PLAYER, PROP, PROP_FILTER, STACKED_FILTER, STATIC
from game.sim.level import Level
from game.sim.props import Prop

logger = logging.getLogger(__name__)

BASKET_REACH = 80.0
"""How far (in x) from the middle of a basket's mouth the player may stand to put into it."""
BASKET_HEIGHT = 60.0
"""The highest the player's feet may be over the rim (standing on the net or the street)."""
BASKET_DROP = 40.0
"""Height over the rim an apple put into a basket starts from: low enough that it is down
past the net before it can touch people again."""
TOP_REACH = 1.0
"""How far in x, in crate widths, the put-down point may be off the top crate to go on it."""
TOP_RISE = 4.0
"""How high over the top crate, in crate heights, a crate may be held and still go on it."""
TOP_GAP = 0.5
OVERLAP = 1.0
"""Contact deeper than this (world units) makes a spot taken; resting against it does not."""
BASKET_LANES = 2
"""Spots tried each side of the middle of a basket's mouth."""
BASKET_MARGIN = 8.0
"""How far inside the rim the outermost spot is kept."""
BASKET_DEPTH = 200.0
_SEE_ALL = pymunk.ShapeFilter()
_FILL_QUERY = pymunk.ShapeFilter(mask=STATIC | PROP)


@dataclass(frozen=True, slots=True)
class Opening:
    """The mouth of a container props of ``kind`` are delivered into (the basket)."""

    kind: str
    x: float
    rim: float
    half_w: float


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a put-down prop starts: position and angle; ``into`` if it drops into an
    opening, falling past people and without sideways speed."""

    x: float
    y: float
    angle: float = 0.0
    into: bool = False


def openings(level: Level) -> tuple[Opening, ...]:
    """The mouths of the level's delivery zones (the basket), one per ``deliver`` errand
    that names a kind of prop."""
    out: list[Opening] = []
    for spec in level.errands:
        if spec.kind == "deliver" and spec.zone and spec.prop_kind:
            zone = level.zone(spec.zone)
            out.append(Opening(spec.prop_kind, zone.x + zone.w / 2, zone.y + zone.h, zone.w / 2))
    return tuple(out)


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
    """Finds where the player's put-down goes: into an opening, onto the column, or None
    (set down in front as usual)."""

    def __init__(self, openings: Sequence[Opening]) -> None:
        self.openings = tuple(openings)
        self.column = Column()

    def spot(
        self,
        space: pymunk.Space,
        prop: Prop,
        stand: tuple[float, float],
        facing: int,
        drop: tuple[float, float],
    ) -> Placement | None:
        """Where ``prop`` goes, put down by a player with feet at ``stand`` facing ``facing``
        whose usual put-down point is ``drop``; None when no help applies or it is blocked."""
        return self._into(space, prop, stand, facing, drop) or self._on_top(space, prop, drop)

    def _into(
        self,
        space: pymunk.Space,
        prop: Prop,
        stand: tuple[float, float],
        facing: int,
        drop: tuple[float, float],
    ) -> Placement | None:
        x, feet = stand
        for opening in self.openings:
            if opening.kind != prop.kind.name:
                continue
            ahead = (opening.x - x) * facing
            if (
                abs(opening.x - x) > BASKET_REACH
                or ahead < -opening.half_w
                or not -10.0 <= feet - opening.rim <= BASKET_HEIGHT
            ):
                continue
            spot = _deepest(space, prop, opening, min(drop[1], opening.rim + BASKET_DROP))
            # People do not count: the prop falls past them.
            if not _taken(space, prop, spot, people=False):
                return spot
        return None

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


def _deepest(space: pymunk.Space, prop: Prop, opening: Opening, y: float) -> Placement:
    """Over the mouth of ``opening`` at height ``y``, the spot a prop dropped from falls
    furthest (so props fill the basket side by side instead of balancing in a tower);
    of equals, the one nearest the middle."""
    radius = max(prop.kind.w, prop.kind.h) / 2
    span = max(0.0, opening.half_w - radius - BASKET_MARGIN)
    best: tuple[float, float, float] | None = None
    for k in range(-BASKET_LANES, BASKET_LANES + 1):
        x = opening.x + span * k / BASKET_LANES
        hit = space.segment_query_first((x, y), (x, y - BASKET_DEPTH), radius, _FILL_QUERY)
        floor = hit.point.y if hit is not None else y - BASKET_DEPTH
        rank = (floor, abs(k), x)
        if best is None or rank < best:
            best = rank
    assert best is not None
    return Placement(best[2], y, into=True)


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
