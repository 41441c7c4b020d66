"""How long the game takes to start: the first headless tick, and model lines in the window.

Each round starts the game four times, interleaved so machine noise hits all alike:
headless with the village adapter, headless with the base model's few-shot prompts,
headless with the AI off (the floor: imports, level, world), and the window (SDL's dummy
driver) with the adapter. From the game's own log and report it takes:

- ``model_ready_ms``: launch to the model loaded and self-tested;
- ``first_tick_ms``: launch to the first headless tick (after the warm-up);
- window: ``first_frame_ms`` and the tick from which model lines are served, as seconds
  after the first frame (the window steps 60 ticks a second from its first frame); and
  the welcome, the player's first greeting: when, and whether the model wrote it.

Writes ``bench/startup.json``:

    python tools/bench/startup.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

HEADLESS = {
    "adapter": (),
    "base": ("--set", 'ai.model.adapter=""'),
    "ai_off": ("--ai", "off"),
}
_FIRST_FRAME = re.compile(r"first frame after (\d+) ms")
_SERVING = re.compile(r"model lines from tick (\d+)")


def _env() -> dict[str, str]:
    return {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}


def headless(arm: str, workdir: Path, run: int) -> dict[str, Any]:
    """One headless start; the start-up figures from its report."""
    report = workdir / f"{arm}-{run}.json"
    command = [sys.executable, "-m", "game", "--headless", "--new", "--ticks", "30",
               "--report", str(report), *HEADLESS[arm]]  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True,
                          check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{arm}: exit {done.returncode}\n{done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(report.read_text()).get("startup", {})
    figures["process_s"] = round(time.perf_counter() - began, 2)
    return figures


def _welcome(bubbles: Path) -> dict[str, Any]:
    """The player's first greeting in a window start: when, and whose words (the model's
    when its origin is not "template")."""
    for line in bubbles.read_text(encoding="utf-8").splitlines():
        bubble = json.loads(line)
        if bubble["trigger"] == "greet" and bubble["listener"] is None:
            return {
                "welcome_after_first_frame_s": round(bubble["tick"] / 60.0, 2),
                "welcome_from_model": int(bubble["origin"] != "template"),
                "welcome_text": bubble["text"],
            }
    return {"welcome_from_model": 0, "welcome_text": None}


def window(run: int, workdir: Path) -> dict[str, Any]:
    """One window start with the adapter: first frame, when model lines began, and the
    welcome greeting."""
    bubbles = workdir / f"window-{run}.bubbles"
    command = [sys.executable, "-m", "game", "--new", "--frames", "600", "--log", "INFO",
               "--bubble-log", str(bubbles)]  # fmt: skip
    done = subprocess.run(command, cwd=ROOT, env=_env(), capture_output=True, text=True,
                          check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"window run {run}: exit {done.returncode}\n{done.stderr[-2000:]}")
    frame = _FIRST_FRAME.search(done.stderr)
    serving = _SERVING.search(done.stderr)
    row: dict[str, Any] = {
        "first_frame_ms": int(frame.group(1)) if frame else None,
        "model_lines_from_tick": int(serving.group(1)) if serving else None,
        "model_lines_after_first_frame_s": (
            round(int(serving.group(1)) / 60.0, 2) if serving else None
        ),
        **_welcome(bubbles),
    }
    if serving is None:
        # A start that never served a model line keeps its log, to say why.
        row["log_tail"] = done.stderr.splitlines()[-40:]
    return row


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    keys = {key for row in rows for key, value in row.items() if isinstance(value, int | float)}
    out: dict[str, Any] = {}
    for key in sorted(keys):
        values = [row[key] for row in rows if isinstance(row.get(key), int | float)]
        out[key] = {"median": round(statistics.median(values), 1), "max": max(values)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "startup.json")
    args = parser.parse_args()
    load = load_average()
    runs: dict[str, list[dict[str, Any]]] = {arm: [] for arm in (*HEADLESS, "window")}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            for arm in HEADLESS:
                runs[arm].append(headless(arm, Path(tmp), i))
            runs["window"].append(window(i, Path(tmp)))
            print(f"round {i + 1}: " + ", ".join(f"{a} {r[-1]}" for a, r in runs.items()))
    result = {
        "version": 2,
        "machine": machine_header(load, model=load_settings(CONFIG_DIR).ai.model),
        "rounds": args.rounds,
        "summary": {arm: _summary(rows) for arm, rows in runs.items()},
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
