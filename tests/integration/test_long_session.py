"""A long session keeps its memory flat: timings live in ring buffers, not growing lists."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from game.app import build_village
from game.config.settings import load_settings
from game.core.stats import RECENT_TICKS
from game.input.bot import Bot

STATM = Path("/proc/self/statm")


def resident_mb() -> float:
    """This process's resident set size, in MB."""
    return int(STATM.read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.mark.skipif(not STATM.exists(), reason="reads /proc/self/statm")
def test_100k_unpaced_ticks_keep_memory_flat() -> None:
    village = build_village(load_settings(overrides=('game.dialogue.ai_mode="off"',)))
    world = village.world
    bot = Bot("village", seed=7, level=world.level_view(), talk_radius=world.talk_radius)
    samples: dict[int, float] = {}
    try:
        for tick in range(1, 100_001):
            village.step(bot.intent(world.snapshot()))
            if tick in (40_000, 100_000):
                samples[tick] = resident_mb()
    finally:
        village.close()

    # Two growing lists of floats (tick and AI timings) would add about 3.8 MB over the
    # last 60,000 ticks; ring buffers add nothing once full.
    assert samples[100_000] - samples[40_000] < 1.5
    assert len(village.tick_ms) == RECENT_TICKS
    assert village.tick_ms.count == 100_000
    assert len(village.dialogue.ai_ms) == RECENT_TICKS
