"""The orders a villager's brain can carry out, as plain data (no physics here).

``game.sim.actions`` steers the body through them; ``game.decisions`` chooses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Outcome = Literal["done", "gave_up", "interrupted"]


class ActionKind(StrEnum):
    """What a villager can do about what they heard or what happened."""

    FOLLOW = "follow"
    FETCH = "fetch"
    PUT = "put"
    SHOW_WAY = "show_way"
    CALL = "call"
    TURN_AWAY = "turn_away"
    RUN_AWAY = "run_away"
    CARRY_ON = "carry_on"
    COME = "come"
    """Answering another villager's call: walk over to the traveller."""


@dataclass(frozen=True, slots=True)
class Order:
    """One action to carry out: for fetch and put the prop, for show the way and put the
    spot to walk to, for call the villager called (and for come, nobody)."""

    kind: ActionKind
    prop_id: int | None = None
    place_x: float | None = None
    other_id: int | None = None


#: Each action's time limit in ticks; past it the villager gives up (or, for those that
#: simply last a while, is done).
ACTION_TICKS: Mapping[ActionKind, int] = {
    ActionKind.FOLLOW: 900,
    ActionKind.FETCH: 1500,
    ActionKind.PUT: 1500,
    ActionKind.SHOW_WAY: 1800,
    ActionKind.CALL: 75,
    ActionKind.TURN_AWAY: 150,
    ActionKind.RUN_AWAY: 180,
    ActionKind.COME: 900,
}
#: Actions that are done, not given up, when their time runs out.
LASTING = frozenset({ActionKind.FOLLOW, ActionKind.CALL, ActionKind.TURN_AWAY})
