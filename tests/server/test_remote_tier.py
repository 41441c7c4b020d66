"""The remote tier against llama.cpp's real OpenAI-compatible server on 127.0.0.1.

The server runs the packaged Gemma model in another process; the local tier is the
scripted fake (so its timing is known), and the router, the tiers' threads and the
HTTP streaming are the game's own code.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ai import (
    AiConfig,
    BreakerConfig,
    FallbackUsed,
    GenerationConfig,
    LineCompleted,
    LineFailed,
    Priority,
    RemoteConfig,
    RequestCancelled,
    Router,
    RoutingConfig,
    ScriptedBackend,
    ScriptedConfig,
    TokenStreamed,
    build_router,
)
from ai.breaker import BreakerState
from ai.events import TERMINAL_EVENTS
from game.__main__ import main
from tests.support.loopback import LlamaServer, SlowProxy
from tests.unit.ai.conftest import EventLog, RecordingFallback, fast_config, make_request
from tools.eval.bubble_audit import audit

pytestmark = [pytest.mark.server, pytest.mark.model]

# Generous: the machine is shared and the server competes for the same two cores.
_LINE_S = 60.0


def _config(base_url: str, **sections: object) -> AiConfig:
    return replace(
        fast_config(),
        remote=RemoteConfig(
            enabled=True, base_url=base_url, read_timeout_s=20.0, request_timeout_s=40.0
        ),
        **sections,  # type: ignore[arg-type]
    )


@pytest.fixture
def make_router(fallback: RecordingFallback) -> Iterator[Callable[..., Router]]:
    routers: list[Router] = []

    def build(config: AiConfig, local: ScriptedConfig | None = None) -> Router:
        backend = ScriptedBackend(local or ScriptedConfig(0.0, 0.001, 0.001))
        router = build_router(config, backend, fallback)
        routers.append(router)
        router.start()
        EventLog(router).until(lambda: all(t.state != "loading" for t in router.tiers()))  # type: ignore[arg-type]
        return router

    yield build
    for router in routers:
        router.shutdown()


def _line(router: Router, signature: str, priority: Priority, **kw: object) -> EventLog:
    log = EventLog(router)  # type: ignore[arg-type]
    handle = router.submit(make_request(signature, priority, **kw))  # type: ignore[arg-type]
    log.until(lambda: any(isinstance(e, TERMINAL_EVENTS) for e in log.of(object, handle)), _LINE_S)
    log.pump()  # the fallback, if any, arrives in the same poll
    return log


def _tier_of(log: EventLog) -> str:
    [line] = log.of(LineCompleted)
    return line.tier  # type: ignore[attr-defined,no-any-return]


def test_streams_a_line_from_the_server(
    llama_server: LlamaServer, make_router: Callable[..., Router]
) -> None:
    router = make_router(_config(llama_server.base_url))
    log = _line(router, "greet", Priority.PREDICTIVE)
    assert _tier_of(log) == "remote"
    assert log.of(TokenStreamed)
    [line] = log.of(LineCompleted)
    assert line.text.strip()  # type: ignore[attr-defined]
    remote = router.tiers()[1]
    assert remote.completed == 1
    assert remote.ttft_s.count == 1


def test_cancel_mid_stream_frees_the_lane(
    llama_server: LlamaServer, make_router: Callable[..., Router]
) -> None:
    # No stop strings and many tokens: the line would run for seconds.
    config = _config(
        llama_server.base_url, generation=GenerationConfig(stop=("<<>>",), max_tokens=400)
    )
    router = make_router(config)
    log = EventLog(router)  # type: ignore[arg-type]
    handle = router.submit(make_request("long", Priority.PREDICTIVE))
    log.until(lambda: bool(log.of(TokenStreamed)), _LINE_S)
    began = time.monotonic()
    assert router.cancel(handle)
    log.until(lambda: router.in_flight == 0, 2.0)
    assert time.monotonic() - began < 1.0
    assert [type(e) for e in log.events if isinstance(e, TERMINAL_EVENTS)] == [RequestCancelled]
    # The server is free for the next line.
    assert _tier_of(_line(router, "next", Priority.PREDICTIVE)) == "remote"


def test_server_killed_mid_stream_falls_back_opens_and_closes_the_breaker(
    own_llama_server: LlamaServer, make_router: Callable[..., Router]
) -> None:
    server = own_llama_server
    config = _config(
        server.base_url,
        generation=GenerationConfig(stop=("<<>>",), max_tokens=400),
        breaker=BreakerConfig(failures=2, window_s=60.0, cooldown_s=1.0, probe_timeout_s=30.0),
    )
    router = make_router(config)
    remote = router.tier("remote")
    assert remote is not None
    assert remote.breaker is not None
    log = EventLog(router)  # type: ignore[arg-type]
    router.submit(make_request("doomed", Priority.PREDICTIVE))
    log.until(lambda: bool(log.of(TokenStreamed)), _LINE_S)
    server.kill()
    log.until(lambda: bool(log.of(FallbackUsed)), 10.0)
    [failed] = log.of(LineFailed)
    assert failed.reason in ("stream broken", "http error")  # type: ignore[attr-defined]
    # The next remote line is refused: two failures open the breaker.
    refused = _line(router, "refused", Priority.PREDICTIVE)
    assert [e.reason for e in refused.of(LineFailed)] == ["refused"]  # type: ignore[attr-defined]
    assert remote.breaker.state is not BreakerState.CLOSED
    assert _tier_of(_line(router, "meanwhile", Priority.PREDICTIVE)) == "local"
    server.start()
    EventLog(router).until(
        lambda: remote.breaker is not None and remote.breaker.closed,  # type: ignore[arg-type]
        _LINE_S,
    )
    assert remote.breaker.times_opened >= 1
    assert _tier_of(_line(router, "back", Priority.PREDICTIVE)) == "remote"


def test_slow_tier_behind_a_proxy_loses_to_local(
    llama_server: LlamaServer, make_router: Callable[..., Router]
) -> None:
    proxy = SlowProxy(llama_server.port, delay_s=1.5)
    try:
        routing = RoutingConfig(reactive=("remote", "local"), min_samples=2)
        router = make_router(_config(proxy.base_url, routing=routing))
        tiers = [
            _tier_of(_line(router, f"r{n}", Priority.REACTIVE, deadline_s=1.0, timeout_s=_LINE_S))
            for n in range(4)
        ]
    finally:
        proxy.close()
    assert tiers == ["remote", "remote", "local", "local"]
    remote = router.tiers()[1]
    assert remote.ttft_s.p50 >= 1.5


def test_hedged_chat_the_faster_tier_wins_the_other_is_cancelled(
    llama_server: LlamaServer, make_router: Callable[..., Router], fallback: RecordingFallback
) -> None:
    # Local is slow to start here (3 s to its first token); the server answers first.
    routing = RoutingConfig(player_chat=("local", "remote"), hedge_delay_s=0.2)
    router = make_router(
        _config(llama_server.base_url, routing=routing), ScriptedConfig(0.0, 3.0, 0.001)
    )
    log = _line(router, "chat", Priority.PLAYER_CHAT)
    assert _tier_of(log) == "remote"
    local, remote = router.tiers()
    assert remote.hedges_won == 1
    assert local.hedges_lost == 1
    assert not log.of(RequestCancelled)
    assert not log.of(FallbackUsed)
    EventLog(router).until(lambda: router.in_flight == 0, 2.0)  # type: ignore[arg-type]
    # The conversation stays on the tier that answered.
    assert _tier_of(_line(router, "chat-2", Priority.PLAYER_CHAT)) == "remote"


def test_a_village_run_with_a_remote_tier_logs_each_lines_tier_and_id(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    report_path, log = tmp_path / "report.json", tmp_path / "bubbles.jsonl"
    # 20 s of play: on a slow machine the server's first lines (1-2 s to their first
    # token) come after their greetings and are dropped as late, as they should be.
    argv = ["--headless", "--backend", "scripted", "--scenario", "village", "--ticks", "1200"]
    argv += ["--log", "WARNING", "--bubble-log", str(log), "--report", str(report_path)]
    argv += ["--set", "ai.remote.enabled=true"]
    argv += ["--set", f'ai.remote.base_url="{llama_server.base_url}"']
    # A cold server reads the village's whole shared prompt first: give it time.
    argv += ["--set", "ai.remote.read_timeout_s=90", "--set", "ai.remote.request_timeout_s=120"]
    assert main(argv) == 0
    report = json.loads(report_path.read_text())
    tiers = report["ai"]["tiers"]
    assert set(tiers) == {"local", "remote"}
    assert tiers["remote"]["requests"] >= 1
    records = [json.loads(line) for line in log.read_text().splitlines()]
    written = [r for r in records if r["origin"] in ("model", "prepared")]
    assert written
    # Every model line says which tier wrote it and under which request id.
    assert all(r["tier"] in ("local", "remote") for r in written)
    assert all(isinstance(r["request_id"], int) for r in written)
    by_tier = {t: sum(1 for r in written if r["tier"] == t) for t in ("local", "remote")}
    # The report counts every line a tier wrote; some never show (stale, or not needed).
    assert all(by_tier[t] <= report["ai"]["lines_by_tier"].get(t, 0) for t in by_tier)
    assert audit(log)["violations"] == 0
