"""The scripted player finishes all three errands with real physics and only player inputs."""

from __future__ import annotations

from game.sim.cast import load_cast
from game.sim.level import load_level
from tools.eval.errands import LIMIT_S, run_errands

SEEDS = (1, 2, 3, 4, 5)


def test_the_bot_finishes_every_errand_within_3_minutes_for_4_of_5_seeds() -> None:
    level, cast = load_level(), load_cast()
    runs = [run_errands(level, cast, seed) for seed in SEEDS]
    finished = [r for r in runs if r.all_done]
    # The message shows each seed's times (seconds of game time) when the bar is missed.
    assert len(finished) >= 4, [(r.seed, r.done_s) for r in runs]
    for r in finished:
        assert max(r.done_s.values()) <= LIMIT_S
        assert set(r.done_s) == {"apples", "restack", "ball"}
