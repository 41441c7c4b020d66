"""Villagers on their rounds keep a step away from a player who stands still.

Each villager in turn starts 350 units short of their work spot, coming from home, with
the player standing still on that spot or halfway there, for half a minute. Every bump
then is a villager walking into the player.
"""

from __future__ import annotations

import pytest

from game.sim.cast import Cast
from game.sim.events import PlayerBumpedNpc
from game.sim.level import Level
from game.sim.player import PLAYER_H, PLAYER_W, PlayerIntent
from game.sim.villager import NPC_H, NPC_W, Villager
from game.sim.world import World

STILL = PlayerIntent()
HALF_MINUTE = 30 * 60
SPOT, IN_THE_WAY = "on their spot", "in their way"
TOUCHING = (PLAYER_W + NPC_W) / 2


def put_villager(world: World, v: Villager, x: float) -> None:
    v.body.position = (x, world.level.ground_y(x) + NPC_H / 2 + 1.0)
    v.body.velocity = (0.0, 0.0)
    v.sense()
    v.brain.observe_position(x)


def walk_to_work(level: Level, cast: Cast, spec_id: str, where: str) -> tuple[World, Villager]:
    world = World(level, cast, seed=3)
    v = next(v for v in world.villagers if v.spec.id == spec_id)
    routine = v.brain.routine
    side = 1.0 if routine.home_x > routine.work_x else -1.0
    put_villager(world, v, routine.work_x + side * 350.0)
    player_x = routine.work_x + (0.0 if where == SPOT else side * 175.0)
    world.place_player(player_x, world.level.ground_y(player_x) + PLAYER_H / 2 + 1.0)
    return world, v


@pytest.mark.parametrize("where", [SPOT, IN_THE_WAY])
def test_villagers_on_their_rounds_do_not_walk_into_a_player_standing_still(
    level: Level, cast: Cast, where: str
) -> None:
    bumps: dict[str, int] = {}
    for spec in cast.npcs:
        world, v = walk_to_work(level, cast, spec.id, where)
        bumps[spec.id] = 0
        closest = float("inf")
        stepped_aside = False
        for _ in range(HALF_MINUTE):
            events = world.step(STILL)
            bumps[spec.id] += sum(1 for e in events if isinstance(e, PlayerBumpedNpc))
            stepped_aside = stepped_aside or v.aside
            if not v.aside:
                closest = min(closest, abs(v.x - world.player.body.position.x))
        # Never pressed up against the player while in the street.
        assert closest > TOUCHING + 4.0, spec.id
        if where == SPOT:
            assert not stepped_aside, spec.id  # waits a step short, does not squeeze in
        else:
            assert abs(v.x - v.brain.routine.work_x) < 30.0, spec.id  # stepped round, got there
    assert bumps == dict.fromkeys(bumps, 0)
