"""World construction, queries for the dialogue layer, determinism and crowd scale."""

from __future__ import annotations

from game.sim.cast import Cast
from game.sim.events import SpeechWanted, Trigger
from game.sim.level import Level
from game.sim.player import PlayerIntent
from game.sim.world import World

STILL = PlayerIntent()


def test_ids_share_one_space_and_are_stable(level: Level, cast: Cast) -> None:
    a = World(level, cast, seed=11)
    b = World(level, cast, seed=11)
    snap = a.snapshot()
    ids = [x.id for x in snap.actors] + [p.id for p in snap.props]
    assert len(ids) == len(set(ids))
    assert snap.player_id == 1
    assert a.player_status().id == 1
    assert a.npc_ids() == b.npc_ids()
    assert [p.id for p in snap.props] == [p.id for p in b.snapshot().props]
    assert len(a.npc_ids()) == len(cast.npcs)


def test_queries_answer_about_live_entities(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    npc_id = world.npc_ids()[0]
    status = world.npc(npc_id)
    assert status is not None
    assert status.conscious
    assert status.can_talk
    assert status.spec_id == cast.npcs[0].id
    assert world.npc(99999) is None
    assert world.entity_exists(1)
    assert world.entity_exists(npc_id)
    assert not world.entity_exists(99999)
    assert world.entity_position(99999) is None
    d = world.distance(1, npc_id)
    assert d is not None
    assert d > 0
    assert world.distance(1, 99999) is None
    near = world.nearby_props(npc_id, 400.0)
    dists = [world.distance(npc_id, p.id) for p in near]
    assert dists == sorted(dists)  # type: ignore[type-var]
    assert world.nearby_props(99999, 100.0) == ()


def test_set_talking_enters_talk_and_walking_away_says_farewell(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    npc_id = world.npc_ids()[0]
    pos = world.entity_position(npc_id)
    assert pos is not None
    world.player.body.position = (pos[0] + 80.0, pos[1] + 1.0)
    assert world.set_talking(npc_id, True)
    events = world.step(STILL)
    status = world.npc(npc_id)
    assert status is not None
    assert status.state == "talk"
    assert any(getattr(e, "new", None) == "talk" for e in events)
    world.player.body.position = (world.player.body.position.x + 1200.0, 60.0)
    events = [e for _ in range(10) for e in world.step(STILL)]
    farewell = [e for e in events if isinstance(e, SpeechWanted) and e.trigger is Trigger.FAREWELL]
    assert farewell
    assert farewell[0].npc_id == npc_id
    status = world.npc(npc_id)
    assert status is not None
    assert status.state != "talk"


def test_step_advances_one_tick(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    assert world.tick == 0
    assert abs(world.dt - 1 / 60) < 1e-12
    world.step(STILL)
    world.step(STILL)
    assert world.tick == 2
    assert world.snapshot().tick == 2


def test_crowd_of_sixty_and_six_hundred_props_builds_and_steps(level: Level, cast: Cast) -> None:
    extra = 60 - len(cast.npcs)
    world = World(level, cast, seed=9, extra_npcs=extra, extra_props=600 - len(level.props))
    assert len(world.npc_ids()) == 60
    assert len(world.props) >= 600
    names = [world.npc(i).name for i in world.npc_ids()]  # type: ignore[union-attr]
    assert len(set(names)) == len(names)
    for _ in range(60):
        world.step(STILL)
    twin = World(level, cast, seed=9, extra_npcs=extra, extra_props=600 - len(level.props))
    for _ in range(60):
        twin.step(STILL)
    assert world.world_hash() == twin.world_hash()


def test_entity_kind_names_player_villagers_and_props(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    assert world.entity_kind(1) == "player"
    assert world.entity_kind(world.npc_ids()[0]) == cast.npcs[0].role
    assert world.entity_kind(world.props[0].id) == world.props[0].kind.name
    assert world.entity_kind(99999) is None
    spec = world.npc_spec(world.npc_ids()[0])
    assert spec is not None
    assert spec.templates is spec.lines
