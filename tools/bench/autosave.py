"""Benchmark: what autosaving costs the tick.

The crowd scenario (31 villagers) with the scripted model, paced at 60 Hz, run with and
without saving, alternately, in one session. Saves come every ``--interval-s`` (1 s by
default, ten times the game's default, to make their cost visible). Reports the tick
figures of both and the save's own figures: the capture in the tick, the write on the
saver thread.

    python tools/bench/autosave.py --repeats 3 --ticks 3600 --out bench/save.json
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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.bench.machine import load_average, machine_header  # noqa: E402


def one_run(ticks: int, save: bool, interval_s: float) -> dict[str, Any]:
    """One headless crowd run; its tick figures and, when saving, the save figures."""
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        argv = [sys.executable, "-m", "game", "--headless", "--scenario", "crowd"]
        argv += ["--backend", "scripted", "--ticks", str(ticks), "--report", str(report)]
        argv += ["--log", "WARNING"]
        if save:
            argv += ["--save", str(Path(folder) / "save.sqlite3")]
            argv += ["--set", f"game.save.interval_s={interval_s}"]
        subprocess.run(argv, cwd=ROOT, env=env, check=True, capture_output=True)
        data = json.loads(report.read_text())
    return {
        "save": save,
        "tick_ms": data["tick_ms"],
        "overruns": data["overruns"],
        "save_figures": data.get("save"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ticks", type=int, default=3600)
    parser.add_argument("--interval-s", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "save.json")
    args = parser.parse_args()
    load_start = load_average()
    runs = []
    for repeat in range(args.repeats):
        for save in (False, True):
            result = one_run(args.ticks, save, args.interval_s)
            result["repeat"] = repeat
            runs.append(result)
            print(json.dumps(result))
    ratios = []
    for repeat in range(args.repeats):
        off, on = (
            next(r for r in runs if r["repeat"] == repeat and r["save"] is s) for s in (False, True)
        )
        ratios.append(
            {
                "tick_p50": round(on["tick_ms"]["p50"] / off["tick_ms"]["p50"], 3),
                "tick_p99": round(on["tick_ms"]["p99"] / off["tick_ms"]["p99"], 3),
            }
        )
    result = {
        # The scripted model: no model file.
        "machine": machine_header(load_start, model=None),
        "runs": runs,
        "ratios_save_vs_none": ratios,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(ratios, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
