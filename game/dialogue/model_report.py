"""The model source's figures, for the HUD and the headless report."""

from __future__ import annotations

from collections.abc import Mapping

from ai import AiMetrics, TierStats


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
        "queue_depth": m.queue_depth,
        "in_flight": m.in_flight,
        "max_queue_depth": m.max_queue_depth,
        "tokens": m.tokens,
        "ttft_ms": m.ttft_s.as_dict(1000.0),
        "queue_wait_ms": m.queue_wait_s.as_dict(1000.0),
        "total_ms": m.total_s.as_dict(1000.0),
        "tokens_per_s": {"p50": round(m.tokens_per_s.p50, 1), "p95": round(m.tokens_per_s.p95, 1)},
        "api_call_ms": m.api_call_s.as_dict(1000.0),
    }


def tier_rows(tiers: tuple[TierStats, ...]) -> tuple[tuple[str, str], ...]:
    """One HUD row per tier: state, requests, first token p50/p95 (from submit), tokens/s."""
    return tuple(
        (
            f"tier {t.name}",
            f"{t.state}  {t.requests} req  1st {t.ttft_s.p50 * 1000:.0f}/"
            f"{t.ttft_s.p95 * 1000:.0f} ms  {t.tokens_per_s.p50:.0f} tok/s",
        )
        for t in tiers
    )


def tier_report(tiers: tuple[TierStats, ...]) -> dict[str, object]:
    """Per-tier figures for the report's ``ai`` section."""
    return {
        t.name: {
            "state": t.state,
            "requests": t.requests,
            "completed": t.completed,
            "failed": t.failures,
            "hedges_won": t.hedges_won,
            "hedges_lost": t.hedges_lost,
            "breaker_opened": t.breaker_opened,
            "ttft_from_submit_ms": t.ttft_s.as_dict(1000.0),
            "tokens_per_s": {
                "p50": round(t.tokens_per_s.p50, 1),
                "p95": round(t.tokens_per_s.p95, 1),
            },
        }
        for t in tiers
    }
