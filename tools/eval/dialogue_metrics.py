"""Figures for the dialogue evaluation: what each shown line does, and the totals.

Each line is checked against the criteria its own request carried (the trigger's
keywords, the speaker's and absent villagers' names, the example lines, the lines the
villager remembered, the player's words), with the same text functions the selection
uses, so "what was measured" and "what the game tried to avoid" mean the same thing.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from ai import LineCriteria
from ai.selection import (
    ECHO_JACCARD,
    copies,
    echoes,
    has_label,
    jaccard,
    mentions,
    names_in,
    names_self,
    normalized,
    words,
)

FLAGS = (
    "mentions",
    "mentions_after_opener",
    "self_name",
    "absent_name",
    "copy",
    "echo",
    "exact_repeat",
    "near_repeat",
    "label",
    "empty",
)


def line_flags(
    text: str, opener: str, criteria: LineCriteria, earlier: Sequence[str]
) -> dict[str, Any]:
    """The checks for one shown line; ``earlier`` are the same villager's earlier lines."""
    after = text[len(opener) :] if opener and text.startswith(opener) else text
    norm = normalized(text)
    count = len(words(text))
    return {
        "mentions": mentions(text, criteria.keywords) if criteria.keywords else None,
        "mentions_after_opener": (
            mentions(after, criteria.keywords) if criteria.keywords else None
        ),
        "self_name": names_self(text, criteria),
        "absent_name": bool(names_in(text, criteria.absent_names)),
        "copy": copies(text, criteria.examples),
        "echo": echoes(text, (criteria.player_text, *criteria.remembered)),
        "exact_repeat": any(normalized(e) == norm for e in earlier),
        "near_repeat": any(jaccard(text, e) >= ECHO_JACCARD for e in earlier),
        "label": has_label(text),
        "empty": count == 0,
        "words": count,
    }


def _rate(records: Sequence[dict[str, Any]], flag: str) -> float | None:
    values = [r[flag] for r in records if r.get(flag) is not None]
    return round(sum(1 for v in values if v) / len(values), 3) if values else None


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summarize_lines(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Rates over model-written lines, overall and by trigger, plus fallbacks and timing."""
    model = [r for r in records if r["origin"] == "model"]
    out: dict[str, Any] = {
        "lines": len(records),
        "model_lines": len(model),
        "fallbacks": len(records) - len(model),
        "fallback_reasons": _count(r.get("reason", "") for r in records if r["origin"] != "model"),
    }
    out.update({flag: _rate(model, flag) for flag in FLAGS})
    word_counts = [r["words"] for r in model]
    out["words_p50"] = _pct(word_counts, 50)
    out["words_p95"] = _pct(word_counts, 95)
    out["candidates_mean"] = (
        round(statistics.fmean(r["candidates"] for r in model), 2) if model else 0.0
    )
    by_trigger: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in model:
        by_trigger[record["trigger"]].append(record)
    out["by_trigger"] = {
        trigger: {
            "lines": len(rows),
            "mentions": _rate(rows, "mentions"),
            "mentions_after_opener": _rate(rows, "mentions_after_opener"),
        }
        for trigger, rows in sorted(by_trigger.items())
    }
    return out


def timing(records: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Time to first token and whole time (ms), p50/p95, over records that have them.

    A record has them when the model wrote an answer, whether it was shown or refused.
    """
    rows = [r for r in records if r.get("ttft_ms") is not None]
    ttft = [r["ttft_ms"] for r in rows]
    total = [r["total_ms"] for r in rows]
    return {
        "count": len(rows),
        "ttft_ms_p50": round(_pct(ttft, 50), 1),
        "ttft_ms_p95": round(_pct(ttft, 95), 1),
        "total_ms_p50": round(_pct(total, 50), 1),
        "total_ms_p95": round(_pct(total, 95), 1),
    }


def _count(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for value in values:
        out[value] += 1
    return dict(out)
