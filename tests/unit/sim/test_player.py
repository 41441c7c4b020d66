"""Grab and throw do what they mean: the highlighted prop, a put-down in front, weight."""

from __future__ import annotations

from game.sim.cast import Cast
from game.sim.level import Level
from game.sim.player import PLAYER_H, PlayerIntent
from game.sim.world import World

STILL = PlayerIntent()


def _open_ground(world: World, x: float = 3000.0) -> float:
    """A flat, clear spot on the street; returns the ground height there."""
    y = world.level.ground_y(x)
    world.player.body.position = (x, y + PLAYER_H / 2 + 1.0)
    world.player.body.velocity = (0.0, 0.0)
    return y


def test_grab_takes_the_highlighted_prop_and_cycling_moves_the_highlight(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=1)
    ground = _open_ground(world)
    crate = next(p for p in world.props if p.kind.name == "crate")
    apple = next(p for p in world.props if p.kind.name == "apple")
    crate.body.position = (3000.0 + 20.0, ground + 21.0)
    apple.body.position = (3000.0 - 35.0, ground + 8.0)
    world.step(STILL)
    assert world.snapshot().grab_target == crate.id  # nearest first
    world.step(PlayerIntent(cycle=1))
    assert world.snapshot().grab_target == apple.id
    world.step(STILL)
    assert world.snapshot().grab_target == apple.id  # the choice sticks
    world.step(PlayerIntent(grab=True))
    assert world.player.carrying is apple


def test_a_crate_set_down_beside_a_crate_squares_up_on_top_of_it(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    ground = _open_ground(world)
    base, carried = [p for p in world.props if p.kind.name == "crate"][:2]
    carried.body.position = (3000.0 - 22.0, ground + 21.0)
    world.step(PlayerIntent(move=1))
    base.body.position = (world.player.body.position.x + 52.0, ground + 21.0)
    world.step(STILL)
    assert world.snapshot().grab_target == carried.id
    world.step(PlayerIntent(grab=True))
    assert world.player.carrying is carried
    for _ in range(20):
        world.step(STILL)
    # The put-down point is a few units off the base's centre; the crate squares up.
    assert abs(world.player.drop_point(carried)[0] - base.body.position.x) > 10.0
    world.step(PlayerIntent(grab=True))
    for _ in range(60):
        world.step(STILL)
    assert abs(carried.body.position.x - base.body.position.x) < 6.0
    assert abs(carried.body.position.y - (base.body.position.y + 40.0)) < 3.0


def test_heavier_props_fly_shorter_on_the_same_throw(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    player = world.player
    apple = next(p for p in world.props if p.kind.name == "apple")
    barrel = next(p for p in world.props if p.kind.name == "barrel")
    player.charge_ticks = 30
    light, heavy = player.throw_velocity(apple), player.throw_velocity(barrel)
    assert light[0] > heavy[0] * 1.5
    assert light[1] > heavy[1] * 1.5
