"""Each stale-response rule, alone and together."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hypothesis import given
from hypothesis import strategies as st

from game.dialogue.validation import Limits, LineSnapshot, RefSnapshot, lasting, validate
from game.sim.events import Trigger

SPEAKER, PLAYER, CRATE = 1, 0, 50


@dataclass
class Npc:
    state: str = "greet"
    epoch: int = 3
    conscious: bool = True
    can_talk: bool = True


@dataclass
class FakeWorld:
    npcs: dict[int, Npc] = field(default_factory=lambda: {SPEAKER: Npc()})
    positions: dict[int, tuple[float, float]] = field(
        default_factory=lambda: {SPEAKER: (0.0, 0.0), PLAYER: (50.0, 0.0), CRATE: (20.0, 0.0)}
    )

    def npc(self, npc_id: int) -> Npc | None:
        return self.npcs.get(npc_id)

    def entity_exists(self, entity_id: int) -> bool:
        return entity_id in self.positions

    def entity_position(self, entity_id: int) -> tuple[float, float] | None:
        return self.positions.get(entity_id)

    def distance(self, a_id: int, b_id: int) -> float | None:
        a, b = self.positions.get(a_id), self.positions.get(b_id)
        if a is None or b is None:
            return None
        return float(((a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2) ** 0.5)


SNAP = LineSnapshot(
    tick=100,
    npc_id=SPEAKER,
    epoch=3,
    state="greet",
    trigger=Trigger.GREET,
    listener_id=PLAYER,
    distance=50.0,
    refs=(RefSnapshot(CRATE, 20.0, 0.0),),
)
LIMITS = Limits(talk_radius=100.0, ttl_ticks=60)


def test_a_line_that_still_fits_passes() -> None:
    assert validate(SNAP, FakeWorld(), 110, LIMITS) is None


def test_speaker_gone_unconscious_or_busy() -> None:
    world = FakeWorld()
    world.npcs[SPEAKER].can_talk = False
    assert validate(SNAP, world, 110, LIMITS) == "speaker_busy"
    world.npcs[SPEAKER].conscious = False
    assert validate(SNAP, world, 110, LIMITS) == "speaker_unconscious"
    del world.npcs[SPEAKER]
    assert validate(SNAP, world, 110, LIMITS) == "speaker_gone"


def test_listener_gone_or_unconscious() -> None:
    world = FakeWorld()
    world.npcs[7] = Npc(conscious=False)
    world.positions[7] = (10.0, 0.0)
    assert validate(replace(SNAP, listener_id=7), world, 110, LIMITS) == "listener_unconscious"
    del world.positions[PLAYER]
    assert validate(SNAP, world, 110, LIMITS) == "listener_gone"


def test_epoch_change_makes_a_reply_stale() -> None:
    world = FakeWorld()
    world.npcs[SPEAKER].epoch = 4
    assert validate(SNAP, world, 110, LIMITS) == "epoch_changed"


def test_prepared_line_survives_epochs_but_not_disruption() -> None:
    world = FakeWorld()
    world.npcs[SPEAKER].epoch = 9
    prepared = replace(SNAP, predictive=True)
    assert validate(prepared, world, 110, LIMITS) is None
    disrupted = replace(LIMITS, last_disruption_tick=105)
    assert validate(prepared, world, 110, disrupted) == "topic_changed"


def test_a_reaction_outlives_its_short_state_but_not_a_talk_or_a_new_disruption() -> None:
    world = FakeWorld()
    hit = replace(SNAP, trigger=Trigger.HIT, state="react", refs=())
    world.npcs[SPEAKER] = Npc(state="routine", epoch=4)  # the reaction is over
    assert validate(hit, world, 110, LIMITS) is None
    world.npcs[SPEAKER] = Npc(state="react", epoch=5)  # reacting still
    assert validate(hit, world, 110, LIMITS) is None
    # The hit that caused it was at the ask's tick; a later one makes it old news.
    assert validate(hit, world, 110, replace(LIMITS, last_disruption_tick=100)) is None
    assert validate(hit, world, 110, replace(LIMITS, last_disruption_tick=104)) == "topic_changed"
    world.npcs[SPEAKER] = Npc(state="talk", epoch=4)  # now in a conversation
    assert validate(hit, world, 110, LIMITS) == "epoch_changed"
    # A greeting is tied to its epoch, as before.
    world.npcs[SPEAKER] = Npc(state="routine", epoch=4)
    assert validate(replace(hit, trigger=Trigger.GREET), world, 110, LIMITS) == "epoch_changed"


def test_listener_out_of_range() -> None:
    world = FakeWorld()
    world.positions[PLAYER] = (159.0, 0.0)
    assert validate(SNAP, world, 110, LIMITS) is None
    world.positions[PLAYER] = (161.0, 0.0)
    assert validate(SNAP, world, 110, LIMITS) == "out_of_range"
    # A reaction is shouted, so it carries further.
    assert validate(replace(SNAP, trigger=Trigger.HIT), world, 110, LIMITS) is None


def test_referenced_entity_gone_or_carried_off() -> None:
    world = FakeWorld()
    world.positions[CRATE] = (900.0, 0.0)
    assert validate(SNAP, world, 110, LIMITS) == "ref_moved"
    del world.positions[CRATE]
    assert validate(SNAP, world, 110, LIMITS) == "ref_gone"


def test_too_old() -> None:
    assert validate(SNAP, FakeWorld(), 160, LIMITS) is None
    assert validate(SNAP, FakeWorld(), 161, LIMITS) == "too_old"


@given(
    age=st.integers(0, 500),
    ttl=st.integers(1, 300),
    distance=st.floats(0, 1000),
    epoch_delta=st.integers(0, 3),
)
def test_verdict_matches_the_rules(age: int, ttl: int, distance: float, epoch_delta: int) -> None:
    world = FakeWorld()
    world.positions[PLAYER] = (distance, 0.0)
    world.npcs[SPEAKER].epoch = SNAP.epoch + epoch_delta
    limits = Limits(talk_radius=100.0, ttl_ticks=ttl)
    verdict = validate(SNAP, world, SNAP.tick + age, limits)
    fits = epoch_delta == 0 and distance <= 160.0 and age <= ttl
    assert (verdict is None) == fits


def test_only_reasons_no_later_tick_can_undo_are_lasting() -> None:
    hit = replace(SNAP, trigger=Trigger.HIT)
    ambient = replace(SNAP, trigger=Trigger.AMBIENT)
    assert lasting("epoch_changed", ambient)
    assert not lasting("epoch_changed", hit)  # said once the villager is back to their day
    assert not lasting("epoch_changed", replace(ambient, predictive=True))
    for reason in ("too_old", "speaker_gone", "topic_changed", "ref_gone"):
        assert lasting(reason, hit)
    for reason in ("out_of_range", "speaker_busy", "speaker_unconscious", "ref_moved"):
        assert not lasting(reason, ambient)
