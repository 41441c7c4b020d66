"""The seam between the game and whatever writes its lines: :class:`LineRuntime`.

The game is handed a :class:`~ai.router.Router`; a lone :class:`~ai.runtime.AiRuntime`
and the benchmarks' peers offer the same calls, so the game runs on any of them, and
mypy holds each to this one list. Main thread only, like every implementation.

Outcome rules, so the caller always gets an answer:

- ``LineCompleted``: a clean line, no fallback.
- ``LineFailed`` (error, garbage, blocked, degraded), ``RequestTimedOut``,
  ``RequestDropped`` (evicted, deadline, rate_limited, shutdown) and
  ``RequestCancelled`` for any reason other than ``"cancelled"`` are each
  followed by exactly one ``FallbackUsed``.
- ``cancel(handle)`` by the caller yields ``RequestCancelled("cancelled")``
  and no fallback: the caller no longer wants the line.
- A request may start more than once (a preempted one is re-queued and begins again
  from scratch): reset its partial text on each ``RequestStarted``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from ai.config import AiConfig, ModelConfig
from ai.events import AiEvent, LoadProgress, SwapEvent, SwapProgress
from ai.load_checks import Probe
from ai.metrics import AiMetrics, TierStats
from ai.requests import Handle, LineRequest, Priority

logger = logging.getLogger(__name__)


class LineRuntime(Protocol):
    """What the game calls on the object that writes its lines.

    Nothing here blocks but :meth:`wait` and :meth:`shutdown`.
    """

    def start(self, probes: Sequence[Probe] = ()) -> None:
        """Start the worker threads; the model loads in the background.

        ``probes`` are the caller's largest prompts, labelled: once the model has loaded,
        one that leaves no room for a line marks it degraded, naming its label.
        """
        ...

    def shutdown(self) -> None:
        """Stop and join the worker threads; the next poll reports what ended."""
        ...

    def submit(self, request: LineRequest) -> Handle:
        """Queue a request and return its handle; never blocks, never raises when full."""
        ...

    def warm(self, request: LineRequest) -> None:
        """Run ``request`` only to put its prompt in the model's cache; no events follow."""
        ...

    def prefill(self, request: LineRequest) -> None:
        """Read a reply's prompt ahead, while the player types; no events follow."""
        ...

    @property
    def warming(self) -> bool:
        """Whether a warm-up sent by :meth:`warm` has not ended yet."""
        ...

    def cancel(self, handle: Handle) -> bool:
        """Cancel a request; True if it was still live (see the outcome rules)."""
        ...

    def promote(self, handle: Handle, priority: Priority, value: float) -> bool:
        """Raise a live request to ``priority`` and ``value`` (never lower them): a queued
        one moves up the queue, and a running one is no longer stopped for work of its
        old priority. True if it was still live."""
        ...

    def poll(self) -> list[AiEvent]:
        """Drain the events that are ready, in order, without blocking."""
        ...

    def wait(self, handle: Handle, timeout_s: float) -> list[AiEvent]:
        """Poll until ``handle`` ends or ``timeout_s`` passes; every event seen meanwhile."""
        ...

    def load_progress(self) -> LoadProgress:
        """How far the model's loading has got, and whether it is degraded."""
        ...

    def metrics(self) -> AiMetrics:
        """An immutable snapshot of the requests' counts and latencies (computes
        percentiles: for the HUD and reports, not for every ask)."""
        ...

    @property
    def queue_depth(self) -> int:
        """Requests waiting to start; cheap enough to read for every ask."""
        ...

    @property
    def in_flight(self) -> int:
        """Requests generating right now; cheap enough to read for every ask."""
        ...

    @property
    def multi_tier(self) -> bool:
        """Whether more than one tier writes lines (the HUD then shows each)."""
        ...

    def tiers(self) -> tuple[TierStats, ...]:
        """Each tier's state and figures, local first; empty with no tiers."""
        ...


class SwappableRuntime(LineRuntime, Protocol):
    """A :class:`LineRuntime` whose local model can change while it runs: the router.

    Kept apart from :class:`LineRuntime` so that the benchmarks' peers, which cannot
    swap, still pass as runtimes. See :mod:`ai.swap` for how a swap goes.
    """

    def swap_model(
        self, model: ModelConfig, warm_ups: Mapping[str, LineRequest] | None = None
    ) -> None:
        """Bring ``model`` up beside the serving one, to take over once it is ready.

        ``warm_ups``: the warm-up request to run for each prompt style the new model
        may report. Never blocks; a swap asked for while one runs is refused.
        """
        ...

    def swap_events(self) -> list[SwapEvent]:
        """How swaps ended since the last call (``ModelSwapped``, ``SwapRefused``).

        Call it after :meth:`poll`: the old model's last line comes from that poll.
        """
        ...

    def swap_progress(self) -> SwapProgress:
        """How far a swap has got ("idle" when none runs), for the HUD."""
        ...


@runtime_checkable
class ConfigurableRuntime(Protocol):
    """A runtime whose live settings can change while it runs (the router, a runtime).

    The benchmarks' peers need not offer it; the game checks for it before a reload.
    """

    def reconfigure(self, config: AiConfig) -> None:
        """Use ``config``'s live settings from the next request on
        (:meth:`AiConfig.with_live_settings`); the rest stays as it started. Never blocks.
        """
        ...


def poll_until(
    poll: Callable[[], list[AiEvent]], ended: Callable[[], bool], timeout_s: float
) -> list[AiEvent]:
    """Call ``poll`` every millisecond until ``ended()`` or ``timeout_s`` has passed.

    The body of every :meth:`LineRuntime.wait`: each event seen, of any request, in order.
    """
    end = time.monotonic() + max(0.0, timeout_s)
    events: list[AiEvent] = []
    while True:
        events.extend(poll())
        if ended() or time.monotonic() >= end:
            return events
        time.sleep(0.001)
