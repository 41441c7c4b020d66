"""Runs the village with no window: a scripted bot plays, and a report comes out."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from game.cli import EXIT_OK, fail, notice
from game.config.settings import LoopConfig, Settings
from game.core.gcwatch import GcWatch, settle_heap
from game.core.loop import FixedStepLoop
from game.core.session import Session
from game.core.shutdown import StopRequest
from game.headless.report import (
    AiReport,
    GcReport,
    HeadlessReport,
    QueueLeft,
    SamplesReport,
    StartupReport,
    write_report,
)
from game.input.bot import Bot
from game.persist.autosave import Autosave
from game.sim.ticks import HZ

logger = logging.getLogger(__name__)

_READY_TIMEOUT_S = 120.0


def run_headless(
    village: Session,
    settings: Settings,
    stop: StopRequest,
    *,
    autosave: Autosave | None = None,
    report_path: Path | None = None,
    paced: bool = True,
    samples: bool = False,
    launched_at: float | None = None,
) -> int:
    """Wait for the model, let the bot play, shut the model down, then print the summary
    and write the report.

    Returns the exit code: 2 when the report cannot be written.
    """
    headless = settings.game.headless
    world = village.world
    bot = Bot(
        headless.scenario,
        seed=settings.game.world.seed,
        level=world.level_view(),
        talk_radius=world.talk_radius,
    )
    state, ready_at = _wait_ready(village, stop, timeout_s=_READY_TIMEOUT_S)
    if state == "degraded":
        reason = village.ai.load_error()
        notice(
            f"the model could not load ({reason or 'see the log'}); villagers use template lines"
        )
    settle_heap()
    startup = None
    if launched_at is not None and ready_at is not None:
        startup = StartupReport(_ms_since(launched_at, ready_at), _ms_since(launched_at))
        logger.info(
            "first tick %.0f ms after start (model ready at %.0f ms)",
            startup.first_tick_ms,
            startup.model_ready_ms,
        )
    played = play(
        village, bot, headless.ticks, settings.game.loop, paced=paced, stop=lambda: stop.requested
    )
    lines, model = village.dialogue.report(), village.ai.report()
    latency = village.dialogue.latency_report()
    decisions = village.decider.report() if village.decider is not None else None
    # Shut the model down before the report is written, so it can say nothing was left.
    village.close()
    left = village.ai.report()
    report = HeadlessReport(
        scenario=headless.scenario,
        seed=settings.game.world.seed,
        ai_mode=settings.game.dialogue.ai_mode,
        ticks=village.tick,
        interrupted=played.interrupted,
        dt=played.dt,
        wall_s=round(played.wall_s, 3),
        paced=paced,
        tick_ms=village.tick_ms.summary(),
        overruns=village.tick_ms.over,
        events=dict(sorted(village.events.items())),
        npc_transitions=village.npc_transitions,
        errands_done=village.errands_done,
        npcs=len(world.npc_ids()),
        props=len(world.snapshot().props),
        lines=lines,
        ai=AiReport(
            model,
            latency,
            after_shutdown=None if left is None else QueueLeft(left.queue_depth, left.in_flight),
        ),
        decisions=decisions,
        gc=played.gc,
        world_hash=world.world_hash(),
        save=autosave.report() if autosave is not None else None,
        startup=startup,
        samples=_samples(village) if samples else None,
        settings=village.live_settings.report() if village.live_settings is not None else None,
    )
    print_summary(report)
    if report_path is not None:
        try:
            write_report(report, report_path)
        except OSError as exc:
            return fail(f"cannot write report {report_path}: {exc}")
    return EXIT_OK


def print_summary(report: HeadlessReport) -> None:
    """Two lines on stdout: the world hash, then the tick count and tick timings."""
    print(f"world_hash {report.world_hash}")
    tick_ms = report.tick_ms
    print(
        f"ticks {report.ticks}  tick_ms p50 {tick_ms.p50:.3f} p99 {tick_ms.p99:.3f} "
        f"max {tick_ms.max:.3f}  overruns {report.overruns}"
        + ("  (interrupted)" if report.interrupted else "")
    )


@dataclass(frozen=True, slots=True)
class Played:
    """How the ticks went: cut short or not, the fixed step, the wall time, the GC's pauses."""

    interrupted: bool
    dt: float
    wall_s: float
    gc: GcReport


def play(
    village: Session,
    bot: Bot,
    ticks: int,
    loop_config: LoopConfig,
    paced: bool = True,
    clock: Callable[[], float] = time.perf_counter,
    sleep: Callable[[float], None] = time.sleep,
    stop: Callable[[], bool] = lambda: False,
) -> Played:
    """Let the bot play ``ticks`` ticks.

    ``stop`` is checked between ticks; once it returns True the run ends early, as
    ``interrupted``.

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
    return Played(village.tick < ticks, loop.dt, clock() - start, gc_watch.summary())


def _samples(village: Session) -> SamplesReport:
    return SamplesReport(
        tick_ms=tuple(round(ms, 4) for ms in village.tick_ms),
        ai_ms=tuple(round(ms, 4) for ms in village.dialogue.ai_ms),
        greet_latency_ticks=tuple(village.dialogue.latency_ticks.get("greet", ())),
    )


def _wait_ready(village: Session, stop: StopRequest, timeout_s: float) -> tuple[str, float | None]:
    """Wait for the model and its warm-up in short slices, so a stop signal is seen.

    Returns the state and the ``perf_counter`` time the model was first seen loaded.
    """
    end = time.monotonic() + timeout_s
    state = "loading"
    ready_at = None
    while state in ("loading", "warming") and not stop.requested and time.monotonic() < end:
        state = village.ai.wait_ready(timeout_s=0.05)
        if ready_at is None and state != "loading":
            ready_at = time.perf_counter()
    return state, ready_at


def _ms_since(start: float, at: float | None = None) -> float:
    return round(((time.perf_counter() if at is None else at) - start) * 1000.0, 1)
