"""The fixed-step game loop (Fiedler, "Fix Your Timestep!").

The renderer produces time and the simulation consumes it in fixed ``dt`` steps. The
accumulator lives here and only here. Frame time is clamped so a long pause (a debugger,
a dragged window) cannot trigger a spiral of death, and the number of steps per frame is
capped for the same reason. Simulation time is an integer tick; ``dt`` never changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class FrameResult:
    """What one call to ``FixedStepLoop.advance`` did.

    ``steps`` is how many fixed ticks ran, ``alpha`` the blend factor between the previous
    and the current simulation state for rendering, ``frame_dt`` the clamped frame time,
    and ``dropped_s`` the simulated time thrown away by the clamp or the step cap.
    """

    steps: int
    alpha: float
    frame_dt: float
    dropped_s: float


class FixedStepLoop:
    """Turns wall-clock frames into a whole number of fixed simulation steps.

    The loop does not own the game: each frame the caller calls ``advance`` with a
    callback that runs one tick. The clock is injected so tests can drive it by hand.
    """

    def __init__(
        self,
        clock: Clock,
        hz: int = 60,
        max_frame_s: float = 0.25,
        max_steps_per_frame: int = 5,
    ) -> None:
        if hz <= 0:
            raise ValueError(f"hz must be positive, got {hz}")
        if max_frame_s <= 0:
            raise ValueError(f"max_frame_s must be positive, got {max_frame_s}")
        if max_steps_per_frame < 1:
            raise ValueError(f"max_steps_per_frame must be at least 1, got {max_steps_per_frame}")
        self.dt = 1.0 / hz
        self.max_frame_s = max_frame_s
        self.max_steps_per_frame = max_steps_per_frame
        self.tick = 0
        self._clock = clock
        self._last: float | None = None
        self._acc = 0.0

    @property
    def accumulator(self) -> float:
        """Simulated time owed but not yet stepped, in seconds (always below ``dt``)."""
        return self._acc

    def reset(self) -> None:
        """Forget the last frame time, e.g. after unpausing, so the gap is not simulated."""
        self._last = None
        self._acc = 0.0

    def advance(self, step: Callable[[int], None]) -> FrameResult:
        """Read the clock, run as many fixed steps as are owed, and return the blend alpha.

        ``step`` receives the tick number being simulated. The first call only starts the
        clock and runs no step.
        """
        now = self._clock()
        if self._last is None:
            self._last = now
            return FrameResult(steps=0, alpha=0.0, frame_dt=0.0, dropped_s=0.0)
        frame_dt = max(0.0, now - self._last)
        self._last = now
        dropped = max(0.0, frame_dt - self.max_frame_s)
        self._acc += frame_dt - dropped

        steps = 0
        while self._acc >= self.dt and steps < self.max_steps_per_frame:
            step(self.tick)
            self.tick += 1
            self._acc -= self.dt
            steps += 1
        if self._acc >= self.dt:
            # Still behind after the cap: drop the backlog rather than fall further behind.
            backlog = self._acc - (self._acc % self.dt)
            dropped += backlog
            self._acc -= backlog
            logger.debug("frame behind by %.1f ms; dropped the backlog", backlog * 1000)
        return FrameResult(
            steps=steps,
            alpha=self._acc / self.dt,
            frame_dt=min(frame_dt, self.max_frame_s),
            dropped_s=dropped,
        )
