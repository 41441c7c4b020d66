"""Game events: small immutable facts the world reports after each step.

Physics collision handlers and the villagers' state machines produce them; the dialogue
layer, the errands and the headless report consume them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Trigger(StrEnum):
    """Why a villager wants to say something."""

    GREET = "greet"
    FAREWELL = "farewell"
    HIT = "hit"
    NEAR_MISS = "near_miss"
    BUMPED = "bumped"
    TOPPLED = "toppled"
    ERRAND_OFFER = "errand_offer"
    ERRAND_DONE = "errand_done"
    ERRAND_HINT = "errand_hint"
    AMBIENT = "ambient"
    CHAT = "chat"


@dataclass(frozen=True, slots=True)
class PropHitNpc:
    """A prop struck a villager hard enough to matter."""

    tick: int
    prop_id: int
    npc_id: int
    impulse: float
    thrown_by_player: bool
    prop_kind: str = ""


@dataclass(frozen=True, slots=True)
class PropLandedNear:
    """A falling or thrown prop came to ground close to a villager without hitting them."""

    tick: int
    prop_id: int
    npc_id: int
    distance: float


@dataclass(frozen=True, slots=True)
class PlayerBumpedNpc:
    """The player walked or jumped into a villager."""

    tick: int
    npc_id: int
    impulse: float


@dataclass(frozen=True, slots=True)
class StackToppled:
    """A stack of props that was standing has fallen over."""

    tick: int
    stack_id: str
    prop_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class NpcKnockedDown:
    """A villager lost their footing."""

    tick: int
    npc_id: int


@dataclass(frozen=True, slots=True)
class NpcGotUp:
    """A villager is back on their feet."""

    tick: int
    npc_id: int


@dataclass(frozen=True, slots=True)
class NpcTransitioned:
    """A villager's state machine changed state; ``epoch`` is the new epoch."""

    tick: int
    npc_id: int
    old: str
    new: str
    epoch: int


@dataclass(frozen=True, slots=True)
class SpeechWanted:
    """A villager wants a line. The dialogue layer decides where the words come from.

    ``listener_id`` is who they speak to (the player or another villager), and ``refs``
    are the ids of entities the line is about, such as the crate that hit them.
    """

    tick: int
    npc_id: int
    trigger: Trigger
    listener_id: int | None
    refs: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ErrandProgressed:
    """An errand's tally changed."""

    tick: int
    errand_id: str
    progress: int
    goal: int


@dataclass(frozen=True, slots=True)
class ErrandCompleted:
    """An errand's goal was met, as judged by physics."""

    tick: int
    errand_id: str
    giver_id: int


@dataclass(frozen=True, slots=True)
class ActionStarted:
    """A villager began carrying out an action (``kind`` is an ``ActionKind`` value)."""

    tick: int
    npc_id: int
    kind: str
    target_id: int | None = None


@dataclass(frozen=True, slots=True)
class ActionEnded:
    """A villager's action ended: ``outcome`` is "done", "gave_up" or "interrupted"."""

    tick: int
    npc_id: int
    kind: str
    outcome: str
    reason: str = ""


GameEvent = (
    PropHitNpc
    | PropLandedNear
    | PlayerBumpedNpc
    | StackToppled
    | NpcKnockedDown
    | NpcGotUp
    | NpcTransitioned
    | SpeechWanted
    | ErrandProgressed
    | ErrandCompleted
    | ActionStarted
    | ActionEnded
)
