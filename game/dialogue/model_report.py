"""The model source's figures, for the HUD and the headless report."""

from __future__ import annotations

from collections.abc import Mapping

from ai import AiMetrics, TierStats
from game.core.stats import quantiles, rate_quantiles
from game.headless.report import ModelReport, PredictionReport, TierReport, WorkerReport


def hud_rows(
    metrics: AiMetrics, predictive: PredictionReport, stale_drops: int, worker: WorkerReport
) -> tuple[tuple[str, str], ...]:
    """Queue, latency, prediction and worker-time figures as (label, value) rows."""
    used, issued = predictive.used, predictive.issued
    late = sum(worker.late.values())
    return (
        ("queue / in flight", f"{metrics.queue_depth} / {metrics.in_flight}"),
        ("first token p50", f"{metrics.ttft_s.p50 * 1000:.0f} ms"),
        ("tokens/s p50", f"{metrics.tokens_per_s.p50:.0f}"),
        ("predictive hit rate", f"{used}/{issued} ({100 * used / max(1, issued):.0f}%)"),
        ("worker on shown lines", f"{100 * worker.shown_share:.0f}%"),
        ("shed / late", f"{sum(worker.shed.values())} / {late}"),
        ("template greetings", _causes(predictive.templates)),
        ("stale drops", str(stale_drops)),
        ("fallbacks", str(sum(metrics.fallbacks.values()))),
    )


def _causes(counts: Mapping[str, int]) -> str:
    """ "late 2, unasked 1": counts by cause, "0" when there are none."""
    return ", ".join(f"{cause} {n}" for cause, n in counts.items()) or "0"


def model_report(
    mode: str,
    metrics: AiMetrics,
    tiers: tuple[TierStats, ...],
    *,
    stale_dropped: Mapping[str, int],
    predictive: PredictionReport,
    lines_by_tier: Mapping[str, int],
    template_while_loading: int,
    load: str,
    worker: WorkerReport,
) -> ModelReport:
    """The runtime's counts and latencies, and the source's own, for the report's ``ai``."""
    m = metrics
    return ModelReport(
        mode=mode,
        requests=dict(m.by_priority),
        submitted=m.submitted,
        merged=m.merged_duplicates,
        completed=m.completed,
        cancelled=m.cancelled,
        preempted=m.preempted,
        timed_out=m.timed_out,
        failed=dict(m.failed),
        dropped=dict(m.dropped),
        fallbacks=dict(m.fallbacks),
        queue_depth=m.queue_depth,
        in_flight=m.in_flight,
        max_queue_depth=m.max_queue_depth,
        tokens=m.tokens,
        ttft_ms=quantiles(m.ttft_s, 1000.0),
        queue_wait_ms=quantiles(m.queue_wait_s, 1000.0),
        total_ms=quantiles(m.total_s, 1000.0),
        tokens_per_s=rate_quantiles(m.tokens_per_s),
        api_call_ms=quantiles(m.api_call_s, 1000.0),
        stale_dropped=stale_dropped,
        predictive=predictive,
        tiers=tier_report(tiers),
        lines_by_tier=lines_by_tier,
        template_while_loading=template_while_loading,
        load=load,
        worker=worker,
    )


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


def tier_report(tiers: tuple[TierStats, ...]) -> dict[str, TierReport]:
    """Per-tier figures for the report's ``ai`` section."""
    return {
        t.name: TierReport(
            state=t.state,
            requests=t.requests,
            completed=t.completed,
            failed=t.failures,
            hedges_won=t.hedges_won,
            hedges_lost=t.hedges_lost,
            breaker_opened=t.breaker_opened,
            ttft_from_submit_ms=quantiles(t.ttft_s, 1000.0),
            tokens_per_s=rate_quantiles(t.tokens_per_s),
        )
        for t in tiers
    }
