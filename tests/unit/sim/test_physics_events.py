"""Collision callbacks turn physics into game events, with real pymunk bodies."""

from __future__ import annotations

from game.sim.cast import Cast
from game.sim.events import NpcGotUp, NpcKnockedDown, PlayerBumpedNpc, PropHitNpc, PropLandedNear
from game.sim.level import Level
from game.sim.npc_states import NpcState
from game.sim.player import PlayerIntent
from game.sim.senses import Stimulus, StimulusKind
from game.sim.villager import RIGHTING_TIMEOUT
from game.sim.world import World

STILL = PlayerIntent()


def villager_id(world: World, role: str) -> int:
    for npc_id in world.npc_ids():
        status = world.npc(npc_id)
        if status is not None and status.role == role:
            return npc_id
    raise AssertionError(role)


def test_crate_dropped_on_a_villager_reports_a_hit(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    npc_id = villager_id(world, "baker")
    npc = world.npc(npc_id)
    assert npc is not None
    crate = next(p for p in world.props if p.kind.name == "crate")
    crate.body.position = (npc.x, npc.y + 260.0)
    crate.body.velocity = (0.0, 0.0)
    hits: list[PropHitNpc] = []
    for _ in range(60):
        hits += [e for e in world.step(STILL) if isinstance(e, PropHitNpc)]
    assert hits, "no PropHitNpc from a crate dropped on the baker"
    assert hits[0].npc_id == npc_id
    assert hits[0].prop_id == crate.id
    assert hits[0].impulse > 0.0
    assert hits[0].thrown_by_player is False


def test_resting_contact_is_not_a_hit(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=1)
    npc = world.npc(villager_id(world, "guard"))
    assert npc is not None
    apple = next(p for p in world.props if p.kind.name == "apple")
    apple.body.position = (npc.x + 14.0 + 8.0, npc.y - 22.0)
    events = [e for _ in range(60) for e in world.step(STILL)]
    assert not any(isinstance(e, PropHitNpc) for e in events)


def test_player_walking_into_a_villager_bumps_them(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=2)
    npc_id = villager_id(world, "blacksmith")
    npc = world.npc(npc_id)
    assert npc is not None
    world.player.body.position = (npc.x - 120.0, npc.y + 2.0)
    bumps: list[PlayerBumpedNpc] = []
    for _ in range(90):
        bumps += [e for e in world.step(PlayerIntent(move=1)) if isinstance(e, PlayerBumpedNpc)]
    assert bumps
    assert bumps[0].npc_id == npc_id
    assert bumps[0].impulse > 0.0
    # Rate-limited: one sustained push is not a burst of bumps.
    assert len(bumps) <= 2


def test_a_crate_dropped_from_high_up_knocks_a_villager_down_and_they_get_up(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=3)
    npc_id = villager_id(world, "baker")
    villager = next(v for v in world.villagers if v.id == npc_id)
    crate = next(p for p in world.props if p.kind.name == "crate")
    # A little to the left of their middle, so the blow comes from the left.
    crate.body.position = (villager.x - 10.0, villager.y + 300.0)
    crate.body.velocity = (0.0, 0.0)
    events: list[object] = []
    lean = 0.0
    for _ in range(600):
        events += world.step(STILL)
        if villager.brain.state is NpcState.KNOCKED_DOWN:
            lean = max(lean, abs(villager.angle))
    down = [e for e in events if isinstance(e, NpcKnockedDown) and e.npc_id == npc_id]
    up = [e for e in events if isinstance(e, NpcGotUp) and e.npc_id == npc_id]
    assert down, "a crate from 300 units up did not knock the baker down"
    assert lean > 1.2, "knocked down but never fell over"
    assert up
    assert up[0].tick > down[0].tick
    status = world.npc(npc_id)
    assert status is not None
    assert status.conscious
    assert villager.standing


def test_a_light_blow_does_not_tip_a_villager(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=3)
    villager = next(v for v in world.villagers if v.spec.role == "baker")
    crate = next(p for p in world.props if p.kind.name == "crate")
    crate.body.position = (villager.x - 40.0, villager.y + 10.0)
    crate.body.velocity = (600.0, 0.0)
    events = [e for _ in range(120) for e in world.step(STILL)]
    assert any(isinstance(e, PropHitNpc) for e in events)
    assert not any(isinstance(e, NpcKnockedDown) for e in events)
    assert abs(villager.angle) < 0.05


def test_thrown_prop_near_a_villager_hits_or_lands_near(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=4)
    npc = world.npc(villager_id(world, "guard"))
    assert npc is not None
    apple = next(p for p in world.props if p.kind.name == "apple")
    world.player.body.position = (npc.x - 420.0, npc.y + 2.0)
    apple.body.position = (npc.x - 420.0, npc.y + 40.0)
    world.step(PlayerIntent(move=1))
    world.step(PlayerIntent(grab=True))
    assert world.player_status().carrying is not None
    world.step(STILL)
    for _ in range(30):  # hold F to charge the throw; it flies when F is let go
        world.step(PlayerIntent(throw=True))
    seen = [
        e
        for _ in range(240)
        for e in world.step(STILL)
        if isinstance(e, PropHitNpc | PropLandedNear)
    ]
    assert seen, "a prop thrown at the guard neither hit nor landed near anyone"
    first = seen[0]
    if isinstance(first, PropHitNpc):
        assert first.thrown_by_player


def test_every_knocked_down_villager_gets_up_within_a_bounded_time(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=5)
    blow = world._tuning.knockdown_impulse
    for i, villager in enumerate(world.villagers):
        side = (-1) ** i
        villager.brain.notify(Stimulus(StimulusKind.HIT, (), blow, False, villager.x - side))
        villager.body.velocity = (150.0 * side, 300.0)
    down: dict[int, int] = {}
    up: dict[int, int] = {}
    for _ in range(600):
        for e in world.step(STILL):
            if isinstance(e, NpcKnockedDown):
                down.setdefault(e.npc_id, e.tick)
            elif isinstance(e, NpcGotUp) and e.npc_id in down:
                up.setdefault(e.npc_id, e.tick)
    assert down, "nobody was knocked down"
    bound = world._tuning.down_ticks + RIGHTING_TIMEOUT + 30
    for npc_id, tick in down.items():
        assert npc_id in up, f"villager {npc_id} never got up"
        assert up[npc_id] - tick <= bound
    for villager in world.villagers:
        assert abs(villager.angle) < 0.3, (villager.spec.name, villager.angle)
        assert villager.brain.conscious
        assert villager.standing


def test_a_villager_in_the_way_steps_aside_and_the_player_gets_past(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=2)
    marta = next(v for v in world.villagers if v.spec.id == "baker")
    world.player.body.position = (marta.x - 60.0, marta.y + 2.0)
    start = marta.x
    stepped_aside = False
    for _ in range(150):
        world.step(PlayerIntent(move=1))
        view = next(a for a in world.snapshot().actors if a.id == marta.id)
        stepped_aside = stepped_aside or view.aside
    assert stepped_aside
    assert world.player.body.position.x > start + 60.0
    for _ in range(120):
        world.step(STILL)
    assert not marta.aside  # back in the street once the player is clear
