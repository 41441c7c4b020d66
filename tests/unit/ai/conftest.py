"""Fakes and helpers for the AI runtime tests: a manual clock, a recording
fallback source and bounded waiting (no bare sleeps)."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator

import pytest

from ai import (
    AiConfig,
    AiEvent,
    AiRuntime,
    Backend,
    LineRequest,
    Priority,
    PromptSpec,
    SchedulerConfig,
    ScriptedConfig,
)

CONTEXT = (
    "Lines spoken by characters in a fantasy village game.\n"
    'Farmer (it starts raining): "Good for the turnips, bad for my knees."\n'
)


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self, start: float = 100.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class RecordingFallback:
    """Fallback source that remembers which thread asked and for what."""

    def __init__(self) -> None:
        self.calls: list[LineRequest] = []
        self.thread_names: list[str] = []

    def fallback_line(self, request: LineRequest) -> str:
        import threading

        self.calls.append(request)
        self.thread_names.append(threading.current_thread().name)
        return f"fallback for {request.signature}"


def make_request(
    signature: str,
    priority: Priority = Priority.REACTIVE,
    npc_id: int | None = None,
    situation: str = "a crate falls next to her",
    deadline_s: float = 30.0,
    timeout_s: float = 60.0,
    speaker: str = "Bess the baker",
    stream: bool = True,
) -> LineRequest:
    """A streamed request with generous budgets unless told otherwise."""
    return LineRequest(
        npc_id=zlib.crc32(signature.encode()) % 10_000 if npc_id is None else npc_id,
        priority=priority,
        signature=signature,
        prompt=PromptSpec(context=CONTEXT, speaker=speaker, situation=situation),
        snapshot={"tick": 1, "signature": signature},
        deadline_s=deadline_s,
        timeout_s=timeout_s,
        stream=stream,
    )


def fast_config(
    capacity: int = 32,
    rate_limit_s: float = 0.0,
    load_s: float = 0.0,
    ttft_s: float = 0.001,
    token_s: float = 0.001,
) -> AiConfig:
    """Config for scripted runs: quick timings, no rate limit unless asked."""
    return AiConfig(
        scheduler=SchedulerConfig(queue_capacity=capacity, rate_limit_s=rate_limit_s),
        scripted=ScriptedConfig(load_s=load_s, ttft_s=ttft_s, token_s=token_s),
    )


class EventLog:
    """Collects every event a runtime produces, polling with a bounded wait."""

    def __init__(self, runtime: AiRuntime) -> None:
        self.runtime = runtime
        self.events: list[AiEvent] = []

    def pump(self) -> list[AiEvent]:
        new = self.runtime.poll()
        self.events.extend(new)
        return new

    def until(self, condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
        """Poll until ``condition()`` holds; fail the test after ``timeout_s``."""
        end = time.monotonic() + timeout_s
        while True:
            self.pump()
            if condition():
                return
            if time.monotonic() > end:
                pytest.fail(f"condition not met within {timeout_s} s; events: {self.events}")
            time.sleep(0.002)

    def of(self, kind: type, handle: object = None) -> list[AiEvent]:
        return [
            e for e in self.events if isinstance(e, kind) and (handle is None or e.handle == handle)
        ]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def fallback() -> RecordingFallback:
    return RecordingFallback()


@pytest.fixture
def make_runtime(
    fallback: RecordingFallback,
) -> Iterator[Callable[..., AiRuntime]]:
    """Build runtimes that are always shut down at the end of the test."""
    runtimes: list[AiRuntime] = []

    def build(
        config: AiConfig,
        backend: Backend,
        clock: Callable[[], float] = time.perf_counter,
        start: bool = True,
    ) -> AiRuntime:
        runtime = AiRuntime(config, backend, fallback, clock=clock)
        runtimes.append(runtime)
        if start:
            runtime.start()
        return runtime

    yield build
    for runtime in runtimes:
        runtime.shutdown()
