"""A remote tier that sends one 10 MB line per reply, or bytes that are not UTF-8, beside
the running village: the frame holds, no bubble shows U+FFFD, and the tier is shut off.

The game runs headless and paced (as a player's), with every line routed to the server
and the scripted model as the local tier. Tick bounds are loose, to catch a stall, not
a slow machine; ``tools/bench/remote_faults.py`` measures the exact figures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.loopback import StubServer
from tools.bench.remote_faults import bad_utf8, huge

TICKS = 600


@pytest.mark.parametrize("respond", [huge, bad_utf8], ids=["10 MB line", "bad utf-8"])
def test_a_hostile_server_cannot_stall_the_frame_or_garble_a_bubble(
    tmp_path: Path, respond: object
) -> None:
    server = StubServer(respond)  # type: ignore[arg-type]
    try:
        report, log = tmp_path / "report.json", tmp_path / "bubbles.jsonl"
        argv = [sys.executable, "-m", "game", "--headless", "--backend", "scripted"]
        argv += ["--ticks", str(TICKS), "--report", str(report), "--bubble-log", str(log)]
        argv += [
            "--set",
            "ai.remote.enabled=true",
            "--set",
            f'ai.remote.base_url="{server.base_url}"',
        ]
        for name in ("player_chat", "reactive", "predictive", "ambient"):
            argv += ["--set", f'ai.routing.{name}=["remote"]']
        env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
        run = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=120, check=False
        )
    finally:
        server.close()
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert "Task was destroyed" not in run.stderr
    data = json.loads(report.read_text())
    assert data["tick_ms"]["p99"] < 16.7, data["tick_ms"]
    assert data["overruns"] <= 3, data["tick_ms"]
    remote = data["ai"]["tiers"]["remote"]
    assert sum(remote["failed"].values()) >= 1
    assert remote["completed"] == 0
    texts = [json.loads(line)["text"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert texts, "the village still talked, from the local tier and its templates"
    assert not any("\ufffd" in text for text in texts)
