"""Where the one worker's time goes: value admission against the plain queue, in one run.

Each scenario (the village at seeds 3, 7, 11 and 23, the crowd of 31 and of 60
villagers) is played headless at its real 60 Hz with the real model and the errand bot
at the keys, twice: with ``game.dialogue.admission = "queue"`` (every ask submitted and
waited for, in priority order, as the scheduler was before) and ``"value"`` (asks judged
by what their line is worth, greetings never late). The two arms alternate scenario by
scenario, so machine load hits both alike. Each run is its own process, as a player's.

    python tools/bench/worker_time.py                    # bench/worker_time.json
    python tools/bench/worker_time.py --ticks 600 --scenarios village:3
    python tools/bench/worker_time.py --base a5644ea --scenarios village:3,village:7

``--base REF`` adds a third arm, ``value@REF``: value admission as the commit ``REF`` had
it, run from a git worktree of that commit, in turn with the other two. It measures a
change to the worker against its base in the same sitting. ``--repeats N`` plays the
scenarios N times over (the later games keyed ``village:3 #2`` and so on); the pooled
p99 takes every game's ticks.

For each run: greetings shown within one tick of the villager greeting, the share of
greetings (and of every trigger's lines) the model wrote, the share of worker seconds
spent on lines that were shown, fallbacks past their deadline, late lines, queue wait
and tick p99. One run's tick p99 rests on its 36 slowest ticks, so the arms' p99 is also
taken over every tick of the four village games pooled (14,400 ticks an arm), and over
every scenario's: ``pooled_tick_p99``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ai import ModelConfig  # noqa: E402
from ai.metrics import percentile  # noqa: E402
from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402
from tools.bench.trees import checkout  # noqa: E402

SCENARIOS = ("village:3", "village:7", "village:11", "village:23", "crowd:31", "crowd:60")
ARMS = ("queue", "value")
_BASE_NPCS = 7  # the cast; the crowd adds generated villagers to make up the number


def run_one(
    scenario: str, arm: str, ticks: int, folder: Path, tree: Path = ROOT
) -> tuple[dict[str, Any], list[float]]:
    """One headless game from ``tree``; returns its figures and every tick's time (ms).

    ``arm`` is the admission ("queue", "value"), with ``@REF`` when ``tree`` is REF's.
    """
    kind, number = scenario.split(":")
    admission = arm.partition("@")[0]
    report = folder / f"{kind}-{number}-{arm.replace('@', '-')}.json"
    argv = [sys.executable, "-m", "game", "--headless", "--backend", "llama", "--samples"]
    argv += ["--ticks", str(ticks), "--report", str(report), "--log", "WARNING"]
    argv += ["--set", f'game.dialogue.admission="{admission}"']
    if kind == "crowd":
        argv += ["--scenario", "crowd", "--seed", "7", "--npcs", str(int(number) - _BASE_NPCS)]
    else:
        argv += ["--scenario", "village", "--seed", number]
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    if tree != ROOT:
        env["PYTHONPATH"] = str(tree)
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker_time: {scenario} {arm} failed:\n{done.stderr[-2000:]}")
    document = json.loads(report.read_text())
    return figures(document), list(document["samples"]["tick_ms"])


def figures(report: dict[str, Any]) -> dict[str, Any]:
    """What the comparison reads from one headless report."""
    ai = report["ai"]
    lines = report["lines"]
    greet = lines["shown_by_trigger"].get("greet", {})
    greets = sum(greet.values())
    model_greets = greet.get("model", 0) + greet.get("prepared", 0)
    worker = ai["worker"]
    return {
        "ticks": report["ticks"],
        "tick_ms_p99": report["tick_ms"]["p99"],
        "overruns": report["overruns"],
        "greetings": ai["encounters"],
        "greetings_shown": ai["encounters_shown"],
        "greetings_within_1_tick": ai["greetings_within_1_tick"],
        "encounter_latency_ticks": ai["encounter_latency_ticks"],
        "greetings_from_model": model_greets,
        "greeting_model_share": round(model_greets / greets, 4) if greets else None,
        "model_share": lines["model_share"],
        "lines_from_model": _from_model(lines["shown"]),
        "shown_by_trigger": lines["shown_by_trigger"],
        "worker_seconds": worker["seconds"],
        "worker_shown_share": worker["shown_share"],
        "shed": worker["shed"],
        "late": worker["late"],
        "fallbacks": ai["fallbacks"],
        "dropped": ai["dropped"],
        "queue_wait_ms": ai["queue_wait_ms"],
        "predictive": ai["predictive"],
    }


def pooled_tick_p99(
    ticks: dict[str, dict[str, list[float]]], arms: tuple[str, ...] = ARMS
) -> dict[str, dict[str, float | None]]:
    """Each arm's tick p99 (ms) over the ticks of several games pooled, and value/queue.

    Pools the village games, and every game; a group with no game yet is left out. With
    a base arm (``value@REF``), also value against it (``base_ratio``).
    """
    groups = {
        "village": [s for s in ticks if s.startswith("village")],
        "all": list(ticks),
    }
    pooled: dict[str, dict[str, float | None]] = {}
    for group, scenarios in groups.items():
        if not scenarios:
            continue
        row: dict[str, float | None] = {}
        for arm in arms:
            samples = sorted(t for s in scenarios for t in ticks[s].get(arm, ()))
            row[arm] = round(percentile(samples, 99.0), 4) if samples else None
        queue, value = row["queue"], row["value"]
        row["ratio"] = round(value / queue, 3) if queue and value else None
        for arm in arms[len(ARMS) :]:
            base = row[arm]
            row["base_ratio"] = round(value / base, 3) if base and value else None
        row["games"] = len(scenarios)
        pooled[group] = row
    return pooled


def _from_model(shown: dict[str, int]) -> float | None:
    """The share of every shown line (all triggers) that the model wrote."""
    total = sum(shown.values())
    model = shown.get("model", 0) + shown.get("prepared", 0)
    return round(model / total, 4) if total else None


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ticks", type=int, default=3600)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "worker_time.json")
    parser.add_argument("--base", help="a commit whose value admission runs as a third arm")
    parser.add_argument(
        "--repeats", type=int, default=1, help="play every scenario this many times, pooled"
    )
    args = parser.parse_args()
    if args.repeats < 1:
        raise SystemExit("worker_time: --repeats must be 1 or more")
    trees = {arm: ROOT for arm in ARMS}
    if args.base:
        trees[f"value@{args.base}"] = checkout(args.base)
    arms = tuple(trees)
    start = load_average()
    model = load_settings(CONFIG_DIR).ai.model
    runs: dict[str, dict[str, Any]] = {}
    ticks: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        scenarios = args.scenarios.split(",")
        plays = [
            (scenario, scenario if repeat == 0 else f"{scenario} #{repeat + 1}")
            for repeat in range(args.repeats)
            for scenario in scenarios
        ]
        for index, (scenario, key) in enumerate(plays):
            # Turn which arm goes first, so none always meets a warmer machine.
            shift = index % len(arms)
            order = arms[shift:] + arms[:shift]
            runs[key], ticks[key] = {}, {}
            for arm in order:
                runs[key][arm], ticks[key][arm] = run_one(
                    scenario, arm, args.ticks, Path(tmp), trees[arm]
                )
            # So far, should a run fail.
            _write(args.out, start, model, args.ticks, runs, pooled_tick_p99(ticks, arms))
            for arm in arms:
                r = runs[key][arm]
                print(
                    f"{key:11s} {arm:5s} greetings {r['greetings_within_1_tick']}/"
                    f"{r['greetings']} in 1 tick, model {r['greeting_model_share']}, "
                    f"all lines from the model {r['lines_from_model']}, "
                    f"worker on shown {r['worker_shown_share']:.0%}, "
                    f"tick p99 {r['tick_ms_p99']:.2f} ms",
                    file=sys.stderr,
                )
    for group, row in pooled_tick_p99(ticks, arms).items():
        print(f"tick p99 over the {group} games pooled: {row}", file=sys.stderr)
    print(f"-> {args.out}")


def _write(
    out: Path,
    start: tuple[float, ...],
    model: ModelConfig,
    ticks: int,
    runs: dict[str, dict[str, Any]],
    pooled: dict[str, dict[str, float | None]],
) -> None:
    arms = {
        "queue": 'game.dialogue.admission = "queue": every ask submitted and waited for',
        "value": 'game.dialogue.admission = "value": value admission, greetings never late',
    }
    for arm in {arm for scenario in runs.values() for arm in scenario} - set(arms):
        arms[arm] = f"value admission as commit {arm.partition('@')[2]} had it"
    document = {
        "machine": machine_header(start, model=model),
        "ticks_per_run": ticks,
        "arms": arms,
        "pooled_tick_p99": pooled,
        "runs": runs,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2) + "\n")


if __name__ == "__main__":
    main()
