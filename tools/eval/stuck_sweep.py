"""Walk and jump the player across the whole village, headless, and report stuck spots.

Two sweeps:
- a traverse from each end of the street to the other, walking, and jumping whenever
  the walk makes no headway for a moment (as a player would);
- from a start spot every ``STEP`` units, a short walk each way with the same jumping,
  which finds nooks the traverse passes over.

A stuck spot is where the player, trying to move, stays within a few units for more than
2 seconds of game time. The villagers live their lives meanwhile, so one who stands in
the way counts too. Prints the spots and exits 1 if there are any:

    .venv/bin/python tools/eval/stuck_sweep.py
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from game.sim.cast import Cast, load_cast  # noqa: E402
from game.sim.level import Level, load_level  # noqa: E402
from game.sim.player import PLAYER_H, PlayerIntent  # noqa: E402
from game.sim.world import World  # noqa: E402

HZ = 60
STUCK_TICKS = 2 * HZ
STILL = 3.0
"""Moving less than this (world units) over ``STUCK_TICKS`` while trying counts as stuck."""
BLOCKED_TICKS = 8
STEP = 80.0
SHORT_WALK = 4 * HZ
EDGE = 40.0
"""Pressing against the world's end walls is not being stuck."""


@dataclass(frozen=True, slots=True)
class StuckSpot:
    """Where the player stayed put, and which way it was trying to go."""

    x: float
    y: float
    direction: int
    sweep: str


class _Walker:
    """Walks one way, jumping whenever the walk stalls; notes where it stays stuck."""

    def __init__(self, world: World, direction: int, sweep: str) -> None:
        self.world = world
        self.direction = direction
        self.sweep = sweep
        self._history: list[tuple[float, float]] = []
        self._stalled = 0
        self.stuck: StuckSpot | None = None

    def step(self) -> None:
        body = self.world.player.body
        x, y = body.position
        if x < EDGE or x > self.world.level.width - EDGE:
            return  # the end of the world, not a stuck spot
        self._stalled = self._stalled + 1 if abs(body.velocity.x) < 20.0 else 0
        jump = self._stalled >= BLOCKED_TICKS
        if jump:
            self._stalled = 0
        self.world.step(PlayerIntent(move=self.direction, jump=jump))
        self._history.append((x, y))
        if len(self._history) > STUCK_TICKS:
            ox, oy = self._history[-STUCK_TICKS - 1]
            if abs(x - ox) < STILL and abs(y - oy) < STILL * 4 and self.stuck is None:
                self.stuck = StuckSpot(round(x, 1), round(y, 1), self.direction, self.sweep)


def _place(world: World, x: float) -> None:
    """Put the player standing on the ground (or whatever is highest) at ``x``."""
    ground = world.level.ground_y(x)
    world.player.body.position = (x, max(ground, 0.0) + PLAYER_H / 2 + 2.0)
    world.player.body.velocity = (0.0, 0.0)


def traverse(world: World, direction: int, max_ticks: int = 60 * HZ) -> list[StuckSpot]:
    """Walk from one end of the street to the other; the stuck spots met on the way."""
    level = world.level
    _place(world, 60.0 if direction > 0 else level.width - 60.0)
    spots: list[StuckSpot] = []
    walker = _Walker(world, direction, "traverse")
    goal = level.width - 80.0 if direction > 0 else 80.0
    for _ in range(max_ticks):
        walker.step()
        x = world.player.body.position.x
        if (x - goal) * direction >= 0:
            break
        if walker.stuck is not None:
            spots.append(walker.stuck)
            # Note it and move on past it, to find the next one.
            _place(world, x + direction * 60.0)
            walker = _Walker(world, direction, "traverse")
    return spots


def spot_checks(world: World) -> list[StuckSpot]:
    """From a start every ``STEP`` units, walk a while each way; the spots it stays stuck."""
    spots: list[StuckSpot] = []
    x = 40.0
    while x < world.level.width - 40.0:
        for direction in (1, -1):
            _place(world, x)
            walker = _Walker(world, direction, "spot")
            for _ in range(SHORT_WALK):
                walker.step()
                if walker.stuck is not None:
                    spots.append(walker.stuck)
                    break
        x += STEP
    return spots


def sweep(level: Level, cast: Cast, seed: int) -> list[StuckSpot]:
    """Both sweeps over one world of ``seed``."""
    world = World(level, cast, seed)
    return traverse(world, 1) + traverse(world, -1) + spot_checks(world)


def main() -> int:
    """Sweep two seeds and print every stuck spot."""
    level, cast = load_level(), load_cast()
    found = [(seed, s) for seed in (1, 2) for s in sweep(level, cast, seed)]
    for seed, s in found:
        print(f"seed {seed}: stuck at x={s.x} y={s.y} going {s.direction:+d} ({s.sweep})")
    print(f"{len(found)} stuck spots")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
