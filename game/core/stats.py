"""Small summaries of timing samples for reports and the HUD, bounded in memory."""

from __future__ import annotations

import dataclasses
import math
from collections import deque
from collections.abc import Iterator, Sequence

from ai.metrics import Percentiles, summarize
from game.headless.report import Quantiles, RateQuantiles, TickQuantiles

# The last ten minutes of ticks at 60 Hz: percentiles describe what a player sees now,
# and a session that runs for days keeps the same few hundred kilobytes.
RECENT_TICKS = 36_000


def quantiles(p: Percentiles, scale: float = 1.0, digits: int = 3) -> Quantiles:
    """p50/p95/p99/max times ``scale`` (1000 turns seconds into ms), rounded."""
    return Quantiles(
        round(p.p50 * scale, digits),
        round(p.p95 * scale, digits),
        round(p.p99 * scale, digits),
        round(p.max * scale, digits),
    )


def rate_quantiles(p: Percentiles) -> RateQuantiles:
    """p50/p95 of a rate, to one decimal."""
    return RateQuantiles(round(p.p50, 1), round(p.p95, 1))


def ms_quantiles(samples: Sequence[float]) -> Quantiles:
    """p50/p95/p99/max of millisecond samples (zeros when empty)."""
    return quantiles(summarize(samples), digits=4)


def tick_quantiles(samples: Sequence[int]) -> TickQuantiles:
    """p50/p95/max of tick counts (zeros when empty)."""
    p = summarize(samples)
    return TickQuantiles(p.p50, p.p95, float(p.max))


def summarize_ms(samples: Sequence[float]) -> dict[str, float]:
    """:func:`ms_quantiles` as a JSON object, for the tools' own reports."""
    return summarize(samples).as_dict(digits=4)


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

    def summary(self) -> Quantiles:
        """p50/p95/p99 of the recent samples and the lifetime maximum, rounded."""
        return dataclasses.replace(ms_quantiles(list(self._recent)), max=round(self.max, 4))

    def __iter__(self) -> Iterator[float]:
        return iter(self._recent)

    def __len__(self) -> int:
        return len(self._recent)
