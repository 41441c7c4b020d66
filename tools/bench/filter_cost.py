"""What the content filter costs the village: filter off, word list only, both layers.

Each village seed is played headless at its real 60 Hz with the real model and the
errand bot, once per arm, the arms rotating seed by seed so machine load hits them alike:

- ``off``: ``ai.filter.enabled = false`` (no check at all);
- ``words``: layer 1 only, the word list and the patterns (``ai.filter.meaning = false``);
- ``layered``: layer 1, then the semantic layer on the worker (the default).

    python tools/bench/filter_cost.py                  # bench/filter_cost.json
    python tools/bench/filter_cost.py --seeds 3 --ticks 600

For each run: decode tokens/s, the share of shown lines the model wrote and how many it
wrote, lines the filter refused (``unfit``), tick p99 and what each trigger showed (the
games drift apart, so the share also moves with what was asked). The issue's bar:
tokens/s and the model's share of lines within 5% of the filter off.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

ARMS: dict[str, tuple[str, ...]] = {
    "off": ("--set", "ai.filter.enabled=false"),
    "words": ("--set", "ai.filter.meaning=false"),
    "layered": (),
}


def run_one(seed: int, arm: str, ticks: int, folder: Path) -> dict[str, Any]:
    """One paced headless village game; the figures this comparison reads."""
    report = folder / f"village-{seed}-{arm}.json"
    argv = [sys.executable, "-m", "game", "--headless", "--backend", "llama"]
    argv += ["--scenario", "village", "--seed", str(seed), "--new", "--ticks", str(ticks)]
    argv += ["--report", str(report), "--log", "WARNING", *ARMS[arm]]
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"filter_cost: seed {seed} {arm} failed:\n{done.stderr[-2000:]}")
    data = json.loads(report.read_text())
    ai, shown = data["ai"], data["lines"]["shown"]
    total = sum(shown.values())
    model = shown.get("model", 0) + shown.get("prepared", 0)
    return {
        "tokens_per_s_p50": ai["tokens_per_s"]["p50"],
        "lines_shown": total,
        "model_lines": model,
        "lines_from_model": round(model / total, 4) if total else None,
        "unfit": ai["failed"].get("unfit", 0),
        "failed": ai["failed"],
        "tick_ms_p99": data["tick_ms"]["p99"],
        # The games drift apart (a bump here, a farewell more there), and the share moves
        # with what was asked: what each trigger showed says why.
        "shown_by_trigger": data["lines"]["shown_by_trigger"],
    }


def summary(runs: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Each arm's medians over the seeds, and its ratios to the filter off."""
    out: dict[str, Any] = {}
    for arm in ARMS:
        rows = [by_arm[arm] for by_arm in runs.values()]
        out[arm] = {
            key: round(statistics.median(r[key] for r in rows), 4)
            for key in ("tokens_per_s_p50", "lines_from_model", "tick_ms_p99")
        }
        out[arm]["unfit"] = sum(r["unfit"] for r in rows)
        out[arm]["model_lines"] = sum(r["model_lines"] for r in rows)
        out[arm]["lines_shown"] = sum(r["lines_shown"] for r in rows)
    for arm in ("words", "layered"):
        for key in ("tokens_per_s_p50", "lines_from_model", "model_lines"):
            off = out["off"][key]
            out[arm][f"{key}_vs_off"] = round(out[arm][key] / off, 3) if off else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", default="3,7,11")
    parser.add_argument("--ticks", type=int, default=3600)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "filter_cost.json")
    args = parser.parse_args()
    start = load_average()
    model = load_settings(CONFIG_DIR).ai.model
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    arms = list(ARMS)
    with tempfile.TemporaryDirectory() as tmp:
        for index, seed in enumerate(int(s) for s in args.seeds.split(",")):
            order = arms[index % len(arms) :] + arms[: index % len(arms)]
            runs[str(seed)] = {arm: run_one(seed, arm, args.ticks, Path(tmp)) for arm in order}
            for arm in ARMS:
                print(f"seed {seed} {arm:8s} {runs[str(seed)][arm]}", file=sys.stderr)
    document = {
        "machine": machine_header(start, model=model),
        "ticks_per_run": args.ticks,
        "arms": {arm: " ".join(flags) or "the defaults" for arm, flags in ARMS.items()},
        "runs": runs,
        "summary": summary(runs),
    }
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    print(json.dumps(document["summary"], indent=1))
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
