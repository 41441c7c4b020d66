"""Counters and latency windows for the AI layer.

Recording happens on the main thread inside ``submit``/``poll``/``cancel`` and
must cost next to nothing: a counter increment or a bounded ``deque`` append.
Percentiles are computed only when someone asks for a snapshot: :class:`AiMetrics`
for a runtime's requests, :class:`TierStats` for one tier behind the router.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ai.events import (
    LineCompleted,
    RequestCancelled,
    RequestDropped,
    RequestStats,
    RequestTimedOut,
    TerminalEvent,
    needs_fallback,
)
from ai.requests import Priority

logger = logging.getLogger(__name__)

WINDOW = 2048


@dataclass(frozen=True, slots=True)
class Percentiles:
    """Summary of a window of samples; all zero when ``count`` is 0."""

    count: int
    p50: float
    p95: float
    p99: float
    max: float

    def as_dict(self, scale: float = 1.0, digits: int = 3) -> dict[str, float]:
        """p50/p95/p99/max times ``scale`` (1000 turns seconds into ms), rounded."""
        return {
            "p50": round(self.p50 * scale, digits),
            "p95": round(self.p95 * scale, digits),
            "p99": round(self.p99 * scale, digits),
            "max": round(self.max * scale, digits),
        }


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated percentile ``q`` in [0, 100] of already sorted values."""
    if not sorted_values:
        return 0.0
    rank = (len(sorted_values) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(sorted_values) - 1)
    weight = rank - low
    return sorted_values[low] * (1.0 - weight) + sorted_values[high] * weight


def summarize(values: Iterable[float]) -> Percentiles:
    """p50/p95/p99/max of ``values``."""
    ordered = sorted(values)
    if not ordered:
        return Percentiles(0, 0.0, 0.0, 0.0, 0.0)
    return Percentiles(
        count=len(ordered),
        p50=percentile(ordered, 50.0),
        p95=percentile(ordered, 95.0),
        p99=percentile(ordered, 99.0),
        max=ordered[-1],
    )


@dataclass(frozen=True, slots=True)
class AiMetrics:
    """An immutable snapshot of everything the AI layer measures.

    Times are in seconds. ``*_call_s`` is main-thread time spent inside each
    public API call; ``api_call_s`` pools submit, poll and cancel.
    """

    submitted: int
    merged_duplicates: int
    started: int
    completed: int
    cancelled: int
    preempted: int
    requeued: int
    timed_out: int
    failed: Mapping[str, int]
    dropped: Mapping[str, int]
    fallbacks: Mapping[str, int]
    by_priority: Mapping[str, int]
    queue_depth: int
    max_queue_depth: int
    in_flight: int
    tokens: int
    queue_wait_s: Percentiles
    ttft_s: Percentiles
    total_s: Percentiles
    tokens_per_s: Percentiles
    api_call_s: Percentiles
    submit_call_s: Percentiles
    poll_call_s: Percentiles
    cancel_call_s: Percentiles


@dataclass(frozen=True, slots=True)
class TierStats:
    """One tier's figures for the HUD and the report; times in seconds.

    ``state`` is "healthy", "open" or "probing" (the breaker), or "loading" or
    "down" (the tier's model or client never came up). ``ttft_s`` runs from
    submit to the first token, queue wait included: what the router routes by.
    """

    name: str
    state: str
    requests: int
    completed: int
    failed: int
    failures: dict[str, int]
    hedges_won: int
    hedges_lost: int
    breaker_opened: int
    queue_depth: int
    in_flight: int
    ttft_s: Percentiles
    tokens_per_s: Percentiles


class MetricsRecorder:
    """Mutable accumulator behind :class:`AiMetrics`; main thread only."""

    def __init__(self, window: int = WINDOW) -> None:
        self.submitted = 0
        self.merged_duplicates = 0
        self.started = 0
        self.completed = 0
        self.cancelled = 0
        self.preempted = 0
        self.requeued = 0
        self.timed_out = 0
        self.tokens = 0
        self.max_queue_depth = 0
        self.failed: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()
        self.fallbacks: Counter[str] = Counter()
        self.by_priority: Counter[str] = Counter()
        self._queue_wait: deque[float] = deque(maxlen=window)
        self._ttft: deque[float] = deque(maxlen=window)
        self._total: deque[float] = deque(maxlen=window)
        self._tokens_per_s: deque[float] = deque(maxlen=window)
        self.submit_calls: deque[float] = deque(maxlen=window)
        self.poll_calls: deque[float] = deque(maxlen=window)
        self.cancel_calls: deque[float] = deque(maxlen=window)

    def record_submit(self, priority: Priority) -> None:
        """Count a new (not merged) submit by priority."""
        self.submitted += 1
        self.by_priority[priority.name.lower()] += 1

    def record_completed(self, stats: RequestStats) -> None:
        """Add one finished request's timings to the windows."""
        self.completed += 1
        self.tokens += stats.tokens
        self._queue_wait.append(stats.queue_wait_s)
        self._ttft.append(stats.ttft_s)
        self._total.append(stats.total_s)
        self._tokens_per_s.append(stats.tokens_per_s)

    def record_outcome(self, event: TerminalEvent) -> str | None:
        """Count how a request ended; return the fallback's reason, or None if none follows."""
        if isinstance(event, LineCompleted):
            self.record_completed(event.stats)
            return None
        if isinstance(event, RequestCancelled):
            self.cancelled += 1
        elif isinstance(event, RequestTimedOut):
            self.timed_out += 1
        elif isinstance(event, RequestDropped):
            self.dropped[event.reason] += 1
        else:
            self.failed[event.reason] += 1
        if not needs_fallback(event):
            return None
        reason = "timeout" if isinstance(event, RequestTimedOut) else event.reason
        self.fallbacks[reason] += 1
        return reason

    def snapshot(self, queue_depth: int, in_flight: int) -> AiMetrics:
        """Freeze the current figures; percentiles are computed here, not per call."""
        calls = [*self.submit_calls, *self.poll_calls, *self.cancel_calls]
        return AiMetrics(
            submitted=self.submitted,
            merged_duplicates=self.merged_duplicates,
            started=self.started,
            completed=self.completed,
            cancelled=self.cancelled,
            preempted=self.preempted,
            requeued=self.requeued,
            timed_out=self.timed_out,
            failed=MappingProxyType(dict(self.failed)),
            dropped=MappingProxyType(dict(self.dropped)),
            fallbacks=MappingProxyType(dict(self.fallbacks)),
            by_priority=MappingProxyType(dict(self.by_priority)),
            queue_depth=queue_depth,
            max_queue_depth=self.max_queue_depth,
            in_flight=in_flight,
            tokens=self.tokens,
            queue_wait_s=summarize(self._queue_wait),
            ttft_s=summarize(self._ttft),
            total_s=summarize(self._total),
            tokens_per_s=summarize(self._tokens_per_s),
            api_call_s=summarize(calls),
            submit_call_s=summarize(self.submit_calls),
            poll_call_s=summarize(self.poll_calls),
            cancel_call_s=summarize(self.cancel_calls),
        )
