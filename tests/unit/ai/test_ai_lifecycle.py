"""Cancellation, shutdown, failures, degraded mode and threading of AiRuntime."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from ai import (
    AiConfig,
    AiRuntime,
    FallbackUsed,
    HygieneConfig,
    LineCompleted,
    LineFailed,
    LineRequest,
    LlamaBackend,
    ModelConfig,
    Priority,
    RequestCancelled,
    RequestDropped,
    RequestStarted,
    RuntimeConfig,
    ScriptedBackend,
    ScriptedError,
    ScriptedHang,
    TokenStreamed,
)
from tests.unit.ai.conftest import EventLog, RecordingFallback, fast_config, make_request

SLOW_LINE = " ".join(f"word{i}" for i in range(40)) + "."


def _slow_runtime(make_runtime: Callable[..., AiRuntime]) -> tuple[AiRuntime, ScriptedBackend]:
    config = fast_config(ttft_s=0.01, token_s=0.02)
    backend = ScriptedBackend(config.scripted, script=lambda prompt: SLOW_LINE)
    return make_runtime(config, backend), backend


def test_cancel_mid_stream_stops_generation_without_fallback(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    runtime, _ = _slow_runtime(make_runtime)
    log = EventLog(runtime)
    handle = runtime.submit(make_request("x"))
    log.until(lambda: len(log.of(TokenStreamed, handle)) >= 2)
    assert runtime.cancel(handle) is True
    assert runtime.cancel(handle) is False
    log.pump()
    cancelled = log.of(RequestCancelled, handle)
    assert [e.reason for e in cancelled if isinstance(e, RequestCancelled)] == ["cancelled"]
    log.until(lambda: runtime.in_flight == 0, timeout_s=1.0)
    streamed = len(log.of(TokenStreamed, handle))
    log.pump()
    assert len(log.of(TokenStreamed, handle)) == streamed
    assert not log.of(LineCompleted)
    assert not log.of(FallbackUsed)
    assert runtime.metrics().cancelled == 1


def test_cancel_queued_request(make_runtime: Callable[..., AiRuntime]) -> None:
    runtime = make_runtime(fast_config(), ScriptedBackend(), start=False)
    log = EventLog(runtime)
    handle = runtime.submit(make_request("q"))
    assert runtime.cancel(handle)
    assert runtime.queue_depth == 0
    log.pump()
    assert [type(e) for e in log.events] == [RequestCancelled]
    runtime.start()
    kept = runtime.submit(make_request("k"))
    log.until(lambda: bool(log.of(LineCompleted)))
    assert [e.handle for e in log.of(RequestStarted)] == [kept]


def test_shutdown_mid_generation_joins_quickly(make_runtime: Callable[..., AiRuntime]) -> None:
    config = fast_config()
    backend = ScriptedBackend(config.scripted, script=lambda prompt: ScriptedHang(60.0))
    runtime = make_runtime(config, backend)
    log = EventLog(runtime)
    running = runtime.submit(make_request("r"))
    queued = runtime.submit(make_request("q", Priority.AMBIENT))
    log.until(lambda: bool(log.of(RequestStarted)))
    begin = time.perf_counter()
    runtime.shutdown()
    assert time.perf_counter() - begin < 1.0
    assert not any(t.name == "ai-worker" and t.is_alive() for t in threading.enumerate())
    assert backend.closed
    log.pump()
    assert [(e.handle, e.reason) for e in log.of(RequestCancelled)] == [(running, "shutdown")]
    assert [(e.handle, e.reason) for e in log.of(RequestDropped)] == [(queued, "shutdown")]
    assert {e.handle for e in log.of(FallbackUsed)} == {running, queued}
    late = runtime.submit(make_request("late"))
    log.pump()
    assert [e.reason for e in log.of(RequestDropped, late)] == ["shutdown"]


def test_backend_error_falls_back(make_runtime: Callable[..., AiRuntime]) -> None:
    script = {"boom": ScriptedError("boom"), "late boom": ScriptedError("late", after_words=3)}
    runtime = make_runtime(fast_config(), ScriptedBackend(fast_config().scripted, script=script))
    log = EventLog(runtime)
    first = runtime.submit(make_request("a", situation="boom"))
    second = runtime.submit(make_request("b", situation="late boom"))
    log.until(lambda: len(log.of(FallbackUsed)) == 2)
    assert [(e.handle, e.reason) for e in log.of(LineFailed)] == [
        (first, "error"),
        (second, "error"),
    ]
    assert [(e.handle, e.reason) for e in log.of(FallbackUsed)] == [
        (first, "error"),
        (second, "error"),
    ]
    # The worker survives and serves the next request.
    ok = runtime.submit(make_request("c"))
    log.until(lambda: bool(log.of(LineCompleted, ok)))


@pytest.mark.parametrize(
    ("output", "reason"),
    [("@@@ ###", "garbage"), ("*", "garbage"), ("You darn fool, get out!", "unfit")],
)
def test_rejected_output_falls_back(
    make_runtime: Callable[..., AiRuntime], output: str, reason: str
) -> None:
    config = AiConfig(
        scripted=fast_config().scripted, hygiene=HygieneConfig(blocklist=("darn", "heck"))
    )
    runtime = make_runtime(config, ScriptedBackend(config.scripted, script=lambda p: output))
    log = EventLog(runtime)
    handle = runtime.submit(make_request("g"))
    log.until(lambda: bool(log.of(FallbackUsed)))
    assert [(e.handle, e.reason) for e in log.of(LineFailed)] == [(handle, reason)]
    fallbacks = log.of(FallbackUsed)
    assert [(e.handle, e.reason) for e in fallbacks] == [(handle, reason)]
    assert isinstance(fallbacks[0], FallbackUsed)
    assert fallbacks[0].text == "fallback for g"
    assert not log.of(LineCompleted)


def test_completed_line_is_cleaned(make_runtime: Callable[..., AiRuntime]) -> None:
    raw = 'Bess: *wipes flour off her hands* "Careful with that crate!" (laughs) More.\nNext'
    config = fast_config()
    runtime = make_runtime(config, ScriptedBackend(config.scripted, script=lambda p: raw))
    log = EventLog(runtime)
    handle = runtime.submit(make_request("c"))
    log.until(lambda: bool(log.of(LineCompleted)))
    line = log.of(LineCompleted, handle)[0]
    assert isinstance(line, LineCompleted)
    assert line.text == "Careful with that crate! More."
    assert line.stats.tokens == len(raw.split())
    assert all(
        '"' not in e.text_so_far for e in log.of(TokenStreamed) if isinstance(e, TokenStreamed)
    )


def test_a_line_that_does_not_stream_arrives_whole(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    raw = "Careful with that crate, it holds my best flour."
    config = fast_config()
    runtime = make_runtime(config, ScriptedBackend(config.scripted, script=lambda p: raw))
    log = EventLog(runtime)
    streamed = runtime.submit(make_request("s"))
    whole = runtime.submit(make_request("w", stream=False))
    log.until(lambda: len(log.of(LineCompleted)) == 2)
    assert len(log.of(TokenStreamed, streamed)) == len(raw.split())
    assert not log.of(TokenStreamed, whole)
    line = log.of(LineCompleted, whole)[0]
    assert isinstance(line, LineCompleted)
    assert line.text == raw
    assert line.stats.tokens == len(raw.split())


def test_broken_fallback_source_still_answers(fallback: RecordingFallback) -> None:
    class Broken:
        def fallback_line(self, request: LineRequest) -> str:
            raise KeyError(request.signature)

    runtime = AiRuntime(fast_config(rate_limit_s=5.0), ScriptedBackend(), Broken())
    runtime.submit(make_request("a", npc_id=1))
    runtime.submit(make_request("b", npc_id=1))
    events = runtime.poll()
    runtime.shutdown()
    texts = [e.text for e in events if isinstance(e, FallbackUsed)]
    assert texts == ["..."]


def test_load_failure_degrades_and_every_request_falls_back(
    make_runtime: Callable[..., AiRuntime], fallback: RecordingFallback
) -> None:
    config = fast_config(load_s=0.05)
    backend = ScriptedBackend(config.scripted, load_error="model file not found: /nope.gguf")
    runtime = make_runtime(config, backend, start=False)
    log = EventLog(runtime)
    waiting = runtime.submit(make_request("w"))
    runtime.start()
    log.until(lambda: runtime.load_progress().state == "degraded")
    progress = runtime.load_progress()
    assert progress.error == "model file not found: /nope.gguf"
    later = runtime.submit(make_request("l"))
    log.until(lambda: len(log.of(FallbackUsed)) == 2)
    assert [(e.handle, e.reason) for e in log.of(LineFailed)] == [
        (waiting, "degraded"),
        (later, "degraded"),
    ]
    assert all(e.reason == "degraded" for e in log.of(FallbackUsed))
    assert set(fallback.thread_names) == {threading.current_thread().name}


def test_requests_wait_while_loading(make_runtime: Callable[..., AiRuntime]) -> None:
    config = fast_config(load_s=0.2)
    runtime = make_runtime(config, ScriptedBackend(config.scripted))
    log = EventLog(runtime)
    assert runtime.load_progress().state == "loading"
    handle = runtime.submit(make_request("early"))
    log.until(lambda: bool(log.of(LineCompleted, handle)))
    assert runtime.load_progress().state == "ready"


def test_only_the_worker_thread_touches_the_backend(
    make_runtime: Callable[..., AiRuntime], fallback: RecordingFallback
) -> None:
    config = fast_config()
    backend = ScriptedBackend(config.scripted)
    runtime = make_runtime(config, backend)
    log = EventLog(runtime)
    for i in range(5):
        runtime.submit(make_request(f"s{i}"))
    log.until(lambda: len(log.of(LineCompleted)) == 5)
    assert len(backend.thread_ids) == 1
    assert backend.thread_ids[0] != threading.get_ident()


def test_wait_blocks_until_the_line_is_done(make_runtime: Callable[..., AiRuntime]) -> None:
    runtime, _ = _slow_runtime(make_runtime)
    handle = runtime.submit(make_request("sync"))
    events = runtime.wait(handle, timeout_s=5.0)
    assert isinstance(events[-1], LineCompleted)
    assert events[-1].handle == handle
    assert isinstance(events[0], RequestStarted)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        (b"not a model at all", "bad magic"),
        (b"GGUF" + bytes(64), "could not load"),
    ],
)
def test_llama_backend_bad_model_file_degrades(
    make_runtime: Callable[..., AiRuntime], tmp_path: Path, content: bytes | None, message: str
) -> None:
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    config = AiConfig(model=ModelConfig(model_path=str(path)))
    runtime = make_runtime(config, LlamaBackend(config))
    log = EventLog(runtime)
    handle = runtime.submit(make_request("m"))
    log.until(lambda: runtime.load_progress().state == "degraded")
    error = runtime.load_progress().error
    assert error is not None
    assert message in error
    assert str(path) in error
    log.until(lambda: bool(log.of(FallbackUsed, handle)))
    assert [e.reason for e in log.of(LineFailed)] == ["degraded"]


def test_switch_interval_applied_while_running_and_restored(fallback: RecordingFallback) -> None:
    before = sys.getswitchinterval()
    config = replace(fast_config(), runtime=RuntimeConfig(switch_interval_s=0.002))
    runtime = AiRuntime(config, ScriptedBackend(config.scripted), fallback)
    runtime.start()
    try:
        assert sys.getswitchinterval() == 0.002
    finally:
        runtime.shutdown()
    assert sys.getswitchinterval() == before
