"""Shutdown and cancel reach into a native call through the backend's interrupt.

``NativeLikeBackend`` blocks inside ``generate`` the way a long prompt evaluation in
llama.cpp does: it never looks at ``should_stop``, only at its interrupt flag, and then
fails as an aborted ``llama_decode`` does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from ai import AiRuntime, GenerationParams, LineCompleted, PromptSpec, RequestCancelled
from ai.backend import ProgressCallback, StopCheck
from tests.unit.ai.conftest import EventLog, fast_config, make_request


class NativeLikeBackend:
    """Blocks in "prompt evaluation" until interrupted, for prompts whose speaker is "slow"."""

    def __init__(self, load_s: float = 0.0) -> None:
        self._interrupted = threading.Event()
        self._load_s = load_s
        self.interrupts = 0
        self.loaded = False

    def load(self, progress: ProgressCallback) -> None:
        end = time.perf_counter() + self._load_s
        while time.perf_counter() < end:
            progress(0.5, "hashing")
            time.sleep(0.005)
        self.loaded = True

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        if prompt.speaker == "slow" and not self._interrupted.wait(30.0):
            raise AssertionError("never interrupted")
        if self._interrupted.is_set():
            raise RuntimeError("llama_decode returned 2")
        yield "Fine "
        yield "day."

    def close(self) -> None:
        pass

    def prompt_room(self, prompt: PromptSpec) -> int:
        return 1000

    @property
    def prompt_style(self) -> str:
        """No adapter here: any base model's prompts."""
        return ""

    def interrupt(self) -> None:
        self.interrupts += 1
        self._interrupted.set()

    def resume(self) -> None:
        self._interrupted.clear()


def _slow(signature: str):  # type: ignore[no-untyped-def]
    request = make_request(signature)
    from dataclasses import replace

    return replace(request, prompt=replace(request.prompt, speaker="slow"))


def test_shutdown_interrupts_a_native_call_and_joins(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    backend = NativeLikeBackend()
    runtime = make_runtime(fast_config(), backend)
    log = EventLog(runtime)
    runtime.submit(_slow("stuck"))
    log.until(lambda: runtime.in_flight == 1)
    begin = time.perf_counter()
    runtime.shutdown()
    assert time.perf_counter() - begin < 1.0
    assert backend.interrupts == 1
    assert not any(t.name == "ai-worker" and t.is_alive() for t in threading.enumerate())


def test_cancel_interrupts_then_the_next_request_runs(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    backend = NativeLikeBackend()
    runtime = make_runtime(fast_config(), backend)
    log = EventLog(runtime)
    stuck = runtime.submit(_slow("stuck"))
    log.until(lambda: runtime.in_flight == 1)
    assert runtime.cancel(stuck)
    after = runtime.submit(make_request("after"))
    log.until(lambda: bool(log.of(LineCompleted, after)))
    assert [e.reason for e in log.of(RequestCancelled, stuck)] == ["cancelled"]
    assert backend.interrupts == 1
    # The aborted call was a cancel, not a failure: nothing counted as an error.
    assert runtime.metrics().failed == {}


def test_shutdown_while_loading_stops_the_load(make_runtime: Callable[..., AiRuntime]) -> None:
    backend = NativeLikeBackend(load_s=30.0)
    runtime = make_runtime(fast_config(), backend)
    time.sleep(0.05)
    begin = time.perf_counter()
    runtime.shutdown()
    assert time.perf_counter() - begin < 1.0
    assert not backend.loaded
    assert runtime.load_progress().state == "loading"  # stopped, not degraded


def test_worker_thread_is_not_a_daemon(make_runtime: Callable[..., AiRuntime]) -> None:
    make_runtime(fast_config(), NativeLikeBackend())
    workers = [t for t in threading.enumerate() if t.name == "ai-worker"]
    assert workers
    assert not any(t.daemon for t in workers)
