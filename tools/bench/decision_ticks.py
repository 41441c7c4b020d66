"""Tick time with villagers deciding what to do, against the same village without decisions.

The game runs headless at its real 60 Hz with the real model (the village adapter) and
the errand bot at the keys; every few seconds the traveller says something to the
nearest villager (asks for an apple, to be followed, the way, ... from the evaluation's
phrasings). In the "decisions" arm each reply is followed by a decision on the worker,
checked and acted on; in the "no decisions" arm the same lines are said and answered,
and nothing is decided. Arms alternate round by round, so machine load hits both alike.

    python tools/bench/decision_ticks.py                  # bench/decisions_ticks.json
    python tools/bench/decision_ticks.py --rounds 1 --ticks 600
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from game.app import build_village  # noqa: E402
from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from game.core.stats import summarize_ms  # noqa: E402
from game.headless.report import report_json  # noqa: E402
from game.input.bot import Bot  # noqa: E402
from game.sim.ticks import DT  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

ASKS = (
    "could you bring me an apple?",
    "follow me for a bit",
    "where's the well?",
    "can you get the guard for me",
    "you're useless",
    "sorry about earlier",
    "put an apple in the basket please",
    "nice weather today",
)
ASK_EVERY = 180


def run_arm(
    decisions: bool, ticks: int, seed: int, bubble_log: Path | None = None
) -> dict[str, Any]:
    """One paced run; returns its tick figures and what was decided."""
    settings = load_settings(CONFIG_DIR, (f"game.world.seed={seed}",))
    log = bubble_log.open("w", encoding="utf-8", buffering=1) if bubble_log else None
    village = build_village(settings, bubble_log=log)
    if village.ai.wait_ready(120.0) != "ready":
        raise SystemExit("tools/bench/decision_ticks.py: the model did not load")
    if not decisions:
        village.dialogue.on_reply = None
        village.decider = None
    bot = Bot("errands", seed, village.world.level_view())
    said = 0
    samples: list[float] = []
    next_at = time.perf_counter()
    for tick in range(ticks):
        world = village.world
        village.step(bot.intent(world.snapshot()))
        samples.append(village.last_tick_ms())
        if tick % ASK_EVERY == ASK_EVERY - 1:
            npc = world.nearest_talker()
            if npc is not None and world.set_talking(npc, True):
                village.dialogue.say(
                    village.tick, npc, world.player_status().id, ASKS[said % len(ASKS)]
                )
                said += 1
        next_at += DT
        time.sleep(max(0.0, next_at - time.perf_counter()))
    report = {
        "tick_ms": summarize_ms(samples),
        "overruns": sum(1 for s in samples if s > DT * 1000.0),
        "said": said,
        "decisions": report_json(village.decider.report()) if village.decider is not None else {},
        "lines_shown": dict(village.dialogue.shown),
        "recent_decisions": [row[1] for row in village.decider.hud_rows()[1:]]
        if village.decider is not None
        else [],
    }
    village.close()
    if log is not None:
        log.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ticks", type=int, default=1800)
    parser.add_argument("--out", default=str(ROOT / "bench" / "decisions_ticks.json"))
    parser.add_argument("--bubble-log", type=Path, help="the first decisions run's bubbles")
    args = parser.parse_args()
    load_start = load_average()
    rounds: list[dict[str, Any]] = []
    for r in range(args.rounds):
        seed = 3 + r
        on = run_arm(True, args.ticks, seed, args.bubble_log if r == 0 else None)
        off = run_arm(False, args.ticks, seed)
        rounds.append({"seed": seed, "decisions": on, "no_decisions": off})
        print(
            f"round {r + 1}: p99 {on['tick_ms']['p99']:.3f} ms with decisions, "
            f"{off['tick_ms']['p99']:.3f} without; "
            f"{on['decisions'].get('applied_total', 0)} applied",
            file=sys.stderr,
        )
    p99_on = sorted(r["decisions"]["tick_ms"]["p99"] for r in rounds)
    p99_off = sorted(r["no_decisions"]["tick_ms"]["p99"] for r in rounds)
    median_on = p99_on[len(p99_on) // 2]
    median_off = p99_off[len(p99_off) // 2]
    report = {
        "machine": machine_header(load_start, model=load_settings(CONFIG_DIR).ai.model),
        "ticks_per_arm": args.ticks,
        "rounds": rounds,
        "tick_p99_ms": {"decisions": median_on, "no_decisions": median_off},
        "p99_ratio": round(median_on / median_off, 3) if median_off else None,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"tick p99 median {median_on:.3f} ms with decisions, {median_off:.3f} ms without "
        f"(ratio {report['p99_ratio']}) -> {out}"
    )


if __name__ == "__main__":
    main()
