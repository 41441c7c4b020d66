"""The villager state machine on synthetic percepts and stimuli, without physics."""

from __future__ import annotations

import math
import random

from game.sim.events import NpcGotUp, NpcKnockedDown, NpcTransitioned, SpeechWanted, Trigger
from game.sim.npc import NpcBrain
from game.sim.npc_states import NpcState
from game.sim.routine import Routine
from game.sim.senses import Percept, Stimulus, StimulusKind
from game.sim.tuning import Tuning

PLAYER = 1
NPC = 2
TUNING = Tuning()


def make_brain() -> NpcBrain:
    return NpcBrain(NPC, PLAYER, Routine(home_x=100.0, work_x=100.0), random.Random(3), TUNING)


def percept(
    tick: int,
    distance: float = 1000.0,
    seen: bool = False,
    tilt: float = 0.0,
    neighbour: int | None = None,
) -> Percept:
    return Percept(tick, 100.0, tilt, distance, distance, seen, neighbour)


def run(brain: NpcBrain, start: int, ticks: int, **kw: object) -> list[object]:
    events: list[object] = []
    for tick in range(start, start + ticks):
        events.extend(brain.think(percept(tick, **kw)))  # type: ignore[arg-type]
    return events


def transitions(events: list[object]) -> list[NpcTransitioned]:
    return [e for e in events if isinstance(e, NpcTransitioned)]


def speech(events: list[object], trigger: Trigger) -> list[SpeechWanted]:
    return [e for e in events if isinstance(e, SpeechWanted) and e.trigger is trigger]


def test_starts_idle_at_its_spot_and_stays_quiet() -> None:
    brain = make_brain()
    events = run(brain, 1, 30)
    assert brain.state is NpcState.IDLE
    assert events == []
    assert brain.epoch == 0


def test_notice_then_greet_then_farewell() -> None:
    brain = make_brain()
    events = run(brain, 1, 5, distance=250.0, seen=True)
    assert brain.state is NpcState.NOTICE
    events += run(brain, 6, TUNING.notice_delay + 2, distance=100.0, seen=True)
    assert brain.state is NpcState.GREET
    greets = speech(events, Trigger.GREET)
    assert len(greets) == 1
    assert greets[0].listener_id == PLAYER
    events += run(brain, 40, 3, distance=TUNING.leave_radius + 50.0, seen=True)
    farewells = speech(events, Trigger.FAREWELL)
    assert len(farewells) == 1
    assert brain.state in (NpcState.IDLE, NpcState.ROUTINE)


def test_every_transition_bumps_epoch_by_one() -> None:
    brain = make_brain()
    events = run(brain, 1, 5, distance=250.0, seen=True)
    events += run(brain, 6, 20, distance=100.0, seen=True)
    brain.notify(Stimulus(StimulusKind.HIT, (42,), 300.0, True, 0.0))
    events += run(brain, 26, 100, distance=100.0, seen=True)
    moves = transitions(events)
    assert len(moves) >= 3
    assert [t.epoch for t in moves] == list(range(1, len(moves) + 1))
    assert brain.epoch == len(moves)
    for before, after in zip(moves, moves[1:], strict=False):
        assert after.old == before.new


def test_light_hit_reacts_with_a_hit_line_about_the_prop() -> None:
    brain = make_brain()
    brain.notify(Stimulus(StimulusKind.HIT, (42,), 300.0, True, 0.0))
    events = brain.think(percept(1))
    assert brain.state is NpcState.REACT
    lines = speech(events, Trigger.HIT)
    assert lines == [SpeechWanted(1, NPC, Trigger.HIT, PLAYER, (42,))]
    run(brain, 2, TUNING.react_ticks + 2)
    assert brain.state is NpcState.IDLE


def test_hard_hit_flees_away_from_the_source() -> None:
    brain = make_brain()
    hard = (TUNING.flee_impulse + TUNING.knockdown_impulse) / 2
    brain.notify(Stimulus(StimulusKind.HIT, (42,), hard, True, 0.0))
    brain.think(percept(1))
    assert brain.state is NpcState.FLEE
    assert brain.goal_x is not None
    assert brain.goal_x > 100.0
    assert brain.speed == TUNING.run_speed


def test_a_blow_past_the_knockdown_impulse_knocks_down_away_from_its_source() -> None:
    brain = make_brain()
    brain.notify(Stimulus(StimulusKind.HIT, (42,), TUNING.knockdown_impulse, True, 0.0))
    events = brain.think(percept(1))
    assert brain.state is NpcState.KNOCKED_DOWN
    assert NpcKnockedDown(1, NPC) in events
    assert speech(events, Trigger.HIT) == []
    # The blow came from x=0, left of the villager: they fall to the right.
    assert brain.fall_side == 1
    assert brain.goal_x is None


def test_repeated_hits_flee() -> None:
    brain = make_brain()
    brain.notify(Stimulus(StimulusKind.HIT, (42,), 200.0, False, None))
    brain.think(percept(1))
    assert brain.state is NpcState.REACT
    brain.notify(Stimulus(StimulusKind.HIT, (43,), 200.0, False, None))
    brain.think(percept(20))
    assert brain.state is NpcState.FLEE


def test_knocked_down_then_recovers() -> None:
    brain = make_brain()
    events = brain.think(percept(1, tilt=1.4))
    assert brain.state is NpcState.KNOCKED_DOWN
    assert NpcKnockedDown(1, NPC) in events
    assert not brain.conscious
    assert not brain.can_talk
    # Stimuli while down are ignored.
    brain.notify(Stimulus(StimulusKind.BUMPED, (), 500.0, True, 0.0))
    events = run(brain, 2, TUNING.down_ticks + 1, tilt=1.4)
    assert brain.state is NpcState.RECOVER
    assert speech(events, Trigger.BUMPED) == []
    events = run(brain, 200, 15, tilt=0.05)
    assert any(isinstance(e, NpcGotUp) for e in events)
    assert brain.state is NpcState.IDLE
    assert brain.conscious
    assert brain.can_talk


def test_near_miss_bump_topple_and_errand_done_each_want_a_line() -> None:
    cases = [
        (StimulusKind.NEAR_MISS, Trigger.NEAR_MISS),
        (StimulusKind.BUMPED, Trigger.BUMPED),
        (StimulusKind.TOPPLED, Trigger.TOPPLED),
        (StimulusKind.ERRAND_DONE, Trigger.ERRAND_DONE),
    ]
    for kind, trigger in cases:
        brain = make_brain()
        brain.notify(Stimulus(kind, (7,), 0.0, True, 0.0))
        events = brain.think(percept(1))
        assert brain.state is NpcState.REACT, kind
        assert len(speech(events, trigger)) == 1, kind


def test_approach_that_stops_outside_talk_range_never_greets() -> None:
    brain = make_brain()
    events = run(brain, 1, 300, distance=TUNING.talk_radius * 1.3, seen=True)
    assert any(t.new == "notice" for t in transitions(events))
    assert speech(events, Trigger.GREET) == []


def test_unseen_player_is_not_noticed() -> None:
    brain = make_brain()
    run(brain, 1, 30, distance=100.0, seen=False)
    assert brain.state is NpcState.IDLE


def test_talk_enters_and_leaves_with_a_farewell() -> None:
    brain = make_brain()
    events = brain.set_talking(5, True)
    assert brain.state is NpcState.TALK
    assert transitions(events)[0].new == "talk"
    events = brain.set_talking(50, False)
    assert len(speech(events, Trigger.FAREWELL)) == 1
    assert brain.state is NpcState.IDLE


def test_talk_ends_when_the_player_walks_away() -> None:
    brain = make_brain()
    brain.set_talking(1, True)
    events = run(brain, 2, 3, distance=TUNING.leave_radius + 10.0, seen=True)
    assert len(speech(events, Trigger.FAREWELL)) == 1
    assert brain.state is not NpcState.TALK


def test_idle_neighbours_make_small_talk_rate_limited() -> None:
    brain = make_brain()
    events = run(brain, 1, 4000, neighbour=9)
    ambient = speech(events, Trigger.AMBIENT)
    assert ambient
    assert all(a.listener_id == 9 for a in ambient)
    gaps = [b.tick - a.tick for a, b in zip(ambient, ambient[1:], strict=False)]
    assert all(g >= TUNING.ambient_gap for g in gaps)


def test_errand_offer_follows_a_greeting_once() -> None:
    brain = make_brain()
    brain.offer_errand("apples", (5,))
    events = run(brain, 1, 5, distance=250.0, seen=True)
    events += run(brain, 6, 100, distance=100.0, seen=True)
    offers = speech(events, Trigger.ERRAND_OFFER)
    assert offers == [offers[0]]
    assert offers[0].refs == (5,)
    assert brain.offered == ["apples"]


def test_routine_walks_to_work_then_home() -> None:
    routine = Routine(home_x=0.0, work_x=500.0, work_ticks=100, home_ticks=100)
    brain = NpcBrain(NPC, PLAYER, routine, random.Random(1), TUNING)
    brain.think(Percept(1, 0.0, 0.0, 1000.0, 1000.0, False))
    assert brain.state is NpcState.ROUTINE
    assert brain.goal_x == 500.0
    brain.think(Percept(150, 500.0, 0.0, 1000.0, 1000.0, False))
    assert brain.goal_x == 0.0


def test_a_villager_in_a_chat_waits_out_a_knock_and_faces_the_player() -> None:
    routine = Routine(home_x=100.0, work_x=900.0)  # the round wants them far off
    brain = NpcBrain(NPC, PLAYER, routine, random.Random(3), TUNING)
    brain.observe_position(100.0)
    brain.set_talking(1, True)
    brain.notify(Stimulus(StimulusKind.HIT, (7,), 300.0, False, 60.0))  # a ball, from the left
    events = run(brain, 2, 600, distance=60.0, seen=True)  # the player stands to the right
    assert len(speech(events, Trigger.HIT)) == 1  # the knock still gets its word
    assert brain.state is NpcState.TALK
    assert brain.goal_x is None
    assert brain.facing == 1
    assert [t.new for t in transitions(events)] == ["react", "talk"]


def test_a_bump_in_a_chat_wants_no_line_and_leaves_the_chat_alone() -> None:
    brain = make_brain()
    brain.set_talking(1, True)
    brain.notify(Stimulus(StimulusKind.BUMPED, (), 500.0, True, 160.0))
    events = run(brain, 2, 120, distance=60.0, seen=True)
    assert speech(events, Trigger.BUMPED) == []
    assert transitions(events) == []
    assert brain.state is NpcState.TALK
    brain.set_talking(200, False)
    brain.notify(Stimulus(StimulusKind.BUMPED, (), 500.0, True, 160.0))
    assert len(speech(brain.think(percept(201, distance=60.0)), Trigger.BUMPED)) == 1


def test_a_round_waits_a_step_short_of_a_player_standing_on_its_spot() -> None:
    routine = Routine(home_x=0.0, work_x=500.0)
    brain = NpcBrain(NPC, PLAYER, routine, random.Random(1), TUNING)
    gap = TUNING.personal_gap
    # The player stands with their back turned (unseen), 10 past the spot.
    brain.think(Percept(1, 0.0, 0.0, 510.0, 510.0, False))
    assert brain.state is NpcState.ROUTINE
    assert brain.goal_x == 510.0 - gap
    assert brain.facing == 1
    brain.think(Percept(2, 510.0 - gap + 4.0, 0.0, gap - 4.0, gap - 4.0, False))
    assert brain.state is NpcState.ROUTINE
    assert brain.goal_x is None  # there: stand, do not push in
    brain.think(Percept(3, 510.0 - gap + 4.0, 0.0, gap, gap - 4.0, False, None, -50.0))
    assert brain.goal_x is None  # up in a hop, still at the player's level
    brain.think(Percept(4, 0.0, 0.0, math.hypot(500.0, 200.0), 500.0, False, None, 200.0))
    assert brain.goal_x == 500.0  # the player is up on a roof, not in the way
    brain.think(Percept(5, 0.0, 0.0, 250.0, 250.0, False))
    assert brain.goal_x == 500.0  # a player halfway is walked past, not waited for
