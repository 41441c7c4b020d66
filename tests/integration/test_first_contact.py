"""First contact: a new game's first greeting comes within seconds, idle or playing.

Measured on the level as it was, a player standing at the spawn was first greeted after
50 to 61 s (seeds 1-5), when a villager's round happened to pass by.
"""

from __future__ import annotations

import pytest

from game.input.bot import Bot
from game.sim.cast import load_cast
from game.sim.continuity import capture_world, restore_world
from game.sim.events import SpeechWanted, Trigger
from game.sim.level import load_level
from game.sim.player import PlayerIntent
from game.sim.ticks import HZ
from game.sim.world import PLAYER_ID, World

SEEDS = (1, 2, 3, 4, 5)
FIRST_GREETING_S = 10.0
STILL = PlayerIntent()


def _first_greeting_s(world: World, bot: Bot | None, limit_s: float) -> float | None:
    """Seconds of game time until a villager greets the player, or None within ``limit_s``."""
    for _ in range(round(limit_s * HZ)):
        intent = bot.intent(world.snapshot()) if bot is not None else STILL
        for event in world.step(intent):
            if (
                isinstance(event, SpeechWanted)
                and event.trigger is Trigger.GREET
                and event.listener_id == PLAYER_ID
            ):
                return event.tick / HZ
    return None


@pytest.mark.parametrize("seed", SEEDS)
def test_a_player_standing_at_the_spawn_is_greeted_within_10_s(seed: int) -> None:
    world = World(load_level(), load_cast(), seed)
    assert _first_greeting_s(world, None, FIRST_GREETING_S) is not None


@pytest.mark.parametrize("seed", SEEDS)
def test_the_errand_bot_is_greeted_within_10_s(seed: int) -> None:
    world = World(load_level(), load_cast(), seed)
    bot = Bot("errands", seed, world.level_view())
    assert _first_greeting_s(world, bot, FIRST_GREETING_S) is not None


@pytest.mark.parametrize("seed", SEEDS)
def test_a_welcome_the_host_held_still_greets_a_player_standing_at_the_spawn(seed: int) -> None:
    world = World(load_level(), load_cast(), seed)
    world.welcome_held = True  # as while the model loads: villagers may notice meanwhile
    for _ in range(HZ):
        world.step(STILL)
    assert not any(v.brain.welcoming for v in world.villagers)
    world.welcome_held = False
    assert _first_greeting_s(world, None, FIRST_GREETING_S) is not None


def test_a_continued_game_sends_nobody_over_and_leaves_the_player_where_they_were() -> None:
    level, cast = load_level(), load_cast()
    fresh = World(level, cast, 1)
    fresh.step(STILL)
    assert any(v.brain.welcoming for v in fresh.villagers)
    state = capture_world(World(level, cast, 1))
    world = World(level, cast, 1)
    restore_world(world, state)
    assert state.player is not None
    for _ in range(2 * HZ):
        world.step(STILL)
        assert not any(v.brain.welcoming for v in world.villagers)
    assert abs(world.player.body.position.x - state.player[0]) < 4.0
