"""Small summaries of timing samples for reports and the HUD."""

from __future__ import annotations

from collections.abc import Sequence

from ai.metrics import summarize


def summarize_ms(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/max of millisecond samples (zeros when empty)."""
    return summarize(samples).as_dict(digits=4)


def summarize_ticks(samples: Sequence[int]) -> dict[str, float]:
    """p50/p95/max of tick counts (zeros when empty)."""
    p = summarize(samples)
    return {"p50": p.p50, "p95": p.p95, "max": float(p.max)}
