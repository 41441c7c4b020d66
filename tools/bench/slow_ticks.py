"""What the slowest ticks did: the 1% that set the tick p99, against all the others.

Each run is a headless village game, paced at 60 Hz with the real model and the errand
bot, as ``python -m game`` plays it, in a process of its own, the arms (value admission
and the plain queue) alternating seed by seed. Inside the run the session's steps are
watched from the outside: for every tick, its time and the dialogue's part of it (as the
game measures them, ``tick_ms`` and ``ai_ms``), how many requests the main thread
submitted to the model, and how long it spent building their prompts
(``RequestBuilder.request``) and submitting them (``Router.submit``).

The summary per arm: the tick p99; how many of the slowest 1% of ticks submitted a
request, against the share of all ticks that did; the mean tick with a submit and
without; the p99 over the ticks that submitted nothing; and, in the ticks that did, the
dialogue's time split into prompt building, submitting and the rest.

    python tools/bench/slow_ticks.py                       # bench/slow_ticks.json
    python tools/bench/slow_ticks.py --seeds 3 --ticks 600 --out /tmp/slow.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ai.metrics import percentile  # noqa: E402
from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

ARMS = ("queue", "value")
#: One tick in a hundred: the ticks a run's p99 rests on.
SLOWEST = 0.01


def watch(argv: list[str], rows_out: Path) -> int:
    """Play the game as ``argv`` asks, writing one row per tick to ``rows_out``:
    ``[tick_ms, ai_ms, submits, build_ms, submit_ms]``."""
    from ai.router import Router
    from game.__main__ import parse_args
    from game.app import run
    from game.core.session import Session
    from game.dialogue.request_builder import RequestBuilder

    main = threading.main_thread()
    now = {"submits": 0, "build": 0.0, "submit": 0.0}
    rows: list[list[float]] = []
    submit, build, step = Router.submit, RequestBuilder.request, Session.step

    def watched_submit(self: Router, request: Any) -> Any:
        begin = time.perf_counter()
        try:
            return submit(self, request)
        finally:
            if threading.current_thread() is main:
                now["submits"] += 1
                now["submit"] += time.perf_counter() - begin

    def watched_build(self: RequestBuilder, *args: Any, **kwargs: Any) -> Any:
        begin = time.perf_counter()
        try:
            return build(self, *args, **kwargs)
        finally:
            now["build"] += time.perf_counter() - begin

    def watched_step(self: Session, intent: Any) -> None:
        now.update(submits=0, build=0.0, submit=0.0)
        step(self, intent)
        rows.append(
            [
                round(self.last_tick_ms(), 4),
                round(self.dialogue.ai_ms.last(), 4),
                now["submits"],
                round(now["build"] * 1000.0, 4),
                round(now["submit"] * 1000.0, 4),
            ]
        )

    Router.submit = watched_submit  # type: ignore[method-assign]
    RequestBuilder.request = watched_build  # type: ignore[method-assign]
    Session.step = watched_step  # type: ignore[method-assign]
    code = run(parse_args(argv))
    rows_out.write_text(json.dumps(rows))
    return code


def summary(rows: list[list[float]]) -> dict[str, Any]:
    """What the slowest 1% of ticks did, against the rest (see the module's docstring)."""
    ticks = [row[0] for row in rows]
    slowest = sorted(rows, key=lambda row: -row[0])[: max(1, round(len(rows) * SLOWEST))]
    asked = [row for row in rows if row[2] > 0]
    quiet = sorted(row[0] for row in rows if row[2] == 0)

    def mean(values: list[float]) -> float | None:
        return round(statistics.fmean(values), 4) if values else None

    return {
        "ticks": len(rows),
        "tick_ms_p99": round(percentile(sorted(ticks), 99.0), 4),
        "ticks_with_a_submit": len(asked),
        "share_of_ticks_with_a_submit": round(len(asked) / len(rows), 4),
        "slowest": len(slowest),
        "slowest_with_a_submit": sum(1 for row in slowest if row[2] > 0),
        "mean_tick_ms_with_a_submit": mean([row[0] for row in asked]),
        "mean_tick_ms_without": mean(quiet),
        "tick_ms_p99_without_a_submit": round(percentile(quiet, 99.0), 4) if quiet else None,
        "in_ticks_with_a_submit_ms": {
            "dialogue": mean([row[1] for row in asked]),
            "prompt_building": mean([row[3] for row in asked]),
            "submitting": mean([row[4] for row in asked]),
            "outside_the_dialogue": mean([row[0] - row[1] for row in asked]),
        },
        "outside_the_dialogue_without_a_submit_ms": mean(
            [row[0] - row[1] for row in rows if row[2] == 0]
        ),
    }


def run_one(arm: str, seed: int, ticks: int, folder: Path) -> dict[str, Any]:
    """One game in its own process; its summary."""
    rows = folder / f"{arm}-{seed}.json"
    argv = [sys.executable, str(Path(__file__).resolve()), "--watch", str(rows), "--"]
    argv += ["--headless", "--backend", "llama", "--scenario", "village", "--seed", str(seed)]
    argv += ["--ticks", str(ticks), "--new", "--log", "WARNING"]
    argv += ["--save", str(folder / f"save-{arm}-{seed}.json")]
    argv += ["--set", f'game.dialogue.admission="{arm}"']
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"slow_ticks: seed {seed} {arm} failed:\n{done.stderr[-2000:]}")
    return summary(json.loads(rows.read_text()))


def main(argv: list[str] | None = None) -> int:
    """Run the arms in turn over the seeds and write the summaries."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--watch"]:
        return watch(args[3:], Path(args[1]))
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", default="3,7")
    parser.add_argument("--ticks", type=int, default=3600)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "slow_ticks.json")
    ns = parser.parse_args(args)
    try:
        seeds = [int(seed) for seed in ns.seeds.split(",")]
    except ValueError:
        raise SystemExit(f"slow_ticks: --seeds takes numbers, not {ns.seeds!r}") from None
    start = load_average()
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for index, seed in enumerate(seeds):
            order = ARMS if index % 2 == 0 else tuple(reversed(ARMS))
            scenario = f"village:{seed}"
            runs[scenario] = {arm: run_one(arm, seed, ns.ticks, Path(tmp)) for arm in order}
            for arm in ARMS:
                r = runs[scenario][arm]
                print(
                    f"village:{seed} {arm:5s} p99 {r['tick_ms_p99']:.2f} ms; slowest "
                    f"{r['slowest']}: {r['slowest_with_a_submit']} submitted "
                    f"({r['share_of_ticks_with_a_submit']:.1%} of all ticks did); "
                    f"p99 without a submit {r['tick_ms_p99_without_a_submit']:.2f} ms",
                    file=sys.stderr,
                )
    document = {
        "what": f"headless village, {ns.ticks} ticks paced at 60 Hz a run, real model, "
        "errand bot; arms alternating seed by seed",
        "machine": machine_header(start, model=load_settings(CONFIG_DIR).ai.model),
        "runs": runs,
    }
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(json.dumps(document, indent=2) + "\n")
    print(f"-> {ns.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
