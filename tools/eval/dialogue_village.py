"""Where the village's bubbles come from, this code against an earlier commit, interleaved.

Each run is a headless game (``python -m game --headless --scenario village --seed 7``,
paced at 60 Hz, the packaged model) with a bubble log. It counts the bubbles by origin
(model, prepared, template, fallback), the runtime's fallbacks by reason, greetings
shown within one tick, and the tick times. ``--base REF`` runs the same game from a
checkout of ``REF`` (a git worktree under the temporary folder), alternating with this
tree, so machine noise hits both alike. Writes ``bench/dialogue_village.json``:

    python tools/eval/dialogue_village.py --base 4931bc6 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402
from tools.bench.trees import checkout  # noqa: E402


def run(tree: Path, ticks: int, workdir: Path, tag: str) -> dict[str, Any]:
    """One headless village run from ``tree``; its figures."""
    log, report = workdir / f"{tag}.jsonl", workdir / f"{tag}.json"
    env = {**os.environ, "PYTHONPATH": str(tree), "SDL_VIDEODRIVER": "dummy",
           "SDL_AUDIODRIVER": "dummy"}  # fmt: skip
    command = [sys.executable, "-m", "game", "--headless", "--scenario", "village",
               "--seed", "7", "--ticks", str(ticks),
               "--bubble-log", str(log), "--report", str(report)]  # fmt: skip
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tag}: the game exited with {done.returncode}\n{done.stderr[-2000:]}")
    data = json.loads(report.read_text())
    bubbles = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    ai = data.get("ai", {})
    return {
        "tick_ms": data["tick_ms"],
        "runtime_fallbacks": ai.get("fallbacks", {}),
        "bubbles_by_origin": dict(Counter(b["origin"] for b in bubbles)),
        "greetings_within_1_tick": ai.get("greetings_within_1_tick", 0),
        "encounters": ai.get("encounters", 0),
        "model_lines": [b["text"] for b in bubbles if b["origin"] in ("model", "prepared")],
    }


def main(argv: list[str] | None = None) -> int:
    """Run the village from each tree in turn and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", help="an earlier commit to run beside this tree")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--ticks", type=int, default=3600)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "dialogue_village.json")
    args = parser.parse_args(argv)
    load_start = load_average()
    trees = {"this": ROOT}
    if args.base:
        trees = {f"base {args.base}": checkout(args.base), **trees}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):
            order = list(trees.items()) if repeat % 2 == 0 else list(reversed(trees.items()))
            for name, tree in order:
                figures = run(tree, args.ticks, Path(tmp), f"{name.split()[0]}-{repeat}")
                runs[name].append(figures)
                shown = sum(figures["bubbles_by_origin"].values())
                mine = sum(figures["bubbles_by_origin"].get(o, 0) for o in ("model", "prepared"))
                print(f"{name:<16} bubbles {shown:>3}, from the model {mine:>3}, "
                      f"fallbacks {sum(figures['runtime_fallbacks'].values()):>2}, "
                      f"tick p99 {figures['tick_ms']['p99']:.2f} ms", flush=True)  # fmt: skip
    document = {
        "what": f"headless village runs, seed 7, {args.ticks} ticks paced at 60 Hz, "
        f"{args.repeats} repeats per tree, trees alternating",
        "machine": machine_header(load_start, model=load_settings(CONFIG_DIR).ai.model),
        "runs": runs,
    }
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
