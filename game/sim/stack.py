"""A stack of crates that notices when it has been knocked over."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from game.sim.events import StackToppled
from game.sim.props import Prop

logger = logging.getLogger(__name__)

DROP_FRACTION = 0.8
"""The stack has fallen once its top is this many crate heights below where it started."""


class CrateStack:
    """A column of props standing at ``x``.

    It counts as standing while some unheld prop of the column, still near ``x``, sits
    within ``DROP_FRACTION`` of a crate height of the original top.
    """

    def __init__(self, stack_id: str, props: Sequence[Prop], x: float) -> None:
        self.id = stack_id
        self.props = list(props)
        self.x = x
        self.height = props[0].kind.h
        self.top_y = max(p.body.position.y for p in props)
        self.standing = True

    def check(self, tick: int) -> StackToppled | None:
        """Return the toppling event on the tick the stack falls, else None."""
        if not self.standing:
            return None
        if self.top() < self.top_y - DROP_FRACTION * self.height:
            self.standing = False
            logger.debug("stack %s toppled at tick %d", self.id, tick)
            return StackToppled(tick, self.id, tuple(p.id for p in self.props))
        return None

    def top(self) -> float:
        """Height of the highest prop still in the column, or -inf if none is."""
        best = float("-inf")
        for prop in self.props:
            px, py = prop.body.position
            if not prop.held and abs(px - self.x) < prop.kind.w * 0.75 and py > best:
                best = py
        return best

    def rebuild(self, props: Sequence[Prop], x: float) -> None:
        """Stand again with ``props`` (after the player restacked them)."""
        if not props:
            return
        self.props = list(props)
        self.x = x
        self.top_y = max(p.body.position.y for p in props)
        self.standing = True
