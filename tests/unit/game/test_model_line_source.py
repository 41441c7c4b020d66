"""ModelLineSource against the real world and runtime, on a scripted backend.

The layout these tests lean on: the player starts between Marta (to the left, out of
talk range) and Pip (to the right, inside notice range but outside talk range). The
harness (``conftest.py``) explains how ticks are kept independent of machine speed.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ai import (
    AiEvent,
    GenerationParams,
    Handle,
    PromptSpec,
    ScriptedBackend,
    ScriptedConfig,
)
from ai.backend import StopCheck
from game.core.session import Session
from game.dialogue.line_source import LineAsk, LineReady
from game.dialogue.validation import reach
from game.sim.events import NpcKnockedDown, SpeechWanted, Trigger
from tests.unit.game.conftest import (
    CHAT,
    CHAT_REPLY,
    FAST_TIMINGS,
    GREETING,
    LEFT,
    RIGHT,
    STAY,
    GatedBackend,
    Tap,
    let_through,
    npc_named,
    open_chat,
    player_id,
    remembered,
    settle,
    source_of,
    wait_for,
    walk,
)

# -- (a) prepared greetings ------------------------------------------------------------

# These tests follow greetings prepared for a predicted approach, one at a time.
NO_AHEAD = "game.dialogue.greet_ahead=false"


def test_prepared_greeting_is_shown_in_the_tick_its_trigger_fires(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    village = make_village(NO_AHEAD)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    marta = npc_named(village, "Marta")

    walk(village, LEFT, 200, until=lambda: tap.asked(marta, Trigger.GREET) is not None)

    ask = tap.asked(marta, Trigger.GREET)
    assert ask is not None
    ((shown_tick, ready),) = tap.ready(marta)
    assert ready.origin == "prepared"
    assert shown_tick == ask.tick == village.tick
    assert ready.snapshot is not None
    assert ready.snapshot.predictive
    assert ready.snapshot.tick < ask.tick  # asked for before the greeting was wanted
    assert list(village.dialogue.latency_ticks["greet"]) == [0]
    assert village.dialogue.board.text_of(marta) == ready.text
    assert village.dialogue.memories.of(marta).exchanges[-1].text == ready.text
    assert source.greetings.report().used == 1


# -- (b) failed predictions ------------------------------------------------------------


def test_prediction_that_fails_cancels_its_request(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend()
    backend.hold(lambda prompt: prompt.situation == GREETING)
    village = make_village(NO_AHEAD, backend=backend)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    marta = npc_named(village, "Marta")

    walk(village, LEFT, 30, until=lambda: backend.stuck, backend=backend)
    assert source.records.prediction_for(marta) is not None
    # The player veers away (and stops), so the predicted encounter never happens.
    walk(village, RIGHT, 6, backend=backend)
    walk(
        village,
        STAY,
        60,
        until=lambda: source.records.prediction_for(marta) is None,
        backend=backend,
    )

    report = source.greetings.report()
    assert report.cancelled >= 1
    assert report.used == 0
    assert marta not in source.greetings.ready
    assert source.runtime.metrics().cancelled >= 1
    wait_for(lambda: backend.stopped, "the held generation to stop")
    assert all(prompt.situation == GREETING for prompt in backend.stopped)
    assert not backend.finished[1:]  # nothing but the warm-up ran to its end
    assert tap.asked(marta, Trigger.GREET) is None
    assert tap.ready(marta) == []


def test_a_prediction_withdrawn_while_its_villager_is_in_view_is_written_to_the_end(
    make_village: Callable[..., Session],
) -> None:
    backend = GatedBackend()
    backend.hold(lambda p: p.situation == GREETING and p.speaker.startswith("Marta"))
    village = make_village(backend=backend)
    source = source_of(village)
    marta = npc_named(village, "Marta")

    # Her greeting is being written (ahead) when the player heads for her ...
    walk(village, LEFT, 60, until=lambda: source.greetings.raised == 1, backend=backend)
    assert backend.stuck
    record = source.records.prediction_for(marta)
    assert record is not None
    walk(village, RIGHT, 6, backend=backend)  # ... and veers away: she is still in view
    walk(village, STAY, 60, until=lambda: source.greetings.kept == 1, backend=backend)
    assert source.records.prediction_for(marta) is record  # not stopped
    assert not backend.stopped

    backend.release()
    walk(village, STAY, 60, until=lambda: marta in source.greetings.ready, backend=backend)
    assert marta in source.greetings.ready  # ready for the next approach
    report = source.greetings.report()
    assert (report.kept, report.cancelled) == (1, 0)


def test_unused_prepared_line_expires(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    village = make_village(NO_AHEAD)
    village.world.skip_welcome()  # nobody else comes over to greet: Marta's line is the one
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    marta = npc_named(village, "Marta")

    walk(village, LEFT, 30, until=lambda: marta in source.greetings.ready)
    expires = source.greetings.ready[marta].expires_tick
    # The player stops out of talk range: the greeting it was prepared for never comes.
    walk(village, STAY, 40 * 60 + 60, until=lambda: marta not in source.greetings.ready)

    assert village.tick == expires + 1
    report = source.greetings.report()
    assert report.expired >= 1
    assert report.used == 0
    assert tap.asked(marta, Trigger.GREET) is None
    assert [r for _, r in tap.ready(marta) if r.ask.trigger is Trigger.GREET] == []


def test_disrupted_prepared_line_is_dropped_without_a_rate_limited_retry(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    numbers = itertools.count(1)
    backend = GatedBackend(script=lambda prompt: f"Line number {next(numbers)}.")
    village = make_village(NO_AHEAD, "ai.scheduler.rate_limit_s=30.0", backend=backend)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    marta = npc_named(village, "Marta")

    walk(village, LEFT, 30, until=lambda: marta in source.greetings.ready)
    prepared_text = source.greetings.ready[marta].text
    tick = village.tick
    village.dialogue.handle_events(tick, [NpcKnockedDown(tick, marta)])
    village.dialogue.update(tick)  # the same tick, as ``Session.step`` runs them
    assert marta not in source.greetings.ready
    walk(village, LEFT, 200, until=lambda: tap.asked(marta, Trigger.GREET) is not None)
    walk(village, STAY, 30, until=lambda: bool(tap.ready(marta)))

    assert source.checker.stale["topic_changed"] == 1
    report = source.greetings.report()
    assert report.stale == 1
    # A new prediction waits out the runtime's rate limit instead of being refused by it.
    assert report.failed == 0
    assert "rate_limited" not in source.report().fallbacks
    ((_, ready),) = tap.ready(marta)
    assert ready.origin != "prepared"
    assert prepared_text not in remembered(village)


# -- (c) stale replies ------------------------------------------------------------------


def test_reply_whose_speaker_moved_on_is_dropped_and_never_remembered(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    stale_text = "Who threw that at me?"
    backend = GatedBackend(script={"hit by a flying object": stale_text})
    backend.hold(lambda prompt: prompt.situation.startswith("hit by"))
    village = make_village(NO_AHEAD, backend=backend)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    pip = npc_named(village, "Pip")

    walk(village, STAY, 10)
    tick = village.tick
    village.dialogue.handle_events(tick, [SpeechWanted(tick, pip, Trigger.HIT, player_id(village))])
    village.dialogue.update(tick)
    settle(village, backend)
    assert backend.stuck
    epoch = village.world.npc(pip).epoch  # type: ignore[union-attr]
    assert village.world.set_talking(pip, True)  # the villager's state machine moves on
    walk(village, STAY, 1, backend=backend)
    assert village.world.npc(pip).epoch != epoch  # type: ignore[union-attr]

    backend.release()
    walk(village, STAY, 30, until=lambda: sum(source.checker.stale.values()) > 0)

    assert dict(source.checker.stale) == {"epoch_changed": 1}
    assert tap.ready(pip) == []
    assert village.dialogue.board.text_of(pip) is None
    assert stale_text not in remembered(village)
    assert [p.situation for p in backend.finished if p.speaker.startswith("Pip")] == [
        "hit by a flying object"
    ]  # the line was written, then held back


def test_reply_whose_listener_walked_out_of_range_is_dropped(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    stale_text = "Welcome, welcome, come closer."
    backend = GatedBackend(script={"Pip the child": stale_text})
    backend.hold(lambda prompt: prompt.speaker.startswith("Pip"))
    village = make_village(NO_AHEAD, backend=backend)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    pip, me = npc_named(village, "Pip"), player_id(village)

    walk(village, STAY, 10)
    tick = village.tick
    village.dialogue.ask(LineAsk(tick, pip, Trigger.ERRAND_OFFER, me))
    village.dialogue.update(tick)
    settle(village, backend)
    assert backend.stuck
    epoch = village.world.npc(pip).epoch  # type: ignore[union-attr]
    limit = reach(Trigger.ERRAND_OFFER, village.world.talk_radius)
    walk(
        village,
        LEFT,
        60,
        until=lambda: village.world.distance(pip, me) > limit + 20,  # type: ignore[operator]
        backend=backend,
    )
    walk(village, STAY, 10, backend=backend)
    assert village.world.npc(pip).epoch == epoch  # type: ignore[union-attr]

    backend.release()
    walk(village, STAY, 30, until=lambda: sum(source.checker.stale.values()) > 0)

    assert dict(source.checker.stale) == {"out_of_range": 1}
    assert tap.ready(pip) == []
    assert village.dialogue.board.text_of(pip) is None
    assert stale_text not in remembered(village)


# -- (d) streamed chat ----------------------------------------------------------------


def test_chat_reply_streams_into_its_bubble_then_completes(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend(script={CHAT: CHAT_REPLY})
    backend.hold(lambda prompt: prompt.situation == CHAT)
    village = make_village(NO_AHEAD, backend=backend)
    village.world.skip_welcome()  # Pip stays at the well: no greeting of hers meanwhile
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    pip = npc_named(village, "Pip")
    walk(village, STAY, 10)

    said = open_chat(village, pip, "Is the well water sweet?")
    assert tap.partials(pip) == [(said, "")]  # "thinking" at once
    assert village.dialogue.board.is_streaming(pip)
    for _ in range(len(CHAT_REPLY.split())):
        let_through(village, backend, 1)  # one more token, then the next tick
        walk(village, STAY, 1, backend=backend)
    walk(village, STAY, 30, until=lambda: bool(tap.ready(pip)))

    streamed = [(tick, text) for tick, text in tap.partials(pip) if text]
    assert len(streamed) >= 3
    ticks, texts = zip(*streamed, strict=True)
    assert list(ticks) == sorted(set(ticks))  # one update per tick, arriving over time
    assert all(len(a) < len(b) and b.startswith(a) for a, b in zip(texts, texts[1:], strict=False))
    ((done_tick, ready),) = tap.ready(pip)
    assert done_tick > ticks[-1]
    assert (ready.origin, ready.text) == ("model", CHAT_REPLY)
    assert ready.text.startswith(texts[-1])
    assert not village.dialogue.board.is_streaming(pip)
    assert village.dialogue.board.text_of(pip) == CHAT_REPLY
    memory = village.dialogue.memories.of(pip).exchanges
    assert [e.text for e in memory] == ["Is the well water sweet?", CHAT_REPLY]
    assert tap.cuts(pip) == []


# A reply cut mid-stream keeps its words: test_chat_words_stay.py.


# -- (e) loading and degraded ---------------------------------------------------------


def test_asks_while_the_model_loads_get_template_lines_at_once(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend(hold_load=True)
    village = make_village(NO_AHEAD, backend=backend, wait=False)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    marta = npc_named(village, "Marta")
    assert source.load_view() is not None
    assert source.load_view().state == "loading"  # type: ignore[union-attr]

    walk(village, LEFT, 200, until=lambda: tap.asked(marta, Trigger.GREET) is not None)

    ((shown, ready),) = tap.ready(marta)
    assert (ready.origin, shown) == ("template", village.tick)
    assert ready.text
    assert source.template_while_loading >= 1
    assert source.greetings.report().issued == 0
    assert backend.generate_calls == 0
    assert all(e.origin == "template" for _, e in tap.out if isinstance(e, LineReady))

    backend.finish_loading()
    wait_for(lambda: source.load_view().state == "ready", "the model to load")  # type: ignore[union-attr]
    said = open_chat(village, marta, "Fresh bread today?")
    walk(village, STAY, 30, until=lambda: len(tap.ready(marta)) == 2)
    shown, reply = tap.ready(marta)[-1]
    assert (reply.ask.tick, reply.origin) == (said, "model")
    assert shown > said


@pytest.mark.parametrize("kind", ["scripted load error", "junk GGUF file"])
def test_a_model_that_cannot_load_degrades_to_template_lines(
    make_village: Callable[..., Session],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    kind: str,
) -> None:
    if kind == "junk GGUF file":
        junk = tmp_path / "villager-brain.gguf"
        junk.write_bytes(b"this is not a language model\n" * 64)
        village = make_village(
            NO_AHEAD, 'ai.model.backend="llama"', f"ai.model.model_path={str(junk)!r}", wait=False
        )
    else:
        backend = ScriptedBackend(FAST_TIMINGS, load_error="the model file is corrupt")
        village = make_village(NO_AHEAD, backend=backend, wait=False)
    assert village.ai.wait_ready(20.0) == "degraded"
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    marta, pip = npc_named(village, "Marta"), npc_named(village, "Pip")

    walk(village, LEFT, 200, until=lambda: tap.asked(marta, Trigger.GREET) is not None)
    said = open_chat(village, marta, "Anything to eat?")

    greet = [e for _, e in tap.ready(marta) if e.ask.trigger is Trigger.GREET]
    chat = [(t, e) for t, e in tap.ready(marta) if e.ask.trigger is Trigger.CHAT]
    assert [e.origin for e in greet] == ["template"]
    assert [(t, e.origin) for t, e in chat] == [(said, "template")]
    assert list(village.dialogue.latency_ticks["greet"]) == [0]
    assert {e.origin for _, e in tap.out if isinstance(e, LineReady)} == {"template"}
    assert source.report().load == "degraded"
    assert source.greetings.report().issued == 0
    assert village.ai.hud_stats()
    assert pip in village.world.npc_ids()


# -- (f) sync mode and switching --------------------------------------------------------


def test_sync_mode_blocks_the_tick_until_the_line_is_done(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    words = "One two three four five six seven eight nine ten."
    token_s = 0.02
    backend = GatedBackend(
        ScriptedConfig(load_s=0.0, ttft_s=0.0, token_s=token_s),
        script={"hit by a flying object": words},
    )
    village = make_village(NO_AHEAD, 'game.dialogue.ai_mode="sync"', backend=backend)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    pip, me = npc_named(village, "Pip"), player_id(village)
    assert village.ai.mode == "sync"

    tick = village.tick
    begin = time.perf_counter()
    village.dialogue.handle_events(tick, [SpeechWanted(tick, pip, Trigger.HIT, me)])
    blocked_s = time.perf_counter() - begin
    village.dialogue.update(tick)

    # The scripted model sleeps token_s before each word after the first.
    assert blocked_s >= (len(words.split()) - 1) * token_s
    ((shown, ready),) = tap.ready(pip)
    # The line starts from one of Pip's openers for a hit, then the model's words.
    assert (shown, ready.origin) == (tick, "model")
    assert ready.text.endswith(" " + words)
    assert ready.text.removesuffix(" " + words) in ("Ow!", "Waaah!", "Hey!")
    assert list(village.dialogue.latency_ticks["hit"]) == [0]
    assert village.dialogue.ai_ms.last() >= (len(words.split()) - 1) * token_s * 1000.0

    # The same ask in async mode returns before the line exists.
    assert village.ai.toggle_mode() == "async"
    tick = village.tick
    village.dialogue.ask(LineAsk(tick, pip, Trigger.NEAR_MISS, me))
    village.dialogue.update(tick)
    assert [e.ask.trigger for _, e in tap.ready(pip)] == [Trigger.HIT]


def test_switching_modes_at_run_time_keeps_the_model_on_one_thread(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend(ScriptedConfig(load_s=0.0, ttft_s=0.0, token_s=0.002))
    village = make_village(NO_AHEAD, backend=backend)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    pip = npc_named(village, "Pip")

    # No settling here: requests overlap the switches, as they would in a game.
    for step in range(150):
        if step % 7 == 0:
            village.ai.toggle_mode()
        if step % 10 == 3:
            village.dialogue.ask(LineAsk(village.tick, pip, Trigger.AMBIENT, None))
        village.step(LEFT if step < 100 else STAY)
    settle(village)

    threads = backend.thread_ids
    assert len(threads) == 1
    assert threads[0] != threading.get_ident()
    assert backend.max_active == 1
    assert backend.generate_calls >= 10
    shown = [e for _, e in tap.out if isinstance(e, LineReady)]
    assert {e.origin for e in shown} >= {"model"}


def test_greeting_asked_in_sync_mode_while_its_prediction_runs_is_shown(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend()
    backend.hold(lambda prompt: prompt.situation == GREETING)
    village = make_village(NO_AHEAD, backend=backend)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    marta = npc_named(village, "Marta")
    walk(
        village,
        LEFT,
        30,
        until=lambda: source.records.prediction_for(marta) is not None,
        backend=backend,
    )
    assert backend.stuck
    assert village.ai.toggle_mode() == "sync"
    asked_before = len(tap.asks)
    wait = source.runtime.wait

    def release_then_wait(handle: Handle, timeout_s: float) -> list[AiEvent]:
        backend.release()  # the held prediction finishes while the sync tick waits
        return wait(handle, timeout_s)

    monkeypatch.setattr(source.runtime, "wait", release_then_wait)
    walk(
        village,
        LEFT,
        200,
        until=lambda: tap.asked(marta, Trigger.GREET) is not None,
        backend=backend,
    )

    # The greeting's request has the prediction's signature, so the runtime merged them.
    assert [a.trigger for a in tap.asks[asked_before:]] == [Trigger.GREET]
    assert source.runtime.metrics().merged_duplicates == 1
    ((shown, ready),) = tap.ready(marta)
    assert shown == village.tick
    assert ready.origin == "prepared"
    assert village.dialogue.board.text_of(marta) == ready.text
    assert source.greetings.report().used == 1


def test_wait_ready_waits_for_the_warm_up_until_it_ends(
    make_village: Callable[..., Session],
) -> None:
    # The first measured ticks must not pay for reading the few-shot context.
    backend = GatedBackend()
    backend.hold(lambda prompt: True)
    village = make_village(NO_AHEAD, backend=backend, wait=False)
    assert village.ai.wait_ready(0.5) == "warming"  # held at its first word
    backend.release()
    assert village.ai.wait_ready(5.0) == "ready"
    assert not source_of(village).runtime.warming


# -- (f) a reply prepared while the player types -----------------------------------------


class PromptLog(ScriptedBackend):
    """A scripted backend that keeps every prompt it was given, with its token cap."""

    def __init__(self, prompt_style: str = "") -> None:
        super().__init__(FAST_TIMINGS, prompt_style=prompt_style)
        self.prompts: list[tuple[PromptSpec, int]] = []

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        self.prompts.append((prompt, params.max_tokens))
        yield from super().generate(prompt, params, should_stop)


@pytest.mark.parametrize(("style", "warm_ups"), [("village", 0), ("", 1)])
def test_only_the_few_shot_style_reads_a_warm_up_before_serving(
    make_village: Callable[..., Session], style: str, warm_ups: int
) -> None:
    # The few-shot prompts share a long context worth reading once; the village style
    # has none, so its first real line must not queue behind a prompt nobody sees.
    backend = PromptLog(prompt_style=style)
    village = make_village(NO_AHEAD, backend=backend, wait=False)
    source = source_of(village)
    wait_for(lambda: source.runtime.load_progress().state == "ready", "the model to load")
    ready_tick = village.tick
    assert village.ai.wait_ready(5.0) == "ready"
    source.poll(village.tick)
    if not warm_ups:
        assert source.serving_from_tick == ready_tick  # served from the tick it loaded
    assert source.serving_from_tick is not None
    assert [cap for _, cap in backend.prompts].count(1) == warm_ups  # a warm-up writes 1


def test_typing_reads_the_same_prompt_the_sent_line_asks_with(
    make_village: Callable[..., Session],
) -> None:
    backend = PromptLog()
    village = make_village(NO_AHEAD, backend=backend)
    pip = npc_named(village, "Pip")  # in chat range from the start
    memory = village.dialogue.memories.of(pip)
    for n in range(5):  # a full window: saying the next line folds one into the summary
        memory.record_shown("Player", f"Question number {n}?")
        memory.record_shown("Pip", f"Answer number {n}.")
    settle(village)
    assert village.world.set_talking(pip, True)
    before, before_summary = memory.exchanges, memory.summary

    tick = village.tick
    village.dialogue.typing(tick, pip, player_id(village), "Where is\x1b[31m your ball? ")
    settle(village)
    prefills = [(p, cap) for p, cap in backend.prompts if p.situation == CHAT]
    assert [cap for _, cap in prefills] == [1]  # read ahead: one token, never shown
    assert memory.exchanges == before  # nothing remembered while typing

    village.dialogue.say(tick, pip, player_id(village), "Where is your ball?")
    village.dialogue.update(tick)
    settle(village)
    chats = [p for p, _ in backend.prompts if p.situation == CHAT]
    assert len(chats) == 2
    assert chats[0] == chats[1]  # the prompt read ahead is the one the reply starts from
    assert chats[1].conversation
    assert chats[1].player_text == "Where is your ball?"
    # Saying the line slid the window (6 older lines became 7); the prefill foresaw it.
    assert before_summary.startswith("Earlier 6 lines")
    assert chats[0].notes == (memory.summary,)
    assert memory.summary.startswith("Earlier 7 lines")
    walk(village, STAY, 3)
    assert not any("ball" in e.text and e.speaker == "Pip" for e in memory.exchanges)


def test_the_sync_baseline_reads_nothing_ahead(make_village: Callable[..., Session]) -> None:
    backend = PromptLog()
    village = make_village(NO_AHEAD, 'game.dialogue.ai_mode="sync"', backend=backend)
    marta = npc_named(village, "Marta")
    settle(village)
    count = len(backend.prompts)
    village.dialogue.typing(village.tick, marta, player_id(village), "What do you sell?")
    walk(village, STAY, 2)
    settle(village)
    assert len(backend.prompts) == count
