"""How a tick treats a request it just submitted: move on, or wait for the line.

``AsyncPacing`` is the game's design: submit, move on, and show the line when it has
arrived and still fits. ``SyncPacing`` is the naive design that the demo sets beside it
(F5): the tick blocks until its line is done. It still goes through the one worker
thread, so switching between the two at any moment never lets two threads into the
model. This module is the only place in the dialogue that waits (and, for headless
runs, the wait for the model to load and warm up).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from ai import AiEvent, Handle, LineRuntime


class Pacing(Protocol):
    """A strategy for what the tick does right after submitting a request."""

    @property
    def name(self) -> str:
        """ "async" or "sync", as the HUD shows it."""

    @property
    def predicts(self) -> bool:
        """Whether lines are prepared ahead of their triggers."""

    def after_submit(self, runtime: LineRuntime, handle: Handle) -> Sequence[AiEvent]:
        """Whatever events must be handled before the tick goes on."""


class AsyncPacing:
    """Zero stall: never wait; predict encounters and prepare greetings ahead."""

    name = "async"
    predicts = True

    def after_submit(self, runtime: LineRuntime, handle: Handle) -> Sequence[AiEvent]:
        """Nothing: the answer is picked up by a later poll."""
        return ()


class SyncPacing:
    """The naive baseline: the tick waits for its line, up to ``wait_s``."""

    name = "sync"
    predicts = False

    def __init__(self, wait_s: float) -> None:
        self.wait_s = wait_s

    def after_submit(self, runtime: LineRuntime, handle: Handle) -> Sequence[AiEvent]:
        """Block until the line is finished; every event seen meanwhile is handled now."""
        return runtime.wait(handle, self.wait_s)


def wait_until_ready(
    runtime: LineRuntime,
    poll: Callable[[], object],
    busy: Callable[[], bool],
    timeout_s: float,
) -> str:
    """Block until the model has loaded and ``busy()`` (its warm-up) is over, polling.

    For headless runs, never in a tick. Returns the load state, or "warming" when the
    time ran out with the warm-up still queued or running.
    """
    end = time.monotonic() + timeout_s
    while runtime.load_progress().state == "loading" and time.monotonic() < end:
        time.sleep(0.01)
    if runtime.load_progress().state != "ready":
        return runtime.load_progress().state
    poll()  # starts the warm-up
    while busy():
        if time.monotonic() >= end:
            return "warming"
        time.sleep(0.005)
        poll()
    return runtime.load_progress().state
