"""Soak: a long real-model headless game, watching memory, tick times and leftovers.

Runs ``python -m game --headless`` (the crowd scenario by default: 31 villagers) with the
packaged model for N minutes in a subprocess, samples its resident memory every few
seconds, then stops it with SIGTERM as a player's quit would. Reports:

- RSS growth from the end of warm-up (the first sample after ``--warmup-s``) to the end;
- tick p50/p99/max and overruns, from the game's own report;
- requests still queued or running after the model shut down;
- exceptions: tracebacks and ERROR lines on the game's stderr;
- the machine's own stalls, from an idle thread in this process that sleeps 5 ms at a
  time and counts wake-ups more than a frame late (the machine is shared).

    python tools/bench/soak.py --minutes 30 --out bench/soak.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
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

from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402


def rss_kb(pid: int) -> tuple[int, int, int] | None:
    """Resident memory of ``pid`` in kB: total, anonymous, file-backed (Linux), or None.

    File-backed pages are mostly the memory-mapped model, which grows as new tokens'
    embedding rows are first read; anonymous memory is what a leak would grow.
    """
    fields: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "RssAnon", "RssFile"):
                    fields[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    if "VmRSS" not in fields:
        return None
    return fields["VmRSS"], fields.get("RssAnon", 0), fields.get("RssFile", 0)


class StallProbe:
    """Measures how late this (idle) process wakes from 5 ms sleeps: the machine's own stalls.

    A late wake-up of more than a frame here, where nothing else runs, means the host
    did not give the CPU back in time, whatever the game was doing.
    """

    def __init__(self) -> None:
        self.late_over_frame = 0
        self.max_late_ms = 0.0
        self.wakeups = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> StallProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            begin = time.perf_counter()
            time.sleep(0.005)
            late_ms = (time.perf_counter() - begin - 0.005) * 1000.0
            self.wakeups += 1
            self.max_late_ms = max(self.max_late_ms, late_ms)
            if late_ms > 1000.0 / 60.0:
                self.late_over_frame += 1


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
            samples: list[tuple[float, int, int, int]] = []
            loads: list[tuple[float, ...]] = []
            end = start + minutes * 60.0
            with StallProbe() as probe:
                while time.monotonic() < end and process.poll() is None:
                    rss = rss_kb(process.pid)
                    if rss is not None:
                        samples.append((round(time.monotonic() - start, 1), *rss))
                    load = load_average()
                    if load:
                        loads.append(load)
                    time.sleep(sample_s)
            quit_at = time.monotonic()
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=60)
            exit_s = time.monotonic() - quit_at
        stderr = err_path.read_text(encoding="utf-8", errors="replace")
        report = json.loads(report_path.read_text()) if report_path.exists() else {}
    after = [rss for t, rss, _, _ in samples if t >= warmup_s]
    anon = [a for t, _, a, _ in samples if t >= warmup_s]
    growth = (after[-1] - after[0]) / after[0] * 100.0 if len(after) >= 2 else None
    anon_growth = (anon[-1] - anon[0]) / anon[0] * 100.0 if len(anon) >= 2 and anon[0] else None
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
        "rss_anon_kb_after_warmup": anon[0] if anon else None,
        "rss_anon_kb_end": anon[-1] if anon else None,
        "rss_anon_growth_pct": None if anon_growth is None else round(anon_growth, 2),
        "host_stalls": {
            "probe_wakeups": probe.wakeups,
            "late_over_a_frame": probe.late_over_frame,
            "max_late_ms": round(probe.max_late_ms, 1),
        },
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
        "load_average_while_running": {
            "min_1m": min(s[0] for s in loads) if loads else None,
            "max_1m": max(s[0] for s in loads) if loads else None,
            "mean_1m": round(sum(s[0] for s in loads) / len(loads), 2) if loads else None,
        },
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
    load_start = load_average()
    figures = soak(args.minutes, args.scenario, args.warmup_s, args.sample_s)
    model = load_settings(CONFIG_DIR).ai.model
    result = {"machine": machine_header(load_start, model=model), **figures}
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
