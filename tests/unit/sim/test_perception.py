"""Line of sight is blocked by static geometry only, and villagers act on it."""

from __future__ import annotations

import dataclasses

import pymunk

from game.sim.cast import Cast
from game.sim.categories import PROP_FILTER, STATIC_FILTER
from game.sim.level import Level, StaticSpec
from game.sim.perception import XIndex, line_of_sight
from game.sim.player import PlayerIntent
from game.sim.world import World


def test_wall_blocks_sight_and_a_crate_does_not() -> None:
    space = pymunk.Space()
    wall = pymunk.Segment(space.static_body, (0.0, 0.0), (0.0, 100.0), 2.0)
    wall.filter = STATIC_FILTER
    space.add(wall)
    assert not line_of_sight(space, (-50.0, 50.0), (50.0, 50.0))
    assert line_of_sight(space, (-50.0, 150.0), (50.0, 150.0))
    crate = pymunk.Body(1.0, 10.0)
    crate.position = (0.0, 200.0)
    box = pymunk.Poly.create_box(crate, (40.0, 40.0))
    box.filter = PROP_FILTER
    space.add(crate, box)
    assert line_of_sight(space, (-50.0, 200.0), (50.0, 200.0))


def test_x_index_finds_the_nearest_within_radius() -> None:
    index = XIndex()
    index.rebuild([(0.0, 5, 0.0), (100.0, 6, 0.0), (40.0, 7, 0.0), (40.0, 3, 0.0)])
    assert index.nearest(10.0, 0.0, 50.0, exclude=5) == (3, 30.0)
    assert index.nearest(500.0, 0.0, 50.0) is None
    assert index.within(50.0, 20.0) == [3, 7]


def baker_state_after(level: Level, cast: Cast, ticks: int) -> str:
    world = World(level, cast, seed=1)
    baker = next(v for v in world.villagers if v.spec.id == "baker")
    world.player.body.position = (baker.x - 130.0, baker.y + 1.0)
    states = set()
    for _ in range(ticks):
        world.step(PlayerIntent())
        status = world.npc(baker.id)
        assert status is not None
        states.add(status.state)
    return ",".join(sorted(states))


def test_villager_behind_a_wall_does_not_notice_the_player(level: Level, cast: Cast) -> None:
    open_states = baker_state_after(level, cast, 40)
    assert "notice" in open_states or "greet" in open_states
    baker_x = next(s.work_x for s in cast.npcs if s.id == "baker")
    wall = StaticSpec(
        "poly",
        ((baker_x - 70, 0.0), (baker_x - 60, 0.0), (baker_x - 60, 400.0), (baker_x - 70, 400.0)),
        0.0,
        "stone",
        "test wall",
    )
    walled = dataclasses.replace(level, statics=(*level.statics, wall))
    walled_states = baker_state_after(walled, cast, 40)
    assert "notice" not in walled_states
    assert "greet" not in walled_states
