"""Benchmark: what llama.cpp's abort callback costs the game's tick and the model.

The same real-model village run, three ways, interleaved and repeated:

- ``none``: no abort callback (what llama-cpp-python does by default);
- ``native``: the game's switch, the C library's ``strlen`` on a one-byte flag;
- ``python``: a Python callback reading the same flag, which takes the GIL on every call.

    python tools/bench_abort.py --repeats 2 --ticks 900 --out bench/abort.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

from ai import abort  # noqa: E402
from game.app import Options, run  # noqa: E402

MODES = ("none", "native", "python")
_ORIGINAL_INSTALL = abort.AbortSwitch.install


def _install_for(mode: str) -> Any:
    def install(self: abort.AbortSwitch, llama_cpp: Any, ctx: Any, native: bool = True) -> None:  # noqa: ARG001
        if mode == "none":
            return
        _ORIGINAL_INSTALL(self, llama_cpp, ctx, native=mode == "native")

    return install


def one_run(mode: str, ticks: int, scenario: str) -> dict[str, Any]:
    """One paced headless run with the abort callback installed as ``mode`` says."""
    abort.AbortSwitch.install = _install_for(mode)  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        options = Options(
            headless=True,
            ticks=ticks,
            scenario=scenario,
            ai_mode="async",
            report=report,
            log_level="WARNING",
        )
        if run(options) != 0:
            raise SystemExit(f"run failed in mode {mode}")
        data = json.loads(report.read_text())
    ai = data["ai"]
    return {
        "mode": mode,
        "tick_ms": data["tick_ms"],
        "overruns": data["overruns"],
        "tokens": ai["tokens"],
        "tokens_per_s_p50": ai["tokens_per_s"]["p50"],
        "completed": ai["completed"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--ticks", type=int, default=900)
    parser.add_argument("--scenario", default="village")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "abort.json")
    args = parser.parse_args()
    runs = []
    for repeat in range(args.repeats):
        for mode in MODES:
            result = one_run(mode, args.ticks, args.scenario)
            result["repeat"] = repeat
            runs.append(result)
            print(json.dumps(result))
    ratios = []
    for repeat in range(args.repeats):
        by_mode = {r["mode"]: r for r in runs if r["repeat"] == repeat}
        base = by_mode["none"]
        ratios.append(
            {
                mode: {
                    "tick_p50": round(by_mode[mode]["tick_ms"]["p50"] / base["tick_ms"]["p50"], 3),
                    "tick_p99": round(by_mode[mode]["tick_ms"]["p99"] / base["tick_ms"]["p99"], 3),
                    "tokens_per_s": round(
                        by_mode[mode]["tokens_per_s_p50"] / max(base["tokens_per_s_p50"], 1e-9), 3
                    ),
                }
                for mode in ("native", "python")
            }
        )
    result = {"load_average": os.getloadavg(), "runs": runs, "ratios_vs_none": ratios}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(ratios, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
