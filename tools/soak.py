"""Soak: a long real-model headless game, watching memory, tick times and leftovers.

Runs ``python -m game --headless`` (the crowd scenario by default: 31 villagers) with the
packaged model for N minutes in a subprocess, samples its resident memory every few
seconds, then stops it with SIGTERM as a player's quit would. Reports:

- RSS growth from the end of warm-up (the first sample after ``--warmup-s``) to the end;
- tick p50/p99/max and overruns, from the game's own report;
- requests still queued or running after the model shut down;
- exceptions: tracebacks and ERROR lines on the game's stderr.

    python tools/soak.py --minutes 30 --out bench/soak.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def rss_kb(pid: int) -> int | None:
    """Resident set size of ``pid`` in kB (Linux), or None once it has gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def load_average() -> tuple[float, float, float] | None:
    """The machine's 1/5/15-minute load average, to state the load the run saw."""
    try:
        return os.getloadavg()
    except OSError:
        return None


def soak(minutes: float, scenario: str, warmup_s: float, sample_s: float) -> dict[str, Any]:
    """Run the game for ``minutes`` and return the soak figures."""
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    with tempfile.TemporaryDirectory() as folder:
        report_path = Path(folder) / "report.json"
        argv = [sys.executable, "-m", "game", "--headless", "--scenario", scenario]
        argv += ["--ticks", str(10**9), "--report", str(report_path), "--log", "WARNING"]
        err_path = Path(folder) / "stderr.txt"
        with err_path.open("w", encoding="utf-8") as err:
            process = subprocess.Popen(
                argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err
            )
            start = time.monotonic()
            samples: list[tuple[float, int]] = []
            loads: list[tuple[float, float, float]] = []
            end = start + minutes * 60.0
            while time.monotonic() < end and process.poll() is None:
                rss = rss_kb(process.pid)
                if rss is not None:
                    samples.append((round(time.monotonic() - start, 1), rss))
                load = load_average()
                if load is not None:
                    loads.append(load)
                time.sleep(sample_s)
            quit_at = time.monotonic()
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=60)
            exit_s = time.monotonic() - quit_at
        stderr = err_path.read_text(encoding="utf-8", errors="replace")
        report = json.loads(report_path.read_text()) if report_path.exists() else {}
    after = [rss for t, rss in samples if t >= warmup_s]
    growth = (after[-1] - after[0]) / after[0] * 100.0 if len(after) >= 2 else None
    ai = report.get("ai", {})
    return {
        "minutes": minutes,
        "scenario": scenario,
        "exit_code": code,
        "exit_after_sigterm_s": round(exit_s, 3),
        "rss_kb_after_warmup": after[0] if after else None,
        "rss_kb_end": after[-1] if after else None,
        "rss_kb_max": max(after) if after else None,
        "rss_growth_pct": None if growth is None else round(growth, 2),
        "ticks": report.get("ticks"),
        "tick_ms": report.get("tick_ms"),
        "overruns": report.get("overruns"),
        "gc": report.get("gc"),
        "lines": report.get("lines"),
        "ai_completed": ai.get("completed"),
        "ai_fallbacks": ai.get("fallbacks"),
        "pending_after_shutdown": ai.get("after_shutdown"),
        "exceptions": stderr.count("Traceback"),
        "error_lines": [line for line in stderr.splitlines() if " ERROR " in line][:20],
        "load_average": {
            "min_1m": min(s[0] for s in loads) if loads else None,
            "max_1m": max(s[0] for s in loads) if loads else None,
            "mean_1m": round(sum(s[0] for s in loads) / len(loads), 2) if loads else None,
        },
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "rss_samples": samples,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--scenario", default="crowd", choices=("village", "ambush", "crowd"))
    parser.add_argument("--warmup-s", type=float, default=60.0, help="RSS baseline is taken here")
    parser.add_argument("--sample-s", type=float, default=5.0)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "soak.json")
    args = parser.parse_args()
    result = soak(args.minutes, args.scenario, args.warmup_s, args.sample_s)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    summary = {k: v for k, v in result.items() if k != "rss_samples"}
    print(json.dumps(summary, indent=2))
    ok = (
        result["exit_code"] == 0
        and result["exceptions"] == 0
        and result["pending_after_shutdown"] == {"queue_depth": 0, "in_flight": 0}
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
