"""Where the two threads spend their time, sampled with py-spy in the real village.

For each mode (``plain``, ``runtime``) runs ``tools/bench/busy.py`` with only that mode
(the village at 60 Hz beside a model generating back to back) under py-spy twice:

- ``--native --idle --threads``: every thread's stack, native frames included. A
  main-thread sample whose innermost frame is ``pthread_cond_wait`` or
  ``pthread_cond_timedwait`` under a Python frame is the main thread waiting for the
  GIL (CPython 3.11's ``take_gil`` is inlined there); one in ``clock_nanosleep`` is its
  sleep between ticks. Only samples inside the tick loop are counted.
- ``--gil``: only the thread holding the GIL is sampled, so the worker's samples give
  its seconds of Python per token.

Needs ``pip install py-spy`` and permission to trace (root, or ptrace_scope 0). Writes
JSON.

    python tools/bench/profile_gil.py --out bench/gil.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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

RATE = 200  # samples per second; --native pauses the process for each sample
_LOOP = ("Session.step", "time_sleep", "_Plain.tick", "_Runtime.tick")


def _py_spy() -> str:
    found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(found).exists():
        raise SystemExit("py-spy is not installed: pip install py-spy")
    return found


def _record(mode: str, flags: list[str], seconds: float, workdir: Path) -> tuple[Path, Path]:
    """One profiled busy.py run; returns the raw samples and the benchmark's JSON."""
    samples, report = workdir / f"{mode}{flags[0]}.txt", workdir / f"{mode}{flags[0]}.json"
    blocks = max(1, round(seconds / 3))
    command = [_py_spy(), "record", *flags, "--threads", "--format", "raw", "-r", str(RATE)]
    command += ["-o", str(samples), "--", sys.executable, str(ROOT / "tools" / "bench" / "busy.py")]
    command += ["--modes", mode, "--blocks", str(blocks), "--block-seconds", "3"]
    command += ["--out", str(report)]
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0 or not samples.exists():
        raise SystemExit(f"py-spy run failed for {mode}:\n{result.stderr[-2000:]}")
    return samples, report


def _stacks(path: Path) -> list[tuple[bool, list[str], int]]:
    """(main thread?, frames outermost first, sample count) per line of py-spy's raw output.

    Lines start ``thread (TID)`` or ``thread (TID): NAME``; the main thread is the
    process's first thread, so it has the lowest id.
    """
    rows = []
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        thread, *frames = stack.split(";")
        tid = int(thread.partition("(")[2].partition(")")[0])
        rows.append((tid, frames, int(count)))
    main = min((tid for tid, _, _ in rows), default=0)
    return [(tid == main, frames, count) for tid, frames, count in rows]


def _main_thread(stacks: list[tuple[bool, list[str], int]]) -> dict[str, Any]:
    """Main-thread samples inside the tick loop: sleeping, waiting for the GIL, running."""
    kinds: Counter[str] = Counter()
    in_step: Counter[str] = Counter()
    for is_main, frames, count in stacks:
        if not is_main or not frames or not any(f.startswith(_LOOP) for f in frames):
            continue
        leaf = frames[-1] if "libc" not in frames[-1] or len(frames) < 2 else frames[-2]
        if any(f.startswith("clock_nanosleep") for f in frames):
            kind = "sleeping"
        elif leaf.startswith("pthread_cond"):
            kind = "waiting_for_gil"
        else:
            kind = "running"
        kinds[kind] += count
        if any(f.startswith("Session.step") for f in frames):
            in_step[kind] += count
    awake = kinds["running"] + kinds["waiting_for_gil"]
    return {
        "samples": dict(kinds),
        "in_village_step": dict(in_step),
        "gil_wait_share_of_awake": round(kinds["waiting_for_gil"] / awake, 4) if awake else None,
    }


def _worker_gil(stacks: list[tuple[bool, list[str], int]], tokens: int) -> dict[str, Any]:
    """The worker's GIL-holding samples, as ms per token, and its hottest Python frames."""
    held = Counter[str]()
    total = 0
    for is_main, frames, count in stacks:
        if is_main or not frames:
            continue
        total += count
        python = [f for f in frames if ".py:" in f]
        held[python[-1] if python else frames[-1]] += count
    return {
        "gil_samples": total,
        "gil_ms_per_token": round(1000.0 * total / RATE / tokens, 3) if tokens else None,
        "top_frames": dict(held.most_common(6)),
    }


def main() -> int:
    """Profile each mode and write the summary."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--modes", default="plain,runtime")
    parser.add_argument("--seconds", type=float, default=15.0, help="ticking time per run")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "gil.json")
    args = parser.parse_args()
    load_before = load_average()
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for mode in filter(None, args.modes.split(",")):
            native, _ = _record(mode, ["--native", "--idle"], args.seconds, workdir)
            gil, report_path = _record(mode, ["--gil"], args.seconds, workdir)
            report = json.loads(report_path.read_text())
            tokens = report["tokens"][mode]
            result[mode] = {
                "main_thread": _main_thread(_stacks(native)),
                "worker": _worker_gil(_stacks(gil), tokens),
                "tokens": tokens,
                "tokens_per_s": report["tokens_per_s"][mode],
            }
            print(mode, json.dumps(result[mode]), flush=True)
    document = {
        "machine": machine_header(load_before, model=load_settings(CONFIG_DIR).ai.model),
        "rate_hz": RATE,
        "seconds_per_run": args.seconds,
        "modes": result,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
