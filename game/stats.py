"""Small summaries of timing samples for reports and the HUD."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def summarize_ms(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/max of millisecond samples (zeros when empty)."""
    if not samples:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0, "max": 0.0}
    arr = np.asarray(samples, dtype=float)
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return {
        "p50": round(float(p50), 4),
        "p95": round(float(p95), 4),
        "p99": round(float(p99), 4),
        "max": round(float(arr.max()), 4),
    }


def summarize_ticks(samples: Sequence[int]) -> dict[str, float]:
    """p50/p95/max of tick counts (zeros when empty)."""
    if not samples:
        return {"p50": 0.0, "p95": 0.0, "max": 0.0}
    arr = np.asarray(samples, dtype=float)
    p50, p95 = np.percentile(arr, [50, 95])
    return {"p50": float(p50), "p95": float(p95), "max": float(arr.max())}
