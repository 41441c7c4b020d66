"""A villager's body stands upright on its feet and never stays on someone's head."""

from __future__ import annotations

import math

from game.sim.cast import Cast
from game.sim.level import Level
from game.sim.player import PLAYER_H, PlayerIntent
from game.sim.villager import NPC_H, Villager
from game.sim.world import World

STILL = PlayerIntent()
OPEN_GROUND_X = 1420.0
"""Flat street with nothing overhead, between the hayloft and the basket."""


def elder(world: World) -> Villager:
    return next(v for v in world.villagers if v.spec.role == "elder")


def player_on_open_ground(world: World) -> tuple[float, float]:
    x = OPEN_GROUND_X
    world.place_player(x, world.level.ground_y(x) + PLAYER_H / 2 + 1.0)
    for _ in range(10):
        world.step(STILL)
    px, py = world.player.body.position
    return px, py


def test_a_villager_on_the_slope_to_the_elders_house_stands_upright(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=1)
    villager = elder(world)
    xs = [x for x in range(2600, 2900, 20) if abs(level.ground_y(x + 10) - level.ground_y(x)) > 2]
    assert xs, "no slope there"
    for x in xs:
        villager.body.position = (x, level.ground_y(x) + NPC_H / 2 + 2.0)
        villager.body.velocity = (0.0, 0.0)
        worst = 0.0
        for _ in range(30):
            world.step(STILL)
            worst = max(worst, abs(villager.angle))
        assert worst < math.radians(2.0), (x, math.degrees(worst))


def test_a_villager_dropped_on_the_players_head_gets_down(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    villager = elder(world)
    px, py = player_on_open_ground(world)
    villager.body.position = (px, py + PLAYER_H / 2 + NPC_H / 2 + 1.0)
    villager.body.velocity = (0.0, 0.0)
    on_top = 0
    for _ in range(60):
        world.step(STILL)
        px, py = world.player.body.position
        if villager.y - py > (NPC_H + PLAYER_H) / 2 - 8.0 and abs(villager.vy) < 30.0:
            on_top += 1
    # Off within a few ticks: not left standing there until the player slips away.
    assert on_top <= 4
    assert villager.y - py < (NPC_H + PLAYER_H) / 2 - 10.0
    assert abs(villager.angle) < 0.05


def test_a_villager_on_the_crate_the_player_carries_gets_down(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    crate = next(p for p in world.props if p.kind.name == "crate")
    px, py = player_on_open_ground(world)
    crate.body.position = (px + 20.0, py)
    world.step(STILL)
    world.step(PlayerIntent(grab=True))
    load = world.player.carrying
    assert load is crate
    for _ in range(20):
        world.step(STILL)
    villager = elder(world)
    lx, ly = crate.body.position
    villager.body.position = (lx, ly + crate.kind.h / 2 + NPC_H / 2 + 1.0)
    villager.body.velocity = (0.0, 0.0)
    on_load = 0
    for _ in range(60):
        world.step(STILL)
        lx, ly = crate.body.position
        resting = abs(villager.vy) < 30.0 and abs(villager.x - lx) < 30.0
        if resting and villager.y - ly > (NPC_H + crate.kind.h) / 2 - 8.0:
            on_load += 1
    assert on_load <= 4
