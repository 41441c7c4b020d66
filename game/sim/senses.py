"""What reaches a villager's brain: a ``Percept`` every tick, and a ``Stimulus`` when
physics does something to or near them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class StimulusKind(IntEnum):
    """Things that happen to a villager; a higher value wins when several arrive at once."""

    ERRAND_DONE = 1
    TOPPLED = 2
    NEAR_MISS = 3
    BUMPED = 4
    HIT = 5


@dataclass(frozen=True, slots=True)
class Stimulus:
    """Something physics did to or near a villager.

    ``source_x`` is where it came from (the villager flees away from it); ``refs`` are
    entity ids a line about it may mention.
    """

    kind: StimulusKind
    refs: tuple[int, ...] = ()
    impulse: float = 0.0
    by_player: bool = False
    source_x: float | None = None


@dataclass(frozen=True, slots=True)
class Percept:
    """What a villager knows about the world this tick.

    ``tilt`` is the absolute body angle in radians; ``player_dx`` and ``player_dy`` are
    the player's offset from the villager; ``player_seen`` means within sight radius with
    a clear line of sight; ``neighbour_id`` is an idle villager close enough for small
    talk, if any.
    """

    tick: int
    x: float
    tilt: float
    player_distance: float
    player_dx: float
    player_seen: bool
    neighbour_id: int | None = None
    player_dy: float = 0.0
