"""The router over two scripted tiers: routing by class, breaker, latency, hedging, stickiness."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from ai import (
    AiConfig,
    BreakerConfig,
    FallbackUsed,
    LineCompleted,
    LineFailed,
    Priority,
    PromptSpec,
    RemoteConfig,
    RequestCancelled,
    RequestStarted,
    Router,
    RoutingConfig,
    ScriptedBackend,
    ScriptedConfig,
    ScriptedError,
    ScriptedHang,
    build_router,
)
from ai.breaker import BreakerState, CircuitBreaker
from ai.events import TERMINAL_EVENTS
from ai.scripted_backend import ScriptedReply, default_line

from .conftest import EventLog, FakeClock, RecordingFallback, fast_config, make_request


class Switch:
    """A script whose reply the test changes while the tier runs."""

    def __init__(self) -> None:
        self.reply: ScriptedReply | None = None

    def __call__(self, prompt: PromptSpec) -> ScriptedReply:
        return default_line(prompt) if self.reply is None else self.reply


def _config(routing: RoutingConfig | None = None, breaker: BreakerConfig | None = None) -> AiConfig:
    return replace(
        fast_config(),
        remote=RemoteConfig(enabled=True),
        routing=routing or RoutingConfig(hedge_delay_s=0.2),
        breaker=breaker or BreakerConfig(failures=2, window_s=10.0, cooldown_s=0.3),
    )


@pytest.fixture
def make_router(fallback: RecordingFallback) -> Iterator[Callable[..., Router]]:
    routers: list[Router] = []

    def build(
        config: AiConfig,
        remote: ScriptedBackend,
        local: ScriptedBackend | None = None,
    ) -> Router:
        local = local or ScriptedBackend(config.scripted)
        router = build_router(config, local, fallback, remote_backend=lambda: remote)
        routers.append(router)
        router.start()
        log = EventLog(router)  # type: ignore[arg-type]
        log.until(lambda: all(t.state != "loading" for t in router.tiers()))
        return router

    yield build
    for router in routers:
        router.shutdown()


def _ended(log: EventLog, handle: object) -> bool:
    return any(isinstance(e, TERMINAL_EVENTS) for e in log.of(object, handle))


def _run(router: Router, request_signature: str, priority: Priority, **kw: object) -> EventLog:
    log = EventLog(router)  # type: ignore[arg-type]
    handle = router.submit(make_request(request_signature, priority, **kw))  # type: ignore[arg-type]
    log.until(lambda: _ended(log, handle))
    return log


def test_each_class_goes_to_its_first_tier(make_router: Callable[..., Router]) -> None:
    router = make_router(_config(), ScriptedBackend(ScriptedConfig(0, 0.001, 0.001)))
    remote_line = _run(router, "greet", Priority.PREDICTIVE).of(LineCompleted)
    local_line = _run(router, "hit", Priority.REACTIVE).of(LineCompleted)
    assert [e.tier for e in remote_line] == ["remote"]  # type: ignore[attr-defined]
    assert [e.tier for e in local_line] == ["local"]  # type: ignore[attr-defined]
    tiers = {t.name: t for t in router.tiers()}
    assert tiers["remote"].requests == 1
    assert tiers["local"].requests == 1


def test_breaker_opens_lines_go_local_and_a_probe_closes_it(
    make_router: Callable[..., Router], fallback: RecordingFallback
) -> None:
    switch = Switch()
    router = make_router(_config(), ScriptedBackend(ScriptedConfig(0, 0.001, 0.001), switch))
    switch.reply = ScriptedError("connection refused")
    for n in range(2):
        log = _run(router, f"fail-{n}", Priority.PREDICTIVE)
        assert [type(e) for e in log.events if isinstance(e, TERMINAL_EVENTS)] == [LineFailed]
        assert len(log.of(FallbackUsed)) == 1
    remote = router.tier("remote")
    assert remote is not None
    assert remote.breaker is not None
    assert remote.breaker.state is BreakerState.OPEN
    assert [e.tier for e in _run(router, "after", Priority.PREDICTIVE).of(LineCompleted)] == [  # type: ignore[attr-defined]
        "local"
    ]
    # After the cool-down one probe goes out; while the tier still fails it stays open.
    log = EventLog(router)  # type: ignore[arg-type]
    log.until(
        lambda: (
            remote.breaker is not None
            and remote.breaker.times_opened == 1
            and remote.breaker.state is BreakerState.OPEN
            and remote.requests == 2
        )
    )
    switch.reply = None
    log.until(lambda: remote.breaker is not None and remote.breaker.closed, timeout_s=5.0)
    assert [e.tier for e in _run(router, "back", Priority.PREDICTIVE).of(LineCompleted)] == [  # type: ignore[attr-defined]
        "remote"
    ]
    # Probes never reach the game: only the lines asked for were answered.
    assert len(fallback.calls) == 2


def test_slow_tier_is_skipped_once_its_p95_misses_the_deadline(
    make_router: Callable[..., Router],
) -> None:
    routing = RoutingConfig(reactive=("remote", "local"), min_samples=2)
    router = make_router(_config(routing), ScriptedBackend(ScriptedConfig(0, 0.4, 0.001)))
    # Not streamed: no token events, so the router learns the latency from the line's stats.
    logs = [
        _run(router, f"r{n}", Priority.REACTIVE, deadline_s=0.3, stream=False) for n in range(4)
    ]
    tiers = [log.of(LineCompleted)[0].tier for log in logs]  # type: ignore[attr-defined]
    assert tiers == ["remote", "remote", "local", "local"]


def test_hedged_chat_faster_tier_wins_and_the_other_is_cancelled(
    make_router: Callable[..., Router], fallback: RecordingFallback
) -> None:
    switch = Switch()
    remote = ScriptedBackend(ScriptedConfig(0, 0.001, 0.001), switch)
    router = make_router(_config(), remote)
    switch.reply = ScriptedHang(30.0)
    began = time.monotonic()
    log = _run(router, "chat", Priority.PLAYER_CHAT)
    completed = log.of(LineCompleted)
    assert [e.tier for e in completed] == ["local"]  # type: ignore[attr-defined]
    assert time.monotonic() - began < 5.0
    assert not log.of(RequestCancelled)
    assert not log.of(FallbackUsed)
    assert not fallback.calls
    tiers = {t.name: t for t in router.tiers()}
    assert tiers["local"].hedges_won == 1
    assert tiers["remote"].hedges_lost == 1
    # The losing leg really stopped: the remote lane is free again.
    log.until(lambda: tiers["remote"].in_flight == 0 and router.tiers()[1].in_flight == 0)


def test_chat_failing_before_its_first_token_hedges_at_once(
    make_router: Callable[..., Router], fallback: RecordingFallback
) -> None:
    switch = Switch()
    switch.reply = ScriptedError("boom")
    config = _config(RoutingConfig(hedge_delay_s=10.0))
    router = make_router(config, ScriptedBackend(ScriptedConfig(0, 0.001, 0.001), switch))
    began = time.monotonic()
    log = _run(router, "chat", Priority.PLAYER_CHAT)
    assert [e.tier for e in log.of(LineCompleted)] == ["local"]  # type: ignore[attr-defined]
    assert time.monotonic() - began < 5.0
    assert not log.of(LineFailed)
    assert not log.of(FallbackUsed)


def test_conversation_sticks_to_its_tier_while_healthy(
    make_router: Callable[..., Router],
) -> None:
    # Chat prefers local here; a conversation that started on remote stays there.
    routing = RoutingConfig(player_chat=("local", "remote"), hedge_delay_s=0.0)
    local = ScriptedBackend(ScriptedConfig(0, 0.5, 0.001))
    router = make_router(_config(routing), ScriptedBackend(ScriptedConfig(0, 0.001, 0.001)), local)
    first = _run(router, "chat-1", Priority.PLAYER_CHAT, npc_id=5).of(LineCompleted)
    assert [e.tier for e in first] == ["remote"]  # type: ignore[attr-defined]
    routing_only = replace(routing, hedge_delay_s=30.0)
    router._routing = routing_only  # no hedge now: the first tier alone answers
    again = _run(router, "chat-2", Priority.PLAYER_CHAT, npc_id=5).of(LineCompleted)
    other = _run(router, "chat-3", Priority.PLAYER_CHAT, npc_id=6).of(LineCompleted)
    assert [e.tier for e in again] == ["remote"]  # type: ignore[attr-defined]
    assert [e.tier for e in other] == ["local"]  # type: ignore[attr-defined]


def test_cancel_stops_every_leg_and_answers_once(make_router: Callable[..., Router]) -> None:
    hang = ScriptedBackend(ScriptedConfig(0, 0.001, 0.001), lambda prompt: ScriptedHang(30.0))
    local = ScriptedBackend(ScriptedConfig(0, 0.001, 0.001), lambda prompt: ScriptedHang(30.0))
    router = make_router(_config(RoutingConfig(hedge_delay_s=0.0)), hang, local)
    log = EventLog(router)  # type: ignore[arg-type]
    handle = router.submit(make_request("chat", Priority.PLAYER_CHAT))
    log.until(lambda: router.in_flight == 2)
    assert router.cancel(handle)
    assert not router.cancel(handle)
    log.until(lambda: router.in_flight == 0)
    time.sleep(0.05)
    log.pump()
    assert [type(e) for e in log.events if isinstance(e, TERMINAL_EVENTS)] == [RequestCancelled]
    assert not log.of(FallbackUsed)


def test_one_tier_router_is_the_runtime(make_runtime: object, fallback: RecordingFallback) -> None:
    router = build_router(fast_config(), ScriptedBackend(ScriptedConfig(0, 0.001, 0.001)), fallback)
    router.start()
    try:
        assert not router.multi_tier
        assert [t.name for t in router.tiers()] == ["local"]
        log = EventLog(router)  # type: ignore[arg-type]
        handle = router.submit(make_request("a", Priority.PLAYER_CHAT))
        log.until(lambda: _ended(log, handle))
        assert [e.tier for e in log.of(LineCompleted)] == ["local"]  # type: ignore[attr-defined]
        assert router.metrics().completed == 1
    finally:
        router.shutdown()


def test_breaker_counts_failures_in_a_window_and_probes_once(clock: FakeClock) -> None:
    breaker = CircuitBreaker(BreakerConfig(failures=3, window_s=10.0, cooldown_s=5.0))
    breaker.record_failure(clock(), "refused")
    clock.advance(11.0)  # the first failure leaves the window
    breaker.record_failure(clock(), "refused")
    breaker.record_failure(clock(), "refused")
    assert breaker.closed
    breaker.record_failure(clock(), "timeout")
    assert breaker.state is BreakerState.OPEN
    assert breaker.times_opened == 1
    assert not breaker.probe_due(clock())
    clock.advance(5.0)
    assert breaker.probe_due(clock())
    assert not breaker.probe_due(clock())
    assert breaker.state is BreakerState.HALF_OPEN
    breaker.record_failure(clock(), "refused")
    assert breaker.state is BreakerState.OPEN
    clock.advance(5.0)
    assert breaker.probe_due(clock())
    breaker.record_success()
    assert breaker.closed


def test_prefill_reads_ahead_on_the_local_tier_and_only_the_newest_waits(
    make_router: Callable[..., Router],
) -> None:
    local_seen: list[tuple[str, str]] = []

    def remember(prompt: PromptSpec) -> ScriptedReply:
        local_seen.append((prompt.situation, prompt.player_text))
        return default_line(prompt)

    remote = ScriptedBackend(ScriptedConfig(0, 0.001, 0.001))
    local = ScriptedBackend(ScriptedConfig(0, 0.05, 0.001), remember)  # slow to start
    router = make_router(_config(), remote, local)
    log = EventLog(router)  # type: ignore[arg-type]
    # Keep the local worker busy so the prefills queue behind it.
    busy = router.submit(make_request("hit", Priority.REACTIVE))
    log.until(lambda: router.in_flight == 1)
    for typed in ("Where", "Where is the", "Where is the ball?"):
        ask = make_request("chat", Priority.PLAYER_CHAT)
        router.prefill(replace(ask, prompt=replace(ask.prompt, player_text=typed)))
    log.until(lambda: _ended(log, busy))
    log.until(lambda: router.in_flight == 0 and router.queue_depth == 0)
    time.sleep(0.05)
    log.pump()
    prefilled = [text for situation, text in local_seen if text]
    assert prefilled == ["Where is the ball?"]  # the two older ones were still queued
    assert [e.handle for e in log.events] == [busy] * len(log.events)  # none reached us
    assert {t.name: t.requests for t in router.tiers()}["remote"] == 0


def test_a_server_asking_to_retry_later_opens_the_breaker_for_that_long(
    clock: FakeClock,
) -> None:
    breaker = CircuitBreaker(BreakerConfig(failures=3, window_s=10.0, cooldown_s=5.0))
    breaker.hold_off(clock(), 30.0)  # one 429 with Retry-After: 30
    assert breaker.state is BreakerState.OPEN
    clock.advance(29.0)
    assert not breaker.probe_due(clock()), "no probe before the server's time is up"
    clock.advance(1.5)
    assert breaker.probe_due(clock())


def test_a_start_again_after_a_preemption_is_passed_on_with_the_lost_run(
    make_router: Callable[..., Router],
) -> None:
    local_only = RoutingConfig(
        player_chat=("local",), reactive=("local",), predictive=("local",), ambient=("local",)
    )
    slow_start = ScriptedBackend(ScriptedConfig(0, 0.3, 0.001))
    router = make_router(
        _config(local_only), ScriptedBackend(ScriptedConfig(0, 0.001, 0.001)), slow_start
    )
    log = EventLog(router)  # type: ignore[arg-type]
    predicted = router.submit(make_request("p", Priority.PREDICTIVE, situation="walks by"))
    log.until(lambda: bool(log.of(RequestStarted, predicted)))
    time.sleep(0.05)  # stopped before its first token
    router.submit(make_request("c", Priority.PLAYER_CHAT, situation="greets you"))
    log.until(lambda: _ended(log, predicted))
    starts = [e for e in log.of(RequestStarted, predicted) if isinstance(e, RequestStarted)]
    assert len(starts) == 2
    assert starts[0].preempted_s == 0.0
    assert starts[1].preempted_s >= 0.04
