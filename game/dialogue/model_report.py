"""The model source's figures, for the HUD and the headless report."""

from __future__ import annotations

from collections.abc import Mapping

from ai import AiMetrics, Percentiles


def hud_rows(
    metrics: AiMetrics, predictive: Mapping[str, int], stale_drops: int
) -> tuple[tuple[str, str], ...]:
    """Queue, latency and prediction figures as (label, value) rows."""
    used, issued = predictive["used"], predictive["issued"]
    return (
        ("queue / in flight", f"{metrics.queue_depth} / {metrics.in_flight}"),
        ("first token p50", f"{metrics.ttft_s.p50 * 1000:.0f} ms"),
        ("tokens/s p50", f"{metrics.tokens_per_s.p50:.0f}"),
        ("predictive hit rate", f"{used}/{issued} ({100 * used / max(1, issued):.0f}%)"),
        ("stale drops", str(stale_drops)),
        ("fallbacks", str(sum(metrics.fallbacks.values()))),
    )


def runtime_report(metrics: AiMetrics) -> dict[str, object]:
    """The runtime's counts and latencies for the report's ``ai`` section."""
    m = metrics
    return {
        "requests": dict(m.by_priority),
        "submitted": m.submitted,
        "merged": m.merged_duplicates,
        "completed": m.completed,
        "cancelled": m.cancelled,
        "preempted": m.preempted,
        "timed_out": m.timed_out,
        "failed": dict(m.failed),
        "dropped": dict(m.dropped),
        "fallbacks": dict(m.fallbacks),
        "max_queue_depth": m.max_queue_depth,
        "tokens": m.tokens,
        "ttft_ms": _ms(m.ttft_s),
        "queue_wait_ms": _ms(m.queue_wait_s),
        "total_ms": _ms(m.total_s),
        "tokens_per_s": {"p50": round(m.tokens_per_s.p50, 1), "p95": round(m.tokens_per_s.p95, 1)},
        "api_call_ms": _ms(m.api_call_s),
    }


def _ms(p: Percentiles) -> dict[str, float]:
    return {
        "p50": round(p.p50 * 1000.0, 3),
        "p95": round(p.p95 * 1000.0, 3),
        "p99": round(p.p99 * 1000.0, 3),
        "max": round(p.max * 1000.0, 3),
    }
