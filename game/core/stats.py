"""Small summaries of timing samples for reports and the HUD, bounded in memory."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator, Sequence

from ai.metrics import summarize

# The last ten minutes of ticks at 60 Hz: percentiles describe what a player sees now,
# and a session that runs for days keeps the same few hundred kilobytes.
RECENT_TICKS = 36_000


def summarize_ms(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/max of millisecond samples (zeros when empty)."""
    return summarize(samples).as_dict(digits=4)


def summarize_ticks(samples: Sequence[int]) -> dict[str, float]:
    """p50/p95/max of tick counts (zeros when empty)."""
    p = summarize(samples)
    return {"p50": p.p50, "p95": p.p95, "max": float(p.max)}


class RecentSamples:
    """The latest samples in a ring buffer, with lifetime count, maximum and overruns.

    Percentiles come from the ring; ``count``, ``max`` and ``over`` (samples above
    ``limit``) cover every sample ever added.
    """

    def __init__(self, capacity: int = RECENT_TICKS, limit: float = math.inf) -> None:
        self._recent: deque[float] = deque(maxlen=capacity)
        self._limit = limit
        self.count = 0
        self.max = 0.0
        self.over = 0

    def add(self, value: float) -> None:
        """Record one sample."""
        self._recent.append(value)
        self.count += 1
        if value > self.max:
            self.max = value
        if value > self._limit:
            self.over += 1

    def last(self) -> float:
        """The most recent sample, or 0 before the first."""
        return self._recent[-1] if self._recent else 0.0

    def summary(self) -> dict[str, float]:
        """p50/p95/p99 of the recent samples and the lifetime maximum, rounded."""
        out = summarize_ms(list(self._recent))
        out["max"] = round(self.max, 4)
        return out

    def __iter__(self) -> Iterator[float]:
        return iter(self._recent)

    def __len__(self) -> int:
        return len(self._recent)
