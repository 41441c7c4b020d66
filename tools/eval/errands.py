"""Time the errand bot and the human-like player doing the village's three errands, headless.

Both play through the player's inputs only (``PlayerIntent``; the human-like one through
key presses on ``Controls``), with real physics and the AI off; the world is stepped
back to back, for at most 6 minutes of game time a seed. Writes ``bench/errands.json``:

    make errands    # or: .venv/bin/python -m tools.eval.errands --seeds 1 2 3 4 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from game.input.bot import Bot  # noqa: E402
from game.input.human_bot import HumanBot  # noqa: E402
from game.sim.cast import Cast, load_cast  # noqa: E402
from game.sim.level import Level, load_level  # noqa: E402
from game.sim.player import PlayerIntent  # noqa: E402
from game.sim.snapshot import WorldSnapshot  # noqa: E402
from game.sim.world import World  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

HZ = 60
LIMIT_S = 180.0
"""The errand bot's bar: every errand within 3 minutes."""
HUMAN_LIMIT_S = 360.0
"""The human-like player's bar, and the cap of every run: every errand within 6 minutes."""
REPORT_VERSION = 2
PLAYERS = ("errand_bot", "human")
DROP_CAUSES = ("after_put_down", "carrying", "empty_handed")
PUT_DOWN_TICKS = 90


class ErrandPlayer(Protocol):
    """Something that plays the errands: one intent a tick, and the ticks errands got done."""

    @property
    def finished(self) -> dict[str, int]:
        """Errand id -> tick it was seen done."""
        ...

    def intent(self, snapshot: WorldSnapshot) -> PlayerIntent:
        """The intent for the tick after ``snapshot``."""
        ...


class _ErrandBot:
    """The errand bot (``Bot`` on its errands route) as an ``ErrandPlayer``."""

    def __init__(self, bot: Bot) -> None:
        assert bot.errands is not None
        self._bot = bot
        self._runner = bot.errands

    @property
    def finished(self) -> dict[str, int]:
        return self._runner.finished

    def intent(self, snapshot: WorldSnapshot) -> PlayerIntent:
        return self._bot.intent(snapshot)


@dataclass(frozen=True, slots=True)
class ErrandRun:
    """One seed's run: seconds of game time at which each errand was done.

    ``all_s`` is when the last was done (None when one was not). For each errand not done
    when the run ended, ``left`` holds its tally then, such as ``"2 of 4"``, and ``best``
    the highest it reached. ``drops`` counts, for every errand, the ticks its tally went
    down (a crate column knocked over, an apple bounced out of the basket), by what the
    player's hands were doing then: ``"after_put_down"`` (within 1.5 s of letting go of
    a prop), ``"carrying"`` or ``"empty_handed"``.
    """

    seed: int
    done_s: dict[str, float]
    all_done: bool
    all_s: float | None
    left: dict[str, str]
    best: dict[str, str]
    drops: dict[str, dict[str, int]]
    ticks: int
    wall_s: float


@dataclass(frozen=True, slots=True)
class PlayerRuns:
    """One player's runs over the seeds, against its bar."""

    player: str
    limit_s: float
    runs: list[ErrandRun]
    all_done: int
    seeds: int


def make_player(player: str, world: World, seed: int) -> ErrandPlayer:
    """The named player for ``world``: ``"errand_bot"`` or ``"human"``."""
    if player == "errand_bot":
        return _ErrandBot(Bot("errands", seed, world.level_view()))
    if player == "human":
        return HumanBot(seed, world.level_view())
    raise ValueError(f"unknown player {player!r} (known: {', '.join(PLAYERS)})")


def run_errands(
    level: Level,
    cast: Cast,
    seed: int,
    limit_s: float = LIMIT_S,
    player: str = "errand_bot",
) -> ErrandRun:
    """Let ``player`` play one seed for at most ``limit_s`` seconds of game time."""
    world = World(level, cast, seed)
    playing = make_player(player, world, seed)
    wanted = {e.spec.id for e in world.errands.errands}
    tally: dict[str, int] = {}
    best: dict[str, int] = {}
    drops = {e: dict.fromkeys(DROP_CAUSES, 0) for e in sorted(wanted)}
    put_down, carried = -PUT_DOWN_TICKS, False
    started = time.perf_counter()
    for _ in range(round(limit_s * HZ)):
        snap = world.snapshot()
        carrying = any(p.held for p in snap.props)
        if carried and not carrying:
            put_down = snap.tick
        carried = carrying
        for e in snap.errands:
            if e.progress < tally.get(e.id, 0):
                drops[e.id][_drop_cause(snap.tick - put_down, carrying)] += 1
            tally[e.id], best[e.id] = e.progress, max(best.get(e.id, 0), e.progress)
        world.step(playing.intent(snap))
        if wanted <= playing.finished.keys():
            break
    # A player notices a finished errand one snapshot late; the world's own tick is exact.
    last = world.snapshot()
    playing.intent(last)
    done = {k: round(t / HZ, 2) for k, t in sorted(playing.finished.items())}
    all_done = wanted <= done.keys()
    open_errands = [e for e in last.errands if e.id not in done]
    left = {e.id: f"{e.progress} of {e.goal}" for e in open_errands}
    return ErrandRun(
        seed=seed,
        done_s=done,
        all_done=all_done,
        all_s=max(done.values()) if all_done else None,
        left=left,
        best={e.id: f"{max(best.get(e.id, 0), e.progress)} of {e.goal}" for e in open_errands},
        drops=drops,
        ticks=world.tick,
        wall_s=round(time.perf_counter() - started, 2),
    )


def _drop_cause(since_put_down: int, carrying: bool) -> str:
    if since_put_down < PUT_DOWN_TICKS:
        return "after_put_down"
    return "carrying" if carrying else "empty_handed"


def run_player(level: Level, cast: Cast, player: str, seeds: list[int]) -> PlayerRuns:
    """Run ``player`` on every seed, each capped at 6 minutes, and count it against its bar."""
    limit = LIMIT_S if player == "errand_bot" else HUMAN_LIMIT_S
    runs = [run_errands(level, cast, seed, HUMAN_LIMIT_S, player) for seed in seeds]
    for r in runs:
        print(
            f"{player} seed {r.seed}: {r.done_s} left: {r.left} best: {r.best}"
            f" tally drops: {r.drops} ({r.wall_s} s wall)"
        )
    within = sum(r.all_s is not None and r.all_s <= limit for r in runs)
    return PlayerRuns(player, limit, runs, within, len(runs))


def main(argv: list[str] | None = None) -> int:
    """Run the seeds for each player, print one line a run and write the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--players", nargs="+", choices=PLAYERS, default=list(PLAYERS))
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "errands.json")
    args = parser.parse_args(argv)
    load_start = load_average()
    level, cast = load_level(), load_cast()
    played = {p: run_player(level, cast, p, args.seeds) for p in args.players}
    report: dict[str, object] = {
        "machine": machine_header(load_start, model=None),  # the AI is off
        "version": REPORT_VERSION,
        "cap_s": HUMAN_LIMIT_S,
    }
    report.update({p: asdict(runs) for p, runs in played.items()})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for p, runs in played.items():
        print(
            f"{p}: {runs.all_done} of {runs.seeds} seeds did every errand within {runs.limit_s:g} s"
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
