"""A villager's day: where they live and work, and where their routine wants them now."""

from __future__ import annotations

import random
from dataclasses import dataclass

from game.sim.npc_states import NpcState


@dataclass(frozen=True, slots=True)
class Routine:
    """Where a villager lives and works and how they spend the day.

    In ``"routine"`` mode they walk between home and work on a schedule of ticks; in
    ``"wander"`` mode they stroll to random spots within ``span`` of home.
    """

    home_x: float
    work_x: float
    mode: str = "routine"
    work_ticks: int = 3600
    home_ticks: int = 1800
    phase_offset: int = 0
    span: float = 300.0
    min_x: float = 40.0
    max_x: float = 3960.0


class DailyRound:
    """Where the routine wants the villager at each tick: work or home on the schedule,
    or, for a wanderer, a spot near home picked afresh every few seconds."""

    def __init__(self, routine: Routine, rng: random.Random) -> None:
        self.routine = routine
        self._rng = rng
        self._wander_until = rng.randrange(240)
        self._wander_goal = routine.work_x

    def goal(self, tick: int) -> float:
        """The x the routine wants the villager at on ``tick``."""
        r = self.routine
        if r.mode == "wander":
            if tick >= self._wander_until:
                offset = self._rng.uniform(-r.span, r.span)
                self._wander_goal = min(max(r.home_x + offset, r.min_x), r.max_x)
                self._wander_until = tick + 360 + self._rng.randrange(600)
            return self._wander_goal
        phase = (tick + r.phase_offset) % (r.work_ticks + r.home_ticks)
        return r.work_x if phase < r.work_ticks else r.home_x

    def calm_state(self, tick: int, x: float, arrive_eps: float) -> NpcState:
        """The state the routine wants on ``tick`` for a villager at ``x``: idle once
        there, else walking the routine or wandering."""
        if abs(self.goal(tick) - x) <= arrive_eps:
            return NpcState.IDLE
        return NpcState.WANDER if self.routine.mode == "wander" else NpcState.ROUTINE
