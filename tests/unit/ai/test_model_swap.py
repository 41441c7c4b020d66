"""Hot model swap on scripted backends: each tagged, so every line says who wrote it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import pytest

from ai import (
    AiConfig,
    AiEvent,
    FallbackUsed,
    LineCompleted,
    LineRequest,
    ModelConfig,
    ModelSwapped,
    Priority,
    PromptSpec,
    RequestCancelled,
    RequestStarted,
    Router,
    ScriptedBackend,
    ScriptedConfig,
    ScriptedHang,
    SwapEvent,
    SwapRefused,
    build_router,
)
from ai.events import TERMINAL_EVENTS
from ai.load_checks import SELF_TEST_PROMPT
from ai.scripted_backend import ScriptedReply

from .conftest import RecordingFallback, fast_config, make_request

OLD = ModelConfig(backend="scripted", adapter="")
VILLAGE = ModelConfig(backend="scripted", adapter="village-lora.gguf")


@dataclass
class Voice:
    """A script that signs each line with its backend's tag and remembers every prompt."""

    tag: str
    hold: float = 0.0
    garbage: bool = False
    prompts: list[PromptSpec] = field(default_factory=list)

    def __call__(self, prompt: PromptSpec) -> ScriptedReply:
        self.prompts.append(prompt)
        if prompt.situation == "hold" and self.hold:
            return ScriptedHang(self.hold)
        if self.garbage and prompt.situation == SELF_TEST_PROMPT.situation:
            return "... !!"
        return f"{self.tag} speaks of {prompt.situation}."

    def situations(self) -> list[str]:
        return [p.situation for p in self.prompts]


@dataclass
class Backends:
    """Makes the backend of each model swapped in, and keeps every one it made."""

    voices: list[Voice]
    load_s: float = 0.2
    load_error: str | None = None
    made: list[ScriptedBackend] = field(default_factory=list)

    def __call__(self, config: AiConfig) -> ScriptedBackend:
        voice = self.voices[len(self.made)]
        backend = ScriptedBackend(
            ScriptedConfig(self.load_s, 0.005, 0.005),
            voice,
            load_error=self.load_error,
            prompt_style="village" if config.model.adapter else "",
        )
        self.made.append(backend)
        return backend


class Game:
    """Polls the router as the game does each tick: events, then the swaps' outcomes."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self.timeline: list[AiEvent | SwapEvent] = []
        self.styles: list[tuple[int, str]] = []

    def pump(self) -> None:
        self.timeline.extend(self.router.poll())
        self.timeline.extend(self.router.swap_events())
        self.styles.append((len(self.timeline), self.router.load_progress().prompt_style))

    def until(self, condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
        end = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > end:
                pytest.fail(f"not within {timeout_s} s; last events: {self.timeline[-6:]}")
            self.pump()
            time.sleep(0.002)

    def of(self, kind: type) -> list[AiEvent | SwapEvent]:
        return [e for e in self.timeline if isinstance(e, kind)]

    def swapped(self) -> bool:
        return bool(self.of(ModelSwapped) or self.of(SwapRefused))

    def ended(self, handle: object) -> bool:
        return any(
            isinstance(e, TERMINAL_EVENTS) and e.handle == handle
            for e in self.timeline
            if not isinstance(e, ModelSwapped | SwapRefused)
        )


@pytest.fixture
def make_router(fallback: RecordingFallback) -> Iterator[Callable[..., tuple[Router, Game]]]:
    routers: list[Router] = []

    def build(
        old: Voice, backends: Backends, config: AiConfig | None = None
    ) -> tuple[Router, Game]:
        config = config or replace(fast_config(), model=OLD)
        local = ScriptedBackend(ScriptedConfig(0.0, 0.005, 0.005), old)
        router = build_router(config, local, fallback, backends=backends)
        routers.append(router)
        router.start()
        game = Game(router)
        game.until(lambda: router.load_progress().state == "ready")
        return router, game

    yield build
    for router in routers:
        router.shutdown()


def _request(n: int, situation: str = "", priority: Priority = Priority.REACTIVE) -> LineRequest:
    return make_request(f"line-{n}", priority, npc_id=n, situation=situation or f"crate {n} falls")


def _swaps_since(game: Game, start: int) -> list[AiEvent | SwapEvent]:
    return [e for e in game.timeline[start:] if isinstance(e, ModelSwapped | SwapRefused)]


def _workers() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "ai-worker")


def test_a_swap_mid_stream_loses_no_request_and_the_old_model_falls_silent_first(
    make_router: Callable[..., tuple[Router, Game]],
) -> None:
    old, new = Voice("Old"), Voice("New")
    backends = Backends([new], load_s=0.3)
    router, game = make_router(old, backends)
    handles = []
    n = 0
    next_at = time.monotonic()

    def stream() -> None:
        # A line every 20 ms while at most four are open: a busy machine slows the
        # worker, and a stream that did not wait for it would overfill the queue and
        # evict requests for a reason that has nothing to do with the swap.
        nonlocal n, next_at
        open_lines = sum(not game.ended(h) for h in handles)
        if time.monotonic() >= next_at and open_lines < 4:
            handles.append(router.submit(_request(n)))
            n += 1
            next_at += 0.02

    for _ in range(10):
        stream()
        game.pump()
        time.sleep(0.02)
    router.swap_model(replace(VILLAGE, adapter=""))
    game.until(lambda: (stream(), game.swapped())[1])
    swapped_at = len(game.timeline)
    end = time.monotonic() + 0.3
    game.until(lambda: (stream(), time.monotonic() > end)[1])
    game.until(lambda: all(game.ended(h) for h in handles))

    (event,) = game.of(ModelSwapped)
    assert isinstance(event, ModelSwapped)
    assert event.moved > 0
    lines = [e for e in game.timeline if isinstance(e, LineCompleted)]
    assert not game.of(FallbackUsed)
    # Every request answered exactly once, under the handle it was given.
    assert sorted(e.handle.id for e in lines) == sorted(h.id for h in handles)
    before = [e.text for e in game.timeline[:swapped_at] if isinstance(e, LineCompleted)]
    after = [e.text for e in game.timeline[swapped_at:] if isinstance(e, LineCompleted)]
    assert any(text.startswith("Old") for text in before)
    assert after
    assert all(text.startswith("New") for text in after)
    # The old backend never wrote a line it was not asked for: none of the moved ones.
    assert len(set(old.situations())) == len(old.situations())


def test_queued_requests_move_once_and_the_running_one_finishes_on_the_old_model(
    make_router: Callable[..., tuple[Router, Game]],
) -> None:
    old, new = Voice("Old", hold=0.4), Voice("New")
    backends = Backends([new], load_s=0.0)
    router, game = make_router(old, backends)
    running = router.submit(_request(0, "hold"))
    game.until(lambda: bool(game.of(RequestStarted)))
    queued = [router.submit(_request(n)) for n in range(1, 5)]
    router.swap_model(VILLAGE)
    game.until(game.swapped)
    game.until(lambda: all(game.ended(h) for h in [running, *queued]))

    (event,) = game.of(ModelSwapped)
    assert isinstance(event, ModelSwapped)
    assert event.moved == 4
    assert event.prompt_style == "village"
    ends = {e.handle: e for e in game.timeline if isinstance(e, TERMINAL_EVENTS)}
    assert len([e for e in game.timeline if isinstance(e, TERMINAL_EVENTS)]) == 5
    assert all(isinstance(e, LineCompleted) for e in ends.values())
    # The running line was not cut short; it ended before the swap was reported.
    assert not game.of(RequestCancelled)
    assert game.timeline.index(ends[running]) < game.timeline.index(event)
    assert [s for s in old.situations() if s != SELF_TEST_PROMPT.situation] == ["hold"]
    moved = [s for s in new.situations() if s.startswith("crate")]
    assert sorted(moved) == sorted(f"crate {n} falls" for n in range(1, 5))
    for handle in queued:
        assert ends[handle].text.startswith("New")  # type: ignore[union-attr]


def test_the_prompt_style_changes_with_the_swap_and_the_warm_up_matches_it(
    make_router: Callable[..., tuple[Router, Game]],
) -> None:
    old, on, off = Voice("Old"), Voice("On"), Voice("Off")
    router, game = make_router(old, Backends([on, off]))
    warm_ups = {
        "": replace(_request(90, "warm the few-shot prompt"), signature="warm-up"),
        "village": replace(_request(91, "warm the village prompt"), signature="warm-up"),
    }
    for model, voice, style, old_style in ((VILLAGE, on, "village", ""), (OLD, off, "", "village")):
        start = len(game.timeline)
        router.swap_model(model, warm_ups)
        game.until(lambda start=start: bool(_swaps_since(game, start)))  # type: ignore[misc]
        (event,) = _swaps_since(game, start)
        assert isinstance(event, ModelSwapped)
        assert event.prompt_style == style
        swapped_at = game.timeline.index(event)
        # Polls before the swap was reported show the old style; from then on, the new one.
        polls = [(at > swapped_at, shown) for at, shown in game.styles if at > start]
        assert {shown for after, shown in polls if not after} <= {old_style}
        assert {shown for after, shown in polls if after} == {style}
        warmed = [s for s in voice.situations() if s.startswith("warm")]
        assert warmed == [warm_ups[style].prompt.situation]
    handle = router.submit(_request(5))
    game.until(lambda: game.ended(handle))
    assert game.timeline[-1].text.startswith("Off")  # type: ignore[union-attr]
    assert router.swap_progress().state == "idle"


def test_the_old_runtime_is_gone_and_its_backend_closed_when_the_swap_is_reported(
    make_router: Callable[..., tuple[Router, Game]],
) -> None:
    old = Voice("Old")
    router, game = make_router(old, Backends([Voice("New")]))
    local = router.tier("local")
    assert local is not None
    old_lane = local.lanes[0]
    assert _workers() == 1
    states = set()
    router.swap_model(VILLAGE)
    game.until(lambda: (states.add(router.swap_progress().state), game.swapped())[1])
    assert game.of(ModelSwapped)
    assert old_lane.stopped
    assert local.lanes[0] is not old_lane
    assert _workers() == 1
    assert {"loading", "testing", "warming", "finishing"} & states
    assert router.swap_progress().state == "idle"


def test_a_model_that_will_not_load_is_refused_once_and_the_old_serves_on(
    make_router: Callable[..., tuple[Router, Game]], caplog: pytest.LogCaptureFixture
) -> None:
    old = Voice("Old")
    backends = Backends([Voice("Broken")], load_error="not a GGUF model file: broken.gguf")
    router, game = make_router(old, backends)
    caplog.set_level(logging.DEBUG)
    router.swap_model(replace(VILLAGE, model_path="broken.gguf"))
    handle = router.submit(_request(1))
    game.until(game.swapped)
    game.until(lambda: game.ended(handle) and backends.made[0].closed)
    (refused,) = game.of(SwapRefused)
    assert isinstance(refused, SwapRefused)
    assert refused.name == "the scripted model with village-lora.gguf"
    assert "not a GGUF model file" in refused.reason
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(loud) == 1
    assert "refused" in loud[0].getMessage()
    assert not game.of(ModelSwapped)
    assert [e.text for e in game.of(LineCompleted)] == ["Old speaks of crate 1 falls."]  # type: ignore[attr-defined]
    assert router.load_progress().state == "ready"
    assert router.load_progress().prompt_style == ""
    game.until(lambda: _workers() == 1)


def test_a_model_that_fails_its_test_line_is_refused_and_the_old_serves_on(
    make_router: Callable[..., tuple[Router, Game]], fallback: RecordingFallback
) -> None:
    old, broken = Voice("Old"), Voice("Broken", garbage=True)
    router, game = make_router(old, Backends([broken], load_s=0.0))
    router.swap_model(VILLAGE)
    game.until(game.swapped)
    (refused,) = game.of(SwapRefused)
    assert isinstance(refused, SwapRefused)
    assert "failed 3 times (garbage, garbage, garbage)" in refused.reason
    assert fallback.calls == []  # the test line's failures asked the game for no template
    handle = router.submit(_request(2))
    game.until(lambda: game.ended(handle))
    assert game.timeline[-1].text.startswith("Old")  # type: ignore[union-attr]


def test_a_swap_asked_for_while_one_runs_is_refused_and_the_first_goes_on(
    make_router: Callable[..., tuple[Router, Game]],
) -> None:
    router, game = make_router(Voice("Old"), Backends([Voice("On"), Voice("Off")], load_s=0.3))
    router.swap_model(VILLAGE)
    router.swap_model(OLD)
    game.until(lambda: bool(game.of(ModelSwapped)))
    refused, swapped = [e for e in game.timeline if isinstance(e, SwapRefused | ModelSwapped)]
    assert isinstance(refused, SwapRefused)
    under_way = "a swap to the scripted model with village-lora.gguf is still under way"
    assert refused.reason == under_way
    assert isinstance(swapped, ModelSwapped)
    assert swapped.prompt_style == "village"


def test_shutdown_while_the_old_model_finishes_its_line_answers_it_and_stops_both(
    make_router: Callable[..., tuple[Router, Game]],
) -> None:
    old = Voice("Old", hold=30.0)
    router, game = make_router(old, Backends([Voice("New")], load_s=0.0))
    running = router.submit(_request(0, "hold"))
    game.until(lambda: bool(game.of(RequestStarted)))
    router.swap_model(VILLAGE)
    game.until(lambda: router.swap_progress().state == "finishing")
    assert router.in_flight == 1  # the old model's line, still counted
    router.shutdown()
    game.until(lambda: game.ended(running))
    ends = [e for e in game.timeline if isinstance(e, TERMINAL_EVENTS)]
    assert [(type(e), e.reason) for e in ends] == [(RequestCancelled, "shutdown")]  # type: ignore[union-attr]
    assert len(game.of(FallbackUsed)) == 1
    assert _workers() == 0
    assert not game.of(ModelSwapped)


def test_counters_do_not_go_back_after_a_swap(
    make_router: Callable[..., tuple[Router, Game]],
) -> None:
    old = Voice("Old", hold=0.3)
    config = replace(fast_config(), model=OLD)
    router, game = make_router(old, Backends([Voice("New")], load_s=0.0), config)
    hold = router.submit(_request(0, "hold", Priority.AMBIENT))
    game.until(lambda: bool(game.of(RequestStarted)))
    chat = router.submit(make_request("chat", Priority.PLAYER_CHAT, npc_id=7))
    game.until(lambda: game.ended(hold) and game.ended(chat))
    before = router.metrics()
    assert before.preempted == 1
    router.swap_model(VILLAGE)
    game.until(game.swapped)
    after = router.metrics()
    assert after.preempted == before.preempted
    assert after.requeued == before.requeued
