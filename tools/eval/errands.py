"""Time the scripted player doing the village's three errands, headless, over several seeds.

The bot plays through the player's inputs only (``PlayerIntent``), with real physics and
the AI off; the world is stepped back to back. Writes ``bench/errands.json``:

    .venv/bin/python tools/eval/errands.py --seeds 1 2 3 4 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from game.input.bot import Bot  # noqa: E402
from game.sim.cast import Cast, load_cast  # noqa: E402
from game.sim.level import Level, load_level  # noqa: E402
from game.sim.world import World  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

HZ = 60
LIMIT_S = 180.0


@dataclass(frozen=True, slots=True)
class ErrandRun:
    """One seed's run: seconds of game time at which each errand was done."""

    seed: int
    done_s: dict[str, float]
    all_done: bool
    ticks: int
    wall_s: float


def run_errands(level: Level, cast: Cast, seed: int, limit_s: float = LIMIT_S) -> ErrandRun:
    """Let the errand bot play one seed for at most ``limit_s`` seconds of game time."""
    world = World(level, cast, seed)
    bot = Bot("errands", seed, world.level_view())
    runner = bot.errands
    assert runner is not None
    wanted = {e.spec.id for e in world.errands.errands}
    started = time.perf_counter()
    for _ in range(round(limit_s * HZ)):
        world.step(bot.intent(world.snapshot()))
        if wanted <= runner.finished.keys():
            break
    # The bot notices a finished errand one snapshot late; the world's own tick is exact.
    bot.intent(world.snapshot())
    done = {k: round(t / HZ, 2) for k, t in sorted(runner.finished.items())}
    return ErrandRun(
        seed, done, wanted <= done.keys(), world.tick, round(time.perf_counter() - started, 2)
    )


def main(argv: list[str] | None = None) -> int:
    """Run the seeds, print one line each and write the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "errands.json")
    args = parser.parse_args(argv)
    load_start = load_average()
    level, cast = load_level(), load_cast()
    runs = [run_errands(level, cast, seed) for seed in args.seeds]
    for r in runs:
        print(f"seed {r.seed}: {r.done_s} all done: {r.all_done} ({r.wall_s} s wall)")
    report = {
        "machine": machine_header(load_start, model=None),  # the AI is off
        "limit_s": LIMIT_S,
        "runs": [asdict(r) for r in runs],
        "all_done": sum(r.all_done for r in runs),
        "seeds": len(runs),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"{report['all_done']} of {len(runs)} seeds finished every errand; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
