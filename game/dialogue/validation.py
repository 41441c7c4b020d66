"""Stale-response validation: hold a line's snapshot against the live world.

A line is written for the world as it was when it was asked for. Before its bubble
appears (and again when a streamed line completes) each rule below checks that the world
still fits it. The first rule that fails names the reason; the line is then dropped and
never enters anyone's memory. Every rule is a pure function of the snapshot and a
read-only view of the world, so each can be tested alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from game.sim.events import Trigger
from game.sim.npc_states import CALM, NpcState

#: Lines shouted at what just happened to the villager.
REACTIONS = frozenset({Trigger.HIT, Trigger.NEAR_MISS, Trigger.BUMPED, Trigger.TOPPLED})
# The states a villager may be in when their reaction's line is still theirs to say.
_AFTER_REACTION = frozenset({*CALM, NpcState.REACT, NpcState.FLEE})


@dataclass(frozen=True, slots=True)
class RefSnapshot:
    """An entity a line talks about, and where it was when the line was asked for."""

    id: int
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class LineSnapshot:
    """The world as a line's request saw it. Immutable: it travels with the request."""

    tick: int
    npc_id: int
    epoch: int
    state: str
    trigger: Trigger
    listener_id: int | None
    distance: float | None
    refs: tuple[RefSnapshot, ...] = ()
    predictive: bool = False


class SpeakerView(Protocol):
    """What validation reads of a villager."""

    @property
    def state(self) -> str: ...
    @property
    def epoch(self) -> int: ...
    @property
    def conscious(self) -> bool: ...
    @property
    def can_talk(self) -> bool: ...


class LiveWorld(Protocol):
    """The read-only queries validation makes of the live world."""

    @property
    def tick(self) -> int: ...
    def npc(self, npc_id: int) -> SpeakerView | None: ...
    def entity_exists(self, entity_id: int) -> bool: ...
    def entity_position(self, entity_id: int) -> tuple[float, float] | None: ...
    def distance(self, a_id: int, b_id: int) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Limits:
    """How far the world may drift from a snapshot before a line no longer fits."""

    talk_radius: float
    ttl_ticks: int
    ref_drift: float = 600.0
    last_disruption_tick: int = -1


Rule = Callable[[LineSnapshot, LiveWorld, int, Limits], str | None]

# Reactions are shouted after someone, so they reach further than a greeting.
_RANGE_FACTOR: dict[Trigger, float] = {
    Trigger.GREET: 1.6,
    Trigger.CHAT: 1.6,
    Trigger.ERRAND_OFFER: 1.6,
    Trigger.FAREWELL: 3.0,
    Trigger.AMBIENT: 2.0,
}
_SHOUT_FACTOR = 3.5


def reach(trigger: Trigger, talk_radius: float) -> float:
    """How far away a listener may be and still hear a line spoken for ``trigger``."""
    return talk_radius * _RANGE_FACTOR.get(trigger, _SHOUT_FACTOR)


def speaker_can_talk(snap: LineSnapshot, world: LiveWorld, tick: int, limits: Limits) -> str | None:
    """The speaker still exists, is conscious and is able to talk."""
    speaker = world.npc(snap.npc_id)
    if speaker is None:
        return "speaker_gone"
    if not speaker.conscious:
        return "speaker_unconscious"
    if not speaker.can_talk:
        return "speaker_busy"
    return None


def listener_present(snap: LineSnapshot, world: LiveWorld, tick: int, limits: Limits) -> str | None:
    """The listener still exists and, if a villager, is conscious."""
    if snap.listener_id is None:
        return None
    if not world.entity_exists(snap.listener_id):
        return "listener_gone"
    villager = world.npc(snap.listener_id)
    if villager is not None and not villager.conscious:
        return "listener_unconscious"
    return None


def situation_unchanged(
    snap: LineSnapshot, world: LiveWorld, tick: int, limits: Limits
) -> str | None:
    """The speaker's state machine has not moved on, or the line's trigger still applies.

    A reply is tied to the exact epoch it was asked in. A prepared (predictive) line was
    asked before its trigger fired, so its epoch will have moved on by design; it stays
    valid as long as nothing disruptive (a hit, a fall, a topple) happened since. A
    reaction outlives the short state it was shouted from (a line takes about as long
    as the reaction lasts): once the villager is back to their day, or still reacting,
    it may still be said, unless something else disrupted them after it.
    """
    speaker = world.npc(snap.npc_id)
    if speaker is None:
        return "speaker_gone"
    if snap.predictive:
        return "topic_changed" if limits.last_disruption_tick >= snap.tick else None
    if speaker.epoch == snap.epoch:
        return None
    if snap.trigger in REACTIONS and speaker.state in _AFTER_REACTION:
        return "topic_changed" if limits.last_disruption_tick > snap.tick else None
    return "epoch_changed"


def listener_in_range(
    snap: LineSnapshot, world: LiveWorld, tick: int, limits: Limits
) -> str | None:
    """The listener is still close enough to hear the line."""
    if snap.listener_id is None:
        return None
    distance = world.distance(snap.npc_id, snap.listener_id)
    if distance is None:
        return "listener_gone"
    return "out_of_range" if distance > reach(snap.trigger, limits.talk_radius) else None


def refs_still_relevant(
    snap: LineSnapshot, world: LiveWorld, tick: int, limits: Limits
) -> str | None:
    """Every entity the line talks about still exists and has not been carried off."""
    for ref in snap.refs:
        where = world.entity_position(ref.id)
        if where is None:
            return "ref_gone"
        if abs(where[0] - ref.x) + abs(where[1] - ref.y) > limits.ref_drift:
            return "ref_moved"
    return None


def fresh_enough(snap: LineSnapshot, world: LiveWorld, tick: int, limits: Limits) -> str | None:
    """The line is not older than its priority class allows."""
    return "too_old" if tick - snap.tick > limits.ttl_ticks else None


RULES: tuple[Rule, ...] = (
    speaker_can_talk,
    listener_present,
    situation_unchanged,
    listener_in_range,
    refs_still_relevant,
    fresh_enough,
)


def validate(snap: LineSnapshot, world: LiveWorld, tick: int, limits: Limits) -> str | None:
    """Return the first reason the line no longer fits the world, or None if it does."""
    for rule in RULES:
        reason = rule(snap, world, tick, limits)
        if reason is not None:
            return reason
    return None


#: Reasons no later tick can undo: the world only moves on from them.
_LASTING = frozenset({"speaker_gone", "listener_gone", "ref_gone", "topic_changed", "too_old"})


def lasting(reason: str, snap: LineSnapshot) -> bool:
    """Whether a line refused for ``reason`` would be refused at every later tick too.

    Time, disruptions and epochs only grow. A reaction's line may still be said once
    its villager is back to their day, so its changed epoch is not final; any other
    line's is.
    """
    if reason == "epoch_changed":
        return not snap.predictive and snap.trigger not in REACTIONS
    return reason in _LASTING


def live_facts(world: LiveWorld, snapshot: LineSnapshot, limits: Limits) -> dict[str, object]:
    """The raw facts a check reads at the tick a line appears, for the bubble log."""
    npc = world.npc(snapshot.npc_id)
    listener_distance = (
        None
        if snapshot.listener_id is None
        else world.distance(snapshot.npc_id, snapshot.listener_id)
    )
    return {
        "tick": world.tick,
        "epoch": None if npc is None else npc.epoch,
        "state": None if npc is None else npc.state,
        "conscious": None if npc is None else npc.conscious,
        "can_talk": None if npc is None else npc.can_talk,
        "listener_distance": listener_distance,
        "refs": {str(r.id): world.entity_position(r.id) for r in snapshot.refs},
        "talk_radius": limits.talk_radius,
        "ttl_ticks": limits.ttl_ticks,
        "last_disruption_tick": limits.last_disruption_tick,
    }


class Checker:
    """Holds snapshots against one live world, and counts every line it rejects."""

    def __init__(
        self,
        world: LiveWorld,
        talk_radius: float,
        ttl_ticks: Callable[[LineSnapshot], int],
        last_disruption: Callable[[int], int],
    ) -> None:
        self._world = world
        self._talk_radius = talk_radius
        self._ttl_ticks = ttl_ticks
        self._last_disruption = last_disruption
        self.record_facts = False
        self.stale: Counter[str] = Counter()

    def limits(self, snapshot: LineSnapshot) -> Limits:
        """The limits that apply to a snapshot's line now."""
        return Limits(
            talk_radius=self._talk_radius,
            ttl_ticks=self._ttl_ticks(snapshot),
            last_disruption_tick=self._last_disruption(snapshot.npc_id),
        )

    def reject(self, snapshot: LineSnapshot, tick: int) -> str | None:
        """Why the line no longer fits (counted as a stale drop), or None if it does."""
        reason = validate(snapshot, self._world, tick, self.limits(snapshot))
        if reason is not None:
            self.stale[reason] += 1
        return reason

    def lost(self, snapshot: LineSnapshot, tick: int) -> str | None:
        """Why a line still being written could never be shown, or None if it might.

        Counted as a stale drop, as :meth:`reject` would count it on arrival.
        """
        reason = validate(snapshot, self._world, tick, self.limits(snapshot))
        if reason is None or not lasting(reason, snapshot):
            return None
        self.stale[reason] += 1
        return reason

    def live(self, snapshot: LineSnapshot) -> dict[str, object] | None:
        """The raw facts a check reads, for the bubble log (only gathered when logging)."""
        if not self.record_facts:
            return None
        return live_facts(self._world, snapshot, self.limits(snapshot))
