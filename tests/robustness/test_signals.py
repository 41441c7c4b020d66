"""SIGINT, SIGTERM, SIGHUP and SIGKILL in the middle of a headless run (scripted model)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    report, log = tmp_path / "report.json", tmp_path / "bubbles.jsonl"
    argv = [sys.executable, "-m", "game", "--headless", "--backend", "scripted"]
    argv += ["--ticks", "100000", "--report", str(report), "--bubble-log", str(log)]
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    return process, report, log


def _wait_for_bubbles(log: Path, process: subprocess.Popen[str]) -> None:
    end = time.monotonic() + 60.0
    while time.monotonic() < end and process.poll() is None:
        if log.exists() and log.read_text(encoding="utf-8").count("\n") >= 3:
            return
        time.sleep(0.1)
    pytest.fail("no bubbles were logged")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_stop_signal_writes_an_interrupted_report(tmp_path: Path, signum: int) -> None:
    process, report, log = _start(tmp_path)
    _wait_for_bubbles(log, process)
    process.send_signal(signum)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    data = json.loads(report.read_text())
    assert data["interrupted"] is True
    assert 0 < data["ticks"] < 100000
    assert data["ai"]["after_shutdown"] == {"queue_depth": 0, "in_flight": 0}
    assert "(interrupted)" in out
    lines = log.read_text(encoding="utf-8").splitlines()
    assert all(json.loads(line)["text"] for line in lines)


def test_sigkill_leaves_every_shown_bubble_in_the_log(tmp_path: Path) -> None:
    process, _, log = _start(tmp_path)
    _wait_for_bubbles(log, process)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    text = log.read_text(encoding="utf-8")
    # Line-buffered: every record written so far is whole; nothing sits in a buffer.
    assert text.endswith("\n")
    assert all(json.loads(line)["text"] for line in text.splitlines())
