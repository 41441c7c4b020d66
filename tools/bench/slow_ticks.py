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
without; the p99 over the ticks that submitted nothing; in the ticks that did, the
dialogue's time split into prompt building, submitting and the rest; and the dialogue's
time by what the tick did besides: update the encounter predictions
(``GreetingPreparer.predict``), build a prompt, both or neither. Over all seeds, each
arm's tick p99 and dialogue p99 with every game's ticks pooled, and value's against the
queue's.

``--base REF`` plays both arms again as the commit ``REF`` had them (``queue@REF``,
``value@REF``), from a git worktree of it, in turn with the others.

    python tools/bench/slow_ticks.py                       # bench/slow_ticks.json
    python tools/bench/slow_ticks.py --seeds 3 --ticks 600 --out /tmp/slow.json
    python tools/bench/slow_ticks.py --seeds 3,7,11,23 --base d44947c
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
#: The tree whose game a watched run plays: this one, or a base commit's worktree.
TREE = Path(os.environ.get("SLOW_TICKS_TREE", ROOT))
if str(TREE) not in sys.path:
    sys.path.insert(0, str(TREE))

from ai.metrics import percentile  # noqa: E402
from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402
from tools.bench.trees import checkout  # noqa: E402

ARMS = ("queue", "value")
#: One tick in a hundred: the ticks a run's p99 rests on.
SLOWEST = 0.01


def watch(argv: list[str], rows_out: Path) -> int:
    """Play the game as ``argv`` asks, writing one row per tick to ``rows_out``:
    ``[tick_ms, ai_ms, submits, build_ms, submit_ms, builds, updated]`` (``updated``: 1
    when the tick updated the encounter predictions)."""
    from ai.router import Router
    from game.__main__ import parse_args
    from game.app import run
    from game.core.session import Session
    from game.dialogue.greetings import GreetingPreparer
    from game.dialogue.request_builder import RequestBuilder

    main = threading.main_thread()
    now = {"submits": 0, "build": 0.0, "submit": 0.0, "builds": 0, "updated": 0}
    rows: list[list[float]] = []
    submit, build, step = Router.submit, RequestBuilder.request, Session.step
    predict = GreetingPreparer.predict

    def watched_predict(self: GreetingPreparer, tick: int) -> None:
        now["updated"] = 1
        predict(self, tick)

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
            now["builds"] += 1
            now["build"] += time.perf_counter() - begin

    def watched_step(self: Session, intent: Any) -> None:
        now.update(submits=0, build=0.0, submit=0.0, builds=0, updated=0)
        step(self, intent)
        rows.append(
            [
                round(self.last_tick_ms(), 4),
                round(self.dialogue.ai_ms.last(), 4),
                now["submits"],
                round(now["build"] * 1000.0, 4),
                round(now["submit"] * 1000.0, 4),
                now["builds"],
                now["updated"],
            ]
        )

    Router.submit = watched_submit  # type: ignore[method-assign]
    RequestBuilder.request = watched_build  # type: ignore[method-assign]
    Session.step = watched_step  # type: ignore[method-assign]
    GreetingPreparer.predict = watched_predict  # type: ignore[method-assign]
    code = run(parse_args(argv))
    rows_out.write_text(json.dumps(rows))
    return code


#: What a tick did besides the rest of the dialogue, by (updated predictions, built a prompt).
TICK_KINDS = {
    (True, True): "update_and_build",
    (True, False): "update_only",
    (False, True): "build_only",
    (False, False): "neither",
}


def by_tick_kind(rows: list[list[float]]) -> dict[str, dict[str, float | int | None]]:
    """The dialogue's time (ms) in the ticks of each kind (:data:`TICK_KINDS`): how many,
    the mean and the p99."""
    kinds: dict[str, list[float]] = {name: [] for name in TICK_KINDS.values()}
    for row in rows:
        if len(row) >= 7:
            kinds[TICK_KINDS[(row[6] > 0, row[5] > 0)]].append(row[1])
    return {
        name: {
            "ticks": len(times),
            "mean": round(statistics.fmean(times), 4) if times else None,
            "p99": round(percentile(sorted(times), 99.0), 4) if times else None,
        }
        for name, times in kinds.items()
    }


def pooled(games: list[list[list[float]]]) -> dict[str, float]:
    """Tick and dialogue p99 over every tick of ``games``."""
    rows = [row for game in games for row in game]
    return {
        "ticks": len(rows),
        "tick_ms_p99": round(percentile(sorted(row[0] for row in rows), 99.0), 4),
        "dialogue_ms_p99": round(percentile(sorted(row[1] for row in rows), 99.0), 4),
    }


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
        "dialogue_ms_p99": round(percentile(sorted(row[1] for row in rows), 99.0), 4),
        "dialogue_ms_by_tick": by_tick_kind(rows),
    }


def run_one(arm: str, seed: int, ticks: int, folder: Path, tree: Path = ROOT) -> list[list[float]]:
    """One game in its own process, from ``tree``; its rows (see :func:`watch`).

    ``arm`` is the admission, with ``@REF`` when ``tree`` is REF's worktree."""
    rows = folder / f"{arm}-{seed}.json"
    admission = arm.split("@")[0]
    argv = [sys.executable, str(Path(__file__).resolve()), "--watch", str(rows), "--"]
    argv += ["--headless", "--backend", "llama", "--scenario", "village", "--seed", str(seed)]
    argv += ["--ticks", str(ticks), "--new", "--log", "WARNING"]
    argv += ["--save", str(folder / f"save-{arm}-{seed}.json")]
    argv += ["--set", f'game.dialogue.admission="{admission}"']
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    env["SLOW_TICKS_TREE"] = str(tree)
    done = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"slow_ticks: seed {seed} {arm} failed:\n{done.stderr[-2000:]}")
    result: list[list[float]] = json.loads(rows.read_text())
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the arms in turn over the seeds and write the summaries."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--watch"]:
        return watch(args[3:], Path(args[1]))
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seeds", default="3,7")
    parser.add_argument("--ticks", type=int, default=3600)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "slow_ticks.json")
    parser.add_argument("--base", help="a commit whose two arms run beside these")
    ns = parser.parse_args(args)
    try:
        seeds = [int(seed) for seed in ns.seeds.split(",")]
    except ValueError:
        raise SystemExit(f"slow_ticks: --seeds takes numbers, not {ns.seeds!r}") from None
    trees = dict.fromkeys(ARMS, ROOT)
    if ns.base:
        base = checkout(ns.base)
        trees.update({f"{arm}@{ns.base}": base for arm in ARMS})
    arms = tuple(trees)
    start = load_average()
    runs: dict[str, dict[str, Any]] = {}
    games: dict[str, list[list[list[float]]]] = {arm: [] for arm in arms}
    with tempfile.TemporaryDirectory() as tmp:
        for index, seed in enumerate(seeds):
            order = arms if index % 2 == 0 else tuple(reversed(arms))
            scenario = f"village:{seed}"
            runs[scenario] = {}
            for arm in order:
                rows = run_one(arm, seed, ns.ticks, Path(tmp), trees[arm])
                games[arm].append(rows)
                runs[scenario][arm] = summary(rows)
            for arm in arms:
                r = runs[scenario][arm]
                print(
                    f"village:{seed} {arm:5s} p99 {r['tick_ms_p99']:.2f} ms; slowest "
                    f"{r['slowest']}: {r['slowest_with_a_submit']} submitted "
                    f"({r['share_of_ticks_with_a_submit']:.1%} of all ticks did); "
                    f"p99 without a submit {r['tick_ms_p99_without_a_submit']:.2f} ms",
                    file=sys.stderr,
                )
    over_all = {arm: pooled(games[arm]) for arm in arms}
    for arm, figures in over_all.items():
        queue = over_all[arm.replace("value", "queue")]
        if arm.startswith("value"):
            for key in ("tick_ms_p99", "dialogue_ms_p99"):
                figures[f"{key}_against_queue"] = round(figures[key] / queue[key], 3)
        print(
            f"pooled {arm}: tick p99 {figures['tick_ms_p99']:.3f} ms, "
            f"dialogue p99 {figures['dialogue_ms_p99']:.3f} ms",
            file=sys.stderr,
        )
    document = {
        "what": f"headless village, {ns.ticks} ticks paced at 60 Hz a run, real model, "
        "errand bot; arms alternating seed by seed",
        "machine": machine_header(start, model=load_settings(CONFIG_DIR).ai.model),
        "pooled": over_all,
        "runs": runs,
    }
    ns.out.parent.mkdir(parents=True, exist_ok=True)
    ns.out.write_text(json.dumps(document, indent=2) + "\n")
    print(f"-> {ns.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
