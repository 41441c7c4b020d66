"""The worker's time goes to lines the player sees: greetings never late, late lines
dropped and counted, nothing the player caused ever shed, the queue in value order."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from ai import GenerationParams, Priority, PromptSpec
from ai.backend import StopCheck
from game.core.session import Session
from game.dialogue.admission import WorkerTime
from game.dialogue.line_source import LineAsk
from game.dialogue.model_line_source import ModelLineSource
from game.dialogue.records import LineKind, LineRecord
from game.sim.events import Trigger
from tests.unit.game.conftest import (
    LEFT,
    RIGHT,
    STAY,
    GatedBackend,
    Tap,
    npc_named,
    player_id,
    settle,
    source_of,
    wait_for,
    walk,
)


class StartOrder(GatedBackend):
    """Remembers whose line each generation was for, in the order they began."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[str] = []

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        self.started.append(prompt.speaker.split()[0])
        return super().generate(prompt, params, should_stop)


def watching_marta(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> tuple[Session, ModelLineSource, Tap, int]:
    """A village whose lines are tapped, and Marta's id."""
    village = make_village()
    source = source_of(village)
    return village, source, Tap(source, monkeypatch), npc_named(village, "Marta")


def holding_marta(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> tuple[Session, GatedBackend, ModelLineSource, Tap, int]:
    """A village with no greeting written ahead, whose backend holds every line of Marta's."""
    backend = GatedBackend()
    village = make_village("game.dialogue.greet_ahead=false", backend=backend)
    backend.hold(lambda prompt: prompt.speaker.startswith("Marta"))
    source = source_of(village)
    return village, backend, source, Tap(source, monkeypatch), npc_named(village, "Marta")


def test_a_greeting_with_no_line_ready_is_a_template_in_the_same_tick(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the greeting prepared for the approach: none is written ahead of it.
    village, backend, source, tap, marta = holding_marta(make_village, monkeypatch)

    walk(village, LEFT, 300, backend=backend, until=lambda: tap.asked(marta, Trigger.GREET))

    ask = tap.asked(marta, Trigger.GREET)
    assert ask is not None
    ((shown_tick, ready),) = tap.ready(marta)
    assert (ready.origin, shown_tick) == ("template", ask.tick)
    assert village.dialogue.board.text_of(marta) == ready.text
    # Her prepared greeting was still being written: it is stopped and counted late.
    assert source.greetings.outcomes["late"] == 1
    assert source.worker().late == {"greet": 1}
    assert source.greetings.report().templates == {"late": 1}
    wait_for(lambda: bool(backend.stopped), "the late greeting to stop")
    backend.release()
    walk(village, STAY, 30, backend=backend)
    assert [r.origin for _, r in tap.ready(marta)] == ["template"]  # never shown late


def test_a_reaction_past_its_moment_is_a_template_and_the_model_line_never_shows(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend()
    village = make_village(
        "ai.scheduler.deadline_reactive_s=0.2",
        "ai.scheduler.timeout_reactive_s=0.3",
        backend=backend,
    )
    backend.hold(lambda prompt: prompt.speaker.startswith("Pip"))
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    pip, me = npc_named(village, "Pip"), player_id(village)

    village.dialogue.ask(LineAsk(village.tick, pip, Trigger.HIT, me))
    settle(village, backend)
    assert backend.stuck  # the model is writing it, held at the gate
    walk(village, STAY, 1, backend=backend)  # the game sees it start
    time.sleep(0.35)
    walk(village, STAY, 30, backend=backend, until=lambda: bool(tap.ready(pip)))

    ((_, ready),) = tap.ready(pip)
    assert ready.origin == "fallback"  # the template, at the end of the reaction's grace
    assert source.worker().late == {"hit": 1}
    assert source.worker().seconds["late"] > 0.0
    backend.release()
    walk(village, STAY, 30, backend=backend)
    assert len(tap.ready(pip)) == 1


def test_shedding_never_drops_chat_or_a_reaction_to_the_player(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    village = make_village()
    source = source_of(village)
    assert source.admission is not None
    monkeypatch.setattr(source.admission, "wait_s", lambda: 1000.0)  # a hopeless queue
    tap = Tap(source, monkeypatch)
    pip, marta, me = npc_named(village, "Pip"), npc_named(village, "Marta"), player_id(village)
    submitted = source.runtime.metrics().submitted

    tick = village.tick
    village.dialogue.ask(LineAsk(tick, marta, Trigger.CHAT, me, player_text="hello"))
    village.dialogue.ask(LineAsk(tick, pip, Trigger.HIT, me))
    assert source.runtime.metrics().submitted == submitted + 2  # both go to the model

    village.dialogue.ask(LineAsk(tick, pip, Trigger.TOPPLED, None))
    village.dialogue.ask(LineAsk(tick, marta, Trigger.AMBIENT, None))
    assert source.runtime.metrics().submitted == submitted + 2  # neither does
    assert dict(source.admission.shed) == {"toppled": 1, "ambient": 1}
    walk(village, STAY, 1)
    # The toppled stack gets its template line at once; the chatter is left unsaid.
    assert [r.origin for _, r in tap.ready(pip) if r.ask.trigger is Trigger.TOPPLED] == ["template"]
    assert not [r for _, r in tap.ready(marta) if r.ask.trigger is Trigger.AMBIENT]
    hit = lambda: [r for _, r in tap.ready(pip) if r.ask.trigger is Trigger.HIT]  # noqa: E731
    walk(village, STAY, 60, until=lambda: bool(hit()))
    # The model's to write ("fallback" if the scripted line fails its checks), never
    # the "template" a shed ask gets at once.
    assert [r.origin for r in hit()] in (["model"], ["fallback"])


def test_a_villager_off_screen_gets_no_model_line(make_village: Callable[..., Session]) -> None:
    village = make_village()
    source = source_of(village)
    assert source.admission is not None
    far = max(
        village.world.npc_ids(),
        key=lambda i: abs(village.world.npc(i).x - village.world.player_status().x),  # type: ignore[union-attr]
    )
    assert not source.admission.sight(far).on_screen
    submitted = source.runtime.metrics().submitted
    village.dialogue.ask(LineAsk(village.tick, far, Trigger.AMBIENT, None))
    village.dialogue.ask(LineAsk(village.tick, far, Trigger.TOPPLED, None))
    assert source.runtime.metrics().submitted == submitted
    assert dict(source.admission.shed) == {"ambient": 1, "toppled": 1}


def test_the_queue_runs_in_value_order_with_the_scripted_backend(
    make_village: Callable[..., Session],
) -> None:
    backend = StartOrder()
    village = make_village(backend=backend)
    backend.hold(lambda prompt: prompt.speaker.startswith("Pip"))
    source = source_of(village)
    runtime = source.runtime
    pip, me = npc_named(village, "Pip"), player_id(village)
    builder = source._builder  # noqa: SLF001 - the requests the game would build
    runtime.submit(builder.request(LineAsk(village.tick, pip, Trigger.HIT, me)))
    settle(village, backend)
    assert backend.stuck  # the worker is busy with Pip: the rest queue up
    names = ("Marta", "Odo", "Sela")
    for name, worth in zip(names, (1.0, 3.0, 2.0), strict=True):
        npc = npc_named(village, name)
        request = builder.request(LineAsk(village.tick, npc, Trigger.NEAR_MISS, me))
        assert request.priority is Priority.REACTIVE
        runtime.submit(replace(request, value=worth))
    before = len(backend.started)
    backend.release()

    def order() -> list[str]:  # each speaker once, in the order the worker took them up
        speakers = backend.started[before:]
        return [s for i, s in enumerate(speakers) if s in names and s not in speakers[:i]]

    walk(village, STAY, 300, until=lambda: len(order()) == 3)
    assert order() == ["Odo", "Sela", "Marta"]


def test_the_idle_worker_writes_greetings_before_anyone_walks_up(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    village, source, tap, marta = watching_marta(make_village, monkeypatch)
    # The player stands still: no approach is predicted, yet the idle worker prepares.
    walk(village, STAY, 300, until=lambda: marta in source.greetings.ready)
    assert source.greetings.report().ahead >= 1
    assert tap.asked(marta, Trigger.GREET) is None

    walk(village, LEFT, 300, until=lambda: tap.asked(marta, Trigger.GREET))
    ask = tap.asked(marta, Trigger.GREET)
    assert ask is not None
    ((shown_tick, ready),) = [(t, r) for t, r in tap.ready(marta) if r.ask.trigger is Trigger.GREET]
    assert (ready.origin, shown_tick) == ("prepared", ask.tick)


def test_a_greeting_written_ahead_is_raised_when_the_player_heads_for_its_villager(
    make_village: Callable[..., Session],
) -> None:
    backend = GatedBackend()
    village = make_village(backend=backend)
    backend.hold(lambda prompt: prompt.speaker.startswith("Marta"))
    source = source_of(village)
    greetings = source.greetings
    marta = npc_named(village, "Marta")

    def hers() -> LineRecord | None:
        return source.records.prediction_for(marta)

    walk(village, STAY, 300, backend=backend, until=lambda: hers() is not None)
    record = hers()
    assert record is not None
    assert record.request.priority is Priority.AMBIENT  # written ahead
    assert greetings.report().raised == 0

    walk(village, LEFT, 300, backend=backend, until=lambda: greetings.report().raised == 1)
    raised = hers()
    assert raised is record
    assert record.request.priority is Priority.PREDICTIVE
    assert record.request.value > 0.0
    backend.release()


def test_a_greeting_written_before_the_villager_learned_something_is_dropped(
    make_village: Callable[..., Session],
) -> None:
    village = make_village()
    source = source_of(village)
    marta = npc_named(village, "Marta")
    walk(village, STAY, 300, until=lambda: marta in source.greetings.ready)
    stale = source.greetings.outcomes["stale"]

    village.dialogue.memories.of(marta).add_fact("the traveller asked them about the bakery")
    walk(village, STAY, 1)
    assert marta not in source.greetings.ready
    assert source.greetings.outcomes["stale"] == stale + 1
    # A new one is written from what she knows now.
    walk(village, STAY, 300, until=lambda: marta in source.greetings.ready)
    assert source.greetings.ready[marta].key[2] == ("the traveller asked them about the bakery",)


def test_a_bump_the_greeting_never_names_leaves_it_ready(
    make_village: Callable[..., Session],
) -> None:
    # The scripted lines do not greet, which generation.on_topic would refuse.
    village = make_village("ai.generation.on_topic=[]")
    source = source_of(village)
    source._builder.use_style("village")  # noqa: SLF001 - as the village adapter reports
    marta = npc_named(village, "Marta")
    walk(village, STAY, 300, until=lambda: marta in source.greetings.ready)
    prepared = source.greetings.ready[marta]

    # A village-style greeting is never told of a bump, so a bump leaves it as it was.
    village.dialogue.memories.of(marta).add_fact("the traveller bumped into them")
    walk(village, STAY, 1)
    assert source.greetings.ready.get(marta) is prepared
    assert source.greetings.outcomes["stale"] == 0


def test_a_farewell_written_while_the_player_stays_is_said_as_they_walk_off(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    village, source, tap, marta = watching_marta(make_village, monkeypatch)
    walk(village, LEFT, 300, until=lambda: tap.asked(marta, Trigger.GREET))
    walk(village, STAY, 120, until=lambda: marta in source.greetings.partings)
    assert source.greetings.report().farewells["issued"] >= 1

    walk(village, RIGHT, 600, until=lambda: tap.asked(marta, Trigger.FAREWELL))
    ask = tap.asked(marta, Trigger.FAREWELL)
    assert ask is not None
    said = [(t, r) for t, r in tap.ready(marta) if r.ask.trigger is Trigger.FAREWELL]
    assert [(r.origin, t) for t, r in said] == [("prepared", ask.tick)]
    assert source.greetings.report().farewells["used"] == 1


def test_prompts_written_ahead_are_built_one_a_tick_and_not_in_the_greetings_tick(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each prompt costs the main thread a few tenths of a millisecond in a real game: a
    # farewell built in the very tick its greeting showed put both in one frame, and so
    # did a prompt built in a tick that updated the predictions.
    village, source, tap, marta = watching_marta(make_village, monkeypatch)
    builder = source._builder
    built: list[tuple[int, int, Trigger, bool]] = []
    build = builder.request
    updates: list[int] = []
    update = source.greetings.predict

    def predicting(tick: int) -> None:
        updates.append(tick)
        update(tick)

    monkeypatch.setattr(source.greetings, "predict", predicting)

    def counted(ask: LineAsk, predictive: bool = False, **kwargs: object) -> object:
        built.append((ask.tick, ask.npc_id, ask.trigger, predictive))
        return build(ask, predictive, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builder, "request", counted)
    walk(village, LEFT, 300, until=lambda: tap.asked(marta, Trigger.GREET))
    greeting = tap.asked(marta, Trigger.GREET)
    assert greeting is not None
    walk(village, STAY, 120, until=lambda: marta in source.greetings.partings)

    farewells = [t for t, npc, trigger, _ in built if npc == marta and trigger is Trigger.FAREWELL]
    assert farewells
    assert min(farewells) > greeting.tick
    per_tick = Counter(tick for tick, *_ in built)
    ahead = {tick for tick, _, _, predictive in built if predictive}
    assert ahead
    assert all(per_tick[tick] == 1 for tick in ahead)
    assert updates
    assert not ahead & set(updates)


def test_a_farewell_that_would_repeat_the_greeting_is_not_said(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A farewell is written as the villager greets, before the greeting's words are
    # known: in a village game Odo said "Good day, friend." twice in a row.
    village = make_village()
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    greetings = source.greetings
    marta = npc_named(village, "Marta")
    walk(village, LEFT, 300, until=lambda: tap.asked(marta, Trigger.GREET))
    walk(village, STAY, 120, until=lambda: marta in greetings.partings)
    (greeting,) = [r.text for _, r in tap.ready(marta) if r.ask.trigger is Trigger.GREET]
    greetings.partings[marta] = replace(greetings.partings[marta], text=greeting)

    walk(village, RIGHT, 600, until=lambda: tap.asked(marta, Trigger.FAREWELL))
    said = [r for _, r in tap.ready(marta) if r.ask.trigger is Trigger.FAREWELL]
    assert [r.origin for r in said] == ["template"]
    assert greetings.parting_outcomes["stale"] == 1


def test_a_greeting_is_written_ahead_behind_the_line_being_written_one_at_a_time(
    make_village: Callable[..., Session],
) -> None:
    backend = StartOrder()
    village = make_village("game.dialogue.greet_ahead=false", backend=backend)
    backend.hold(lambda prompt: True)
    source = source_of(village)
    runtime = source.runtime
    greetings = source.greetings
    marta = npc_named(village, "Marta")

    def writing_hers() -> bool:
        return source.records.prediction_for(marta) is not None and backend.stuck

    walk(village, LEFT, 300, backend=backend, until=writing_hers)
    assert (runtime.in_flight, runtime.queue_depth) == (1, 0)
    started = len(backend.started)

    def aheads() -> list[LineRecord]:
        return [
            r
            for r in source.records.of_kind(LineKind.PREDICTION)
            if r.request.priority is Priority.AMBIENT
        ]

    greetings.ahead_enabled = True
    walk(village, STAY, 60, backend=backend, until=lambda: bool(aheads()))
    (ahead,) = aheads()  # queued while Marta's greeting is being written
    assert ahead.npc_id != marta
    assert runtime.queue_depth == 1
    assert len(backend.started) == started
    walk(village, STAY, 60, backend=backend)
    assert len(list(source.records.of_kind(LineKind.PREDICTION))) == 2  # one at a time

    backend.release()
    walk(village, STAY, 300, backend=backend, until=lambda: ahead.npc_id in greetings.ready)
    status = village.world.npc(ahead.npc_id)
    assert status is not None
    assert backend.started[started] == status.name.split()[0]


@pytest.mark.parametrize(("wait_s", "prepared"), [(2.0, True), (8.0, False)])
def test_a_greeting_is_prepared_before_the_villagers_wait_to_greet_again_ends(
    make_village: Callable[..., Session], wait_s: float, prepared: bool
) -> None:
    village = make_village()
    source = source_of(village)
    ends = village.tick + round(wait_s * 60)
    for villager in village.world.villagers:
        villager.brain._greet_ready = ends  # noqa: SLF001 - as if each had just greeted
    assert not village.world.greeter_motions()
    lead = round(wait_s * 60) + 1
    greeters = {motion.id for motion in village.world.greeter_motions(lead)}
    assert greeters == {
        v.id for v in village.world.villagers if village.world.would_greet(v.id, lead)
    }
    assert greeters
    assert not any(village.world.would_greet(v.id) for v in village.world.villagers)

    walk(village, STAY, 90)
    assert bool(source.greetings.ready or list(source.records.of_kind(LineKind.PREDICTION))) is (
        prepared
    )


def test_chatter_the_villager_has_moved_past_is_stopped_before_it_is_written(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    village, backend, source, tap, marta = holding_marta(make_village, monkeypatch)

    walk(village, STAY, 10)
    village.dialogue.ask(LineAsk(village.tick, marta, Trigger.AMBIENT, None))
    village.dialogue.update(village.tick)
    settle(village, backend)
    assert backend.stuck  # the chatter is being written
    assert village.world.set_talking(marta, True)  # and the villager's moment passes

    def withdrawn() -> bool:
        return not any(r.npc_id == marta for r in source.records.of_kind(LineKind.REACTION))

    walk(village, STAY, 10, backend=backend, until=withdrawn)
    # The worker notices the cancel at its next word, on its own thread and in its own time.
    wait_for(lambda: bool(backend.stopped), "the withdrawn chatter to stop")

    assert [p.speaker.split()[0] for p in backend.stopped] == ["Marta"]
    assert dict(source.checker.stale) == {"epoch_changed": 1}
    assert source.worker_time.seconds["shown"] == 0.0
    assert not [r for _, r in tap.ready(marta) if r.ask.trigger is Trigger.AMBIENT]


def test_a_preempted_run_is_booked_once_and_the_request_timed_afresh() -> None:
    now = [0.0]
    worker_time = WorkerTime(clock=lambda: now[0])
    worker_time.started(1)
    now[0] = 0.4  # a chat reply stops request 1 and runs for a second
    worker_time.started(2)
    now[0] = 1.4
    worker_time.ended(2)
    worker_time.settle(2, "shown")
    worker_time.started(1, preempted_s=0.4)  # request 1 again, from scratch
    worker_time.started(1)  # a start seen twice changes nothing
    now[0] = 1.9
    worker_time.ended(1)
    worker_time.settle(1, "shown")
    assert dict(worker_time.seconds) == pytest.approx({"shown": 1.5, "preempted": 0.4})
    assert worker_time.shown_share() == pytest.approx(1.5 / 1.9)
