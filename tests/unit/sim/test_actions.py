"""Each action a villager can take runs to its end in real physics, through the body."""

from __future__ import annotations

import math

import pytest

from game.sim.cast import load_cast
from game.sim.events import ActionEnded, ActionStarted, GameEvent
from game.sim.level import load_level
from game.sim.npc_states import NpcState
from game.sim.orders import ActionKind, Order
from game.sim.player import PlayerIntent
from game.sim.villager import Villager
from game.sim.world import World
from tests.unit.sim.test_put_down_help import build_column, open_restack

STAY = PlayerIntent()
BASKET_X = 1540.0
WELL_X = 1950.0


@pytest.fixture
def world() -> World:
    w = World(load_level(), load_cast(), seed=3)
    for _ in range(30):
        w.step(STAY)
    return w


def villager(world: World, cast_id: str) -> Villager:
    return next(v for v in world.villagers if v.spec.id == cast_id)


def nearest_apple(world: World, x: float) -> int:
    apples = [p for p in world.props if p.kind.name == "apple" and p.body.position.y < 130]
    return min(apples, key=lambda p: abs(p.body.position.x - x)).id


def run(world: World, ticks: int, npc_id: int) -> tuple[list[GameEvent], ActionEnded | None]:
    """Step until the villager's action ends; return every event and the ending."""
    seen: list[GameEvent] = []
    for _ in range(ticks):
        events = world.step(STAY)
        seen += events
        for event in events:
            if isinstance(event, ActionEnded) and event.npc_id == npc_id:
                return seen, event
    return seen, None


def test_fetching_an_apple_carries_it_to_the_traveller(world: World) -> None:
    marta = villager(world, "baker")
    apple = nearest_apple(world, marta.x)
    assert world.start_action(marta.id, Order(ActionKind.FETCH, prop_id=apple))
    carried = False
    for _ in range(1200):
        world.step(STAY)
        carried = carried or world.carried_by(marta.id) == apple
        if marta.brain.order is None:
            break
    assert carried, "the apple travelled in her hands"
    assert world.carried_by(marta.id) is None
    player = world.player_status()
    position = world.entity_position(apple)
    assert position is not None
    assert abs(position[0] - player.x) < 90.0, "set down at the traveller's feet"


def test_putting_an_apple_in_the_basket_counts_for_the_errand(world: World) -> None:
    marta = villager(world, "baker")
    apple = nearest_apple(world, marta.x)
    order = Order(ActionKind.PUT, prop_id=apple, place_x=BASKET_X)
    assert world.start_action(marta.id, order)
    events, ended = run(world, 1500, marta.id)
    assert ended is not None
    assert ended.outcome == "done"
    assert any(isinstance(e, ActionStarted) and e.kind == "put" for e in events)
    for _ in range(120):
        world.step(STAY)
    apples = next(e for e in world.errands.errands if e.spec.id == "apples")
    assert apples.progress == 1


def test_showing_the_way_waits_for_the_traveller_and_arrives_with_them(world: World) -> None:
    pip = villager(world, "child")
    world.place_player(pip.x + 40.0, pip.y)
    assert world.start_action(pip.id, Order(ActionKind.SHOW_WAY, place_x=WELL_X))
    ended = None
    for _ in range(2400):
        # The traveller walks behind the guide, as a player would.
        move = 1 if world.player_status().x < pip.x - 60.0 else 0
        for event in world.step(PlayerIntent(move=move)):
            if isinstance(event, ActionEnded) and event.npc_id == pip.id:
                ended = event
        if ended is not None:
            break
    assert ended is not None
    assert (ended.outcome, ended.reason) == ("done", "arrived")
    assert abs(pip.x - WELL_X) < 30.0


def test_a_guide_whose_traveller_stays_behind_gives_up_in_time(world: World) -> None:
    pip = villager(world, "child")
    world.place_player(pip.x - 600.0, pip.y)
    assert world.start_action(pip.id, Order(ActionKind.SHOW_WAY, place_x=WELL_X + 800))
    _, ended = run(world, 2000, pip.id)
    assert ended is not None
    assert ended.outcome == "gave_up"


def test_following_keeps_near_the_traveller_for_a_while(world: World) -> None:
    odo = villager(world, "farmer")
    world.place_player(odo.x + 300.0, odo.y)
    assert world.start_action(odo.id, Order(ActionKind.FOLLOW))
    gaps = []
    ended = None
    for tick in range(1000):
        for event in world.step(PlayerIntent(move=1 if tick < 240 else 0)):
            if isinstance(event, ActionEnded) and event.npc_id == odo.id:
                ended = event
        if ended is not None:
            break
        gaps.append(abs(world.player_status().x - odo.x))
    assert max(gaps[-300:]) < 160.0, "caught up and stayed close"
    assert ended is not None
    assert ended.outcome == "done"
    assert len(gaps) >= 880, "followed for the whole while"


def test_calling_the_guard_brings_her_over(world: World) -> None:
    marta = villager(world, "baker")
    sela = villager(world, "guard")
    world.place_player(marta.x + 60.0, marta.y)
    assert world.start_action(marta.id, Order(ActionKind.CALL, other_id=sela.id))
    assert sela.brain.state is NpcState.COME
    _, ended = run(world, 2400, sela.id)
    assert ended is not None
    assert (ended.kind, ended.outcome) == ("come", "done")
    assert abs(sela.x - world.player_status().x) < 100.0


def test_turning_away_faces_off_and_running_away_flees(world: World) -> None:
    wen = villager(world, "elder")
    world.place_player(wen.x + 60.0, wen.y)
    assert world.start_action(wen.id, Order(ActionKind.TURN_AWAY))
    world.step(STAY)
    world.step(STAY)
    assert wen.brain.state is NpcState.TURN_AWAY
    assert wen.brain.facing == -1
    _, ended = run(world, 300, wen.id)
    assert ended is not None
    assert ended.outcome == "done"
    start = wen.x
    assert world.start_action(wen.id, Order(ActionKind.RUN_AWAY))
    for _ in range(120):
        world.step(STAY)
    assert wen.brain.state is NpcState.FLEE
    assert wen.x < start - 100.0, "ran off, away from the traveller"


def test_a_hit_interrupts_an_action_and_the_prop_drops(world: World) -> None:
    marta = villager(world, "baker")
    apple = nearest_apple(world, marta.x)
    assert world.start_action(marta.id, Order(ActionKind.FETCH, prop_id=apple))
    for _ in range(600):
        world.step(STAY)
        if world.carried_by(marta.id) == apple:
            break
    assert world.carried_by(marta.id) == apple
    marta.body.angle = 1.6  # knocked flat
    _, ended = run(world, 10, marta.id)
    assert ended is not None
    assert ended.outcome == "interrupted"
    world.step(STAY)
    assert world.carried_by(marta.id) is None
    position = world.entity_position(apple)
    assert position is not None
    assert math.hypot(position[0] - marta.x, position[1] - marta.y) < 120


def test_a_villager_sent_for_a_crate_in_the_stack_leaves_it_there() -> None:
    level = load_level()
    world = World(level, load_cast(), seed=3)
    crates = open_restack(world, level)
    build_column(world, level, crates[:3])
    corvin = villager(world, "merchant")
    home = [c.body.position.x for c in crates[:3]]
    assert world.start_action(corvin.id, Order(ActionKind.FETCH, prop_id=crates[1].id))
    _, ended = run(world, 600, corvin.id)
    assert ended is not None
    assert ended.outcome == "gave_up"
    assert all(world.carried_by(corvin.id) != c.id for c in crates)
    assert [c.body.position.x for c in crates[:3]] == pytest.approx(home, abs=1.0)
