"""The states a villager's brain can be in, and the groups of them it asks about."""

from __future__ import annotations

from enum import StrEnum

from game.sim.orders import ActionKind


class NpcState(StrEnum):
    """The states a villager can be in."""

    IDLE = "idle"
    ROUTINE = "routine"
    WANDER = "wander"
    NOTICE = "notice"
    GREET = "greet"
    TALK = "talk"
    REACT = "react"
    FLEE = "flee"
    KNOCKED_DOWN = "knocked_down"
    RECOVER = "recover"
    FOLLOW = "follow"
    FETCH = "fetch"
    GUIDE = "guide"
    CALL = "call"
    TURN_AWAY = "turn_away"
    COME = "come"


CALM = (NpcState.IDLE, NpcState.ROUTINE, NpcState.WANDER)
DOWN = (NpcState.KNOCKED_DOWN, NpcState.RECOVER)
#: States that end a conversation: knocked over, running off, turning away.
ENDS_CHAT = (*DOWN, NpcState.FLEE, NpcState.TURN_AWAY)
#: The state each action is carried out in (running away is the brain's own flight).
ACTION_STATES: dict[ActionKind, NpcState] = {
    ActionKind.FOLLOW: NpcState.FOLLOW,
    ActionKind.FETCH: NpcState.FETCH,
    ActionKind.PUT: NpcState.FETCH,
    ActionKind.SHOW_WAY: NpcState.GUIDE,
    ActionKind.CALL: NpcState.CALL,
    ActionKind.TURN_AWAY: NpcState.TURN_AWAY,
    ActionKind.COME: NpcState.COME,
}
ACTING = frozenset(ACTION_STATES.values())
