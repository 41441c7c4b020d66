"""The human-like player: presses of human length, a reaction delay, and steady errand work."""

from __future__ import annotations

import random

import pytest

from game.input.hands import HOLD_MAX_TICKS, HOLD_MIN_TICKS, TAP_KEYS, WALK_KEYS, KeyPress
from game.input.human_bot import REACTION_TICKS, HumanBot, stop_error
from game.input.village_map import player_of
from game.sim.cast import load_cast
from game.sim.level import load_level
from game.sim.world import World

SLICE = 1500
"""Ticks played: 25 s of game time, enough to carry the first apples to the basket."""


def _play(seed: int, ticks: int = SLICE) -> tuple[HumanBot, World]:
    world = World(load_level(), load_cast(), seed)
    bot = HumanBot(seed, world.level_view())
    for _ in range(ticks):
        world.step(bot.intent(world.snapshot()))
    return bot, world


@pytest.fixture(scope="module")
def played() -> tuple[HumanBot, World]:
    return _play(2)


def test_taps_last_80_to_150_ms_and_walking_keys_are_held_as_long(
    played: tuple[HumanBot, World],
) -> None:
    bot, _ = played
    taps = [p for p in bot.presses if p.action in TAP_KEYS]
    walks = [p for p in bot.presses if p.action in WALK_KEYS]
    assert len(taps) >= 5
    assert len(walks) >= 5
    assert all(HOLD_MIN_TICKS <= p.ticks <= HOLD_MAX_TICKS for p in taps), taps
    assert all(p.ticks >= HOLD_MIN_TICKS for p in walks), walks
    # The draws vary: not one fixed length for every tap.
    assert len({p.ticks for p in taps}) > 1


def test_the_walking_keys_are_never_down_together_nor_swapped_within_a_tick(
    played: tuple[HumanBot, World],
) -> None:
    bot, _ = played
    walks = sorted((p for p in bot.presses if p.action in WALK_KEYS), key=lambda p: p.down)
    for before, after in zip(walks, walks[1:], strict=False):
        assert after.down > before.up, (before, after)


def test_every_tick_acts_on_a_snapshot_150_to_300_ms_old(played: tuple[HumanBot, World]) -> None:
    bot, _ = played
    low, high = REACTION_TICKS
    assert len(bot.runner.lags) >= SLICE - high
    assert all(low <= lag <= high for lag in bot.runner.lags)
    assert all(low <= d <= high for d in bot.runner.delays)
    assert len(set(bot.runner.delays)) > 3  # drawn afresh, not one fixed delay


def test_the_first_apples_reach_the_basket_within_the_slice(
    played: tuple[HumanBot, World],
) -> None:
    _, world = played
    apples = next(e for e in world.snapshot().errands if e.id == "apples")
    assert apples.progress >= 1


def test_a_seed_plays_the_same_game_twice_and_another_seed_another() -> None:
    ticks = 600

    def timeline(seed: int) -> tuple[list[KeyPress], float]:
        bot, world = _play(seed, ticks)
        return bot.presses, player_of(world.snapshot()).x

    first = timeline(5)
    assert first == timeline(5)
    assert first[0] != timeline(6)[0]


def test_a_long_walk_stops_15_to_25_units_off_and_a_short_one_off_by_a_share_of_it() -> None:
    rng = random.Random(3)
    long = [stop_error(rng, 400.0) for _ in range(200)]
    short = [stop_error(rng, 40.0) for _ in range(200)]
    assert all(15.0 <= abs(e) <= 25.0 for e in long)
    assert min(long) < 0 < max(long)
    assert all(abs(e) <= 10.0 for e in short)
    assert max(abs(e) for e in short) > 5.0
