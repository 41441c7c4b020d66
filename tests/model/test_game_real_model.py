"""A short village run on the packaged Gemma 3 270M model, through the player's entry point.

The bot walks the village while the real model writes lines on its worker thread. The
run checks what the scripted backend cannot: that real model lines reach bubbles, that
none of them breaks a validation rule, and that the tick never waits for the model.
The timing bounds are loose on purpose; the benchmark records the real figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from game.__main__ import main
from tests.support.timing import FRAME_MS, MAIN_THREAD_AI_MAX_MS
from tools.eval.bubble_audit import audit

pytestmark = pytest.mark.model

# Twenty seconds of play: the first model line usually shows within two, but a busy
# machine (another model process on the second core) has taken more than seven.
TICKS = 1200


@pytest.fixture(scope="module")
def village_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    folder = tmp_path_factory.mktemp("real-model")
    report, log = folder / "report.json", folder / "bubbles.jsonl"
    argv = ["--headless", "--backend", "llama", "--scenario", "village"]
    argv += ["--ticks", str(TICKS), "--seed", "7", "--log", "WARNING"]
    argv += ["--bubble-log", str(log), "--report", str(report)]
    assert main(argv) == 0
    return json.loads(report.read_text()), log


def test_model_lines_reach_bubbles_and_none_is_stale(
    village_run: tuple[dict[str, Any], Path],
) -> None:
    report, log = village_run
    assert report["ticks"] == TICKS
    assert report["ai"]["load"] == "ready"
    assert report["ai"]["completed"] > 0
    result = audit(log)
    assert result["origins"].get("model", 0) + result["origins"].get("prepared", 0) >= 1
    assert result["violations"] == 0, result["by_rule"]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    written = [r["text"] for r in records if r["origin"] in ("model", "prepared")]
    assert all(text.strip() and '"' not in text and "\n" not in text for text in written)


def test_the_tick_never_waits_for_the_model(village_run: tuple[dict[str, Any], Path]) -> None:
    report, _ = village_run
    # Ticks that ask for a line build its prompt here (p99 0.4-1.3 ms measured quietly). A
    # single tick's maximum is held below any wait for a line, which takes 100 ms or more.
    assert report["ai"]["main_thread_ai_ms"]["p99"] <= 2.0
    assert report["ai"]["main_thread_ai_ms"]["max"] <= MAIN_THREAD_AI_MAX_MS
    assert report["tick_ms"]["p99"] < FRAME_MS
