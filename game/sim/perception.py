"""What villagers can see: line of sight against static geometry and who is nearby.

Sight rays only test static shapes, so a crate never hides the player but a wall or a
roof does. Neighbour lookups go through an x-sorted index instead of comparing every
pair of villagers, which keeps a crowd of sixty cheap.
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Iterable

import pymunk

from game.sim.categories import SIGHT_FILTER
from game.sim.snapshot import Vec

logger = logging.getLogger(__name__)

EYE_HEIGHT = 20.0
"""Eyes sit this far above a villager's centre."""


def line_of_sight(space: pymunk.Space, eye: Vec, target: Vec) -> bool:
    """Whether nothing static lies on the straight line from ``eye`` to ``target``."""
    return space.segment_query_first(eye, target, 0.0, SIGHT_FILTER) is None


class XIndex:
    """Entities sorted by x, rebuilt when positions change, for cheap radius lookups."""

    def __init__(self) -> None:
        self._xs: list[float] = []
        self._entries: list[tuple[float, int, float]] = []

    def rebuild(self, entries: Iterable[tuple[float, int, float]]) -> None:
        """Replace the contents with ``(x, id, y)`` triples."""
        self._entries = sorted(entries)
        self._xs = [e[0] for e in self._entries]

    def nearest(
        self, x: float, y: float, radius: float, exclude: int = -1
    ) -> tuple[int, float] | None:
        """The closest entity within ``radius`` of (x, y) other than ``exclude``, with its distance.

        Ties are broken by id so the answer never depends on insertion order.
        """
        lo = bisect.bisect_left(self._xs, x - radius)
        hi = bisect.bisect_right(self._xs, x + radius)
        best: tuple[float, int] | None = None
        r2 = radius * radius
        for ex, eid, ey in self._entries[lo:hi]:
            if eid == exclude:
                continue
            d2 = (ex - x) ** 2 + (ey - y) ** 2
            if d2 <= r2 and (best is None or (d2, eid) < best):
                best = (d2, eid)
        if best is None:
            return None
        return best[1], best[0] ** 0.5

    def within(self, x: float, radius: float) -> list[int]:
        """Ids whose x lies within ``radius`` of ``x``, in x order."""
        lo = bisect.bisect_left(self._xs, x - radius)
        hi = bisect.bisect_right(self._xs, x + radius)
        return [e[1] for e in self._entries[lo:hi]]
