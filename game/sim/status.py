"""Read-only answers about live entities, for checking lines against the world."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True, slots=True)
class NpcStatus:
    """A villager as it is this tick.

    ``spec_id`` is the cast key of the persona the villager speaks with (generated
    crowd villagers share the persona of the cast member they were made from).
    ``would_greet`` says whether they would greet the player who walked up now;
    ``action`` is the action they are carrying out (an ``ActionKind`` value, or "").
    """

    id: int
    name: str
    role: str
    x: float
    y: float
    vx: float
    vy: float
    state: str
    epoch: int
    conscious: bool
    can_talk: bool
    spec_id: str = ""
    would_greet: bool = False
    action: str = ""


class PlayerStatus(NamedTuple):
    """The player as it is this tick; ``carrying`` is a prop id or None."""

    id: int
    x: float
    y: float
    vx: float
    vy: float
    carrying: int | None


class Motion(NamedTuple):
    """Where a body is and how it moves, this tick; cheap enough to build every tick."""

    id: int
    x: float
    y: float
    vx: float
    vy: float
