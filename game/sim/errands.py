"""Errands villagers give the player, judged only by physics.

Three kinds:
- ``deliver``: N props of a kind resting inside a sensor zone (apples in the basket);
- ``restack``: N crates resting upright, one on another, in a column in the stack zone;
  it opens only once the original stack has fallen, and its tally is the column's height;
- ``fetch``: a tagged prop brought within a radius of the giver (the ball to the child).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from game.sim.events import ErrandCompleted, ErrandProgressed, GameEvent
from game.sim.level import ErrandSpec, ZoneSpec
from game.sim.props import Prop
from game.sim.snapshot import ErrandView, Vec

logger = logging.getLogger(__name__)

REST_SPEED = 40.0
"""A prop moving slower than this counts as placed rather than passing through."""
COLUMN_TOLERANCE = 8.0
"""How far (world units) a crate may sit off the height where it would rest on the one below."""
COLUMN_OFFSET = 0.35
"""How far sideways, in crate widths, a crate may sit off the one below and still count."""
UPRIGHT_TILT = 0.2
"""Radians off square a crate may be tilted and still count as stacked."""


@dataclass(slots=True)
class Errand:
    """One errand's live tally."""

    spec: ErrandSpec
    giver_id: int
    progress: int = 0
    done: bool = False
    open: bool = True

    def view(self) -> ErrandView:
        """The immutable view for snapshots."""
        return ErrandView(
            self.spec.id,
            self.giver_id,
            self.spec.title,
            self.progress,
            self.spec.goal,
            self.done,
            self.open,
        )


ZoneProps = Callable[[str], Sequence[Prop]]
TaggedProp = Callable[[str], Prop | None]
Position = Callable[[int], Vec | None]


class ErrandBoard:
    """All errands in the world, evaluated from zone occupancy and positions."""

    def __init__(self, errands: Sequence[Errand], zones: Mapping[str, ZoneSpec]) -> None:
        self.errands = list(errands)
        self._zones = dict(zones)

    def get(self, errand_id: str) -> Errand | None:
        """The errand called ``errand_id``, if any."""
        for errand in self.errands:
            if errand.spec.id == errand_id:
                return errand
        return None

    def views(self) -> tuple[ErrandView, ...]:
        """Views of every errand, in level order."""
        return tuple(e.view() for e in self.errands)

    def evaluate(
        self, tick: int, zone_props: ZoneProps, tagged: TaggedProp, position: Position
    ) -> list[GameEvent]:
        """Recount every open errand; report tallies that changed and goals reached."""
        events: list[GameEvent] = []
        for errand in self.errands:
            if errand.done or not errand.open:
                continue
            spec = errand.spec
            if spec.kind == "deliver":
                progress = min(len(self._resting(zone_props(spec.zone), spec.prop_kind)), spec.goal)
            elif spec.kind == "restack":
                progress = self._stack_progress(spec, zone_props(spec.zone))
            else:
                progress = self._fetch_progress(spec, errand.giver_id, tagged, position)
            if progress != errand.progress:
                errand.progress = progress
                events.append(ErrandProgressed(tick, spec.id, progress, spec.goal))
            if progress >= spec.goal:
                errand.done = True
                events.append(ErrandCompleted(tick, spec.id, errand.giver_id))
                logger.info("errand %s completed at tick %d", spec.id, tick)
        return events

    @staticmethod
    def _resting(props: Sequence[Prop], kind: str) -> list[Prop]:
        out: list[Prop] = []
        for prop in props:
            if prop.held or (kind and prop.kind.name != kind):
                continue
            if prop.body.velocity.length < REST_SPEED:
                out.append(prop)
        return out

    def _stack_progress(self, spec: ErrandSpec, props: Sequence[Prop]) -> int:
        """How many crates stand in the tallest upright column on the stack's spot."""
        return min(len(self._column(spec, props)), spec.goal)

    def _column(self, spec: ErrandSpec, props: Sequence[Prop], resting: bool = True) -> list[Prop]:
        """The crates of the tallest upright column on the stack's spot, from the ground up.

        Of columns equally tall, the one nearest the middle of the spot (then the lowest
        base id), so the column being built is always one and the same. Unless
        ``resting``, crates count wherever they are, moving or not.
        """
        if resting:
            props = self._resting(props, spec.prop_kind)
        else:
            props = [p for p in props if not p.held and p.kind.name == spec.prop_kind]
        placed = sorted(props, key=lambda p: p.body.position.y)
        zone = self._zones[spec.zone]
        middle = zone.x + zone.w / 2
        best: list[Prop] = []
        best_rank = (0, 0.0, 0)
        for base in placed:
            bx, by = base.body.position
            if not _upright(base) or by - base.kind.h / 2 > zone.y + COLUMN_TOLERANCE:
                continue
            column, x, top = [base], bx, by
            for prop in placed:
                px, py = prop.body.position
                h = prop.kind.h
                if (
                    _upright(prop)
                    and abs(py - (top + h)) < COLUMN_TOLERANCE
                    and abs(px - x) < h * COLUMN_OFFSET
                ):
                    column.append(prop)
                    x, top = px, py
            rank = (len(column), -abs(bx - middle), -base.id)
            if rank > best_rank:
                best, best_rank = column, rank
        return best

    def building(self, zone_props: ZoneProps) -> tuple[Prop, ...]:
        """The crates stacked towards an open restack errand now, from the ground up.

        Where they stand, not whether they have come to rest: a column nudged stays the
        column while it sways.
        """
        for errand in self.errands:
            spec = errand.spec
            if spec.kind == "restack" and errand.open and not errand.done:
                return tuple(self._column(spec, zone_props(spec.zone), resting=False))
        return ()

    @staticmethod
    def _fetch_progress(
        spec: ErrandSpec, giver_id: int, tagged: TaggedProp, position: Position
    ) -> int:
        prop = tagged(spec.prop_tag)
        giver = position(giver_id)
        if prop is None or giver is None or prop.held:
            return 0
        px, py = prop.body.position
        gx, gy = giver
        near = (px - gx) ** 2 + (py - gy) ** 2 <= spec.radius * spec.radius
        return 1 if near and prop.body.velocity.length < REST_SPEED * 4 else 0


def _upright(prop: Prop) -> bool:
    """Whether a box sits square (a quarter turn counts as square), within ``UPRIGHT_TILT``."""
    quarter = math.pi / 2
    angle = prop.body.angle % quarter
    return min(angle, quarter - angle) < UPRIGHT_TILT
