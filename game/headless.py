"""Runs the village with no window: a scripted bot plays, and a JSON report comes out."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from game.config.settings import LoopConfig
from game.core.gcwatch import GcWatch
from game.core.loop import FixedStepLoop
from game.core.session import Session
from game.input.bot import Bot
from game.sim.ticks import HZ

logger = logging.getLogger(__name__)


def run_headless(
    village: Session,
    bot: Bot,
    ticks: int,
    loop_config: LoopConfig,
    paced: bool = True,
    clock: Callable[[], float] = time.perf_counter,
    sleep: Callable[[float], None] = time.sleep,
    stop: Callable[[], bool] = lambda: False,
) -> dict[str, Any]:
    """Play ``ticks`` ticks and return the report.

    ``stop`` is checked between ticks; once it returns True the run ends early and the
    report says ``interrupted: true``.

    Paced runs keep real time at the loop's rate, as a window would, so that anything
    running beside the loop (the language model) sees the same amount of time per tick.
    Unpaced runs step back to back, for quick deterministic checks.
    """
    loop = FixedStepLoop(clock, HZ, loop_config.max_frame_s, loop_config.max_steps_per_frame)
    world = village.world

    def step(_tick: int) -> None:
        if village.tick >= ticks or stop():
            return
        village.step(bot.intent(world.snapshot()))

    start = clock()
    with GcWatch() as gc_watch:
        if paced:
            loop.advance(step)
            while village.tick < ticks and not stop():
                loop.advance(step)
                sleep(max(0.0, loop.dt - loop.accumulator))
        else:
            while village.tick < ticks and not stop():
                step(village.tick)
    interrupted = village.tick < ticks
    wall_s = clock() - start
    dt = loop.dt
    return {
        "ticks": village.tick,
        "interrupted": interrupted,
        "dt": dt,
        "wall_s": round(wall_s, 3),
        "paced": paced,
        "tick_ms": village.tick_ms.summary(),
        "overruns": village.tick_ms.over,
        "events": dict(sorted(village.events.items())),
        "npc_transitions": village.npc_transitions,
        "errands_done": village.errands_done,
        "npcs": len(world.npc_ids()),
        "props": len(world.snapshot().props),
        "lines": village.dialogue.report(),
        "ai": village.ai_report(),
        "decisions": village.decider.report() if village.decider is not None else {},
        "gc": gc_watch.summary(),
        "world_hash": world.world_hash(),
    }
