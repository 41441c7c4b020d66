"""Tick timing with the real model beside the loop: the zero-stall claim, checked in CI.

Each run is its own headless process, paced at real time like a window, on the same
scenario and seed. The bounds are generous so a noisy machine cannot fail them; the
sync run shows that they can fail, because the naive design does stall.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.timing import FRAME_MS, MAIN_THREAD_AI_MAX_MS, WAIT_FOR_A_LINE_MS

pytestmark = pytest.mark.model

TICKS = 720


def headless(mode: str, report: Path) -> dict[str, Any]:
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    command = [sys.executable, "-m", "game", "--headless", "--ai", mode, "--ticks", str(TICKS)]
    command += ["--report", str(report), "--log", "WARNING"]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    data: dict[str, Any] = json.loads(report.read_text())
    return data


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    """Off and async interleaved twice, so noise hits both alike; then one sync run."""
    folder = tmp_path_factory.mktemp("timing")
    out: dict[str, list[dict[str, Any]]] = {"off": [], "async": [], "sync": []}
    for i, mode in enumerate(("off", "async", "off", "async", "sync")):
        out[mode].append(headless(mode, folder / f"{i}-{mode}.json"))
    return out


def test_the_model_really_ran(runs: dict[str, list[dict[str, Any]]]) -> None:
    for report in runs["async"] + runs["sync"]:
        assert report["ai"]["load"] == "ready"
        assert report["ai"]["completed"] > 0


def test_the_ai_boundary_costs_the_tick_next_to_nothing(
    runs: dict[str, list[dict[str, Any]]],
) -> None:
    # The typical tick spends a few hundredths of a millisecond in AI code. The ticks that
    # ask for a line build its prompt here: with greetings and goodbyes written ahead there
    # are more of them, and the p99 measured 0.4-1.3 ms on a quiet machine. A single tick's
    # maximum is held below any wait for a line: the sync run below waits for whole lines.
    for report in runs["async"]:
        assert report["ai"]["main_thread_ai_ms"]["p99"] <= 2.0
        assert report["ai"]["main_thread_ai_ms"]["max"] <= MAIN_THREAD_AI_MAX_MS


def test_tick_p99_with_the_model_busy_fits_the_frame(
    runs: dict[str, list[dict[str, Any]]],
) -> None:
    for report in runs["async"]:
        assert report["tick_ms"]["p99"] <= FRAME_MS


def test_busy_over_off_ratio(runs: dict[str, list[dict[str, Any]]]) -> None:
    # The typical tick (p50) with the model generating beside it, against the AI off.
    # The p99 ratio of two sub-millisecond figures swings between about 1.0 and 1.8 from
    # run to run on this machine, so tools/bench/zero_stall.py publishes it and this test keeps
    # to what holds on a noisy machine. Noise only ever adds time, so the better of two
    # back-to-back pairs measures the design rather than the neighbours.
    ratios = [
        busy["tick_ms"]["p50"] / off["tick_ms"]["p50"]
        for busy, off in zip(runs["async"], runs["off"], strict=True)
    ]
    assert min(ratios) <= 1.5, ratios


def test_sync_mode_stalls_which_proves_these_checks_can_fail(
    runs: dict[str, list[dict[str, Any]]],
) -> None:
    (sync,) = runs["sync"]
    assert sync["tick_ms"]["max"] >= WAIT_FOR_A_LINE_MS
    assert sync["ai"]["main_thread_ai_ms"]["max"] >= WAIT_FOR_A_LINE_MS
    assert sync["overruns"] > 0
