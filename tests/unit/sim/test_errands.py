"""Errands complete from physics alone: props resting in zones, or brought to the giver."""

from __future__ import annotations

from game.sim.cast import Cast
from game.sim.events import ErrandCompleted, ErrandProgressed, SpeechWanted, StackToppled, Trigger
from game.sim.level import Level
from game.sim.player import PlayerIntent
from game.sim.world import World

STILL = PlayerIntent()


def giver(world: World, spec_id: str) -> int:
    return next(v.id for v in world.villagers if v.spec.id == spec_id)


def run(world: World, ticks: int) -> list[object]:
    return [e for _ in range(ticks) for e in world.step(STILL)]


def test_apples_in_the_basket_complete_the_bakers_errand(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=5)
    basket = level.zone("basket")
    apples = [p for p in world.props if p.kind.name == "apple"][:5]
    cx = basket.x + basket.w / 2
    for i, apple in enumerate(apples):
        apple.body.position = (cx, basket.y + 12.0 + i * 15.0)
        apple.body.velocity = (0.0, 0.0)
    events = run(world, 120)
    progress = [e for e in events if isinstance(e, ErrandProgressed) and e.errand_id == "apples"]
    done = [e for e in events if isinstance(e, ErrandCompleted)]
    assert progress
    assert progress[-1].progress == 5
    assert done == [ErrandCompleted(done[0].tick, "apples", giver(world, "baker"))]
    thanks = [e for e in events if isinstance(e, SpeechWanted) and e.trigger is Trigger.ERRAND_DONE]
    assert thanks
    assert thanks[0].npc_id == giver(world, "baker")
    view = next(v for v in world.snapshot().errands if v.id == "apples")
    assert view.done
    assert view.progress == view.goal == 5


def test_four_apples_are_not_enough(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=5)
    basket = level.zone("basket")
    for i, apple in enumerate([p for p in world.props if p.kind.name == "apple"][:4]):
        apple.body.position = (basket.x + basket.w / 2, basket.y + 12.0 + i * 15.0)
    events = run(world, 120)
    assert not any(isinstance(e, ErrandCompleted) for e in events)


def test_ball_brought_to_the_child_completes_the_fetch(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=6)
    child = giver(world, "child")
    pos = world.entity_position(child)
    assert pos is not None
    ball = next(p for p in world.props if p.tag == "roof_ball")
    ball.body.position = (pos[0] + 40.0, pos[1])
    events = run(world, 60)
    assert ErrandCompleted in {type(e) for e in events}
    done = [e for e in events if isinstance(e, ErrandCompleted)]
    assert done[0].errand_id == "ball"
    assert done[0].giver_id == child


def test_restack_opens_when_the_stack_falls_and_completes_when_rebuilt(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=7)
    stack = world.stacks[0]
    restack = world.errands.get("restack")
    assert restack is not None
    assert not restack.open
    top = max(stack.props, key=lambda p: p.body.position.y)
    home = top.body.position
    top.body.position = (home.x + 300.0, 200.0)
    events = run(world, 30)
    assert any(isinstance(e, StackToppled) for e in events)
    assert restack.open
    assert not restack.done
    top.body.position = home
    top.body.velocity = (0.0, 0.0)
    top.body.angle = 0.0
    events = run(world, 90)
    done = [e for e in events if isinstance(e, ErrandCompleted)]
    assert done
    assert done[0].errand_id == "restack"
    assert stack.standing


def test_an_apple_put_down_over_the_basket_goes_in_and_the_player_stays_on_top(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=2)
    basket = level.zone("basket")
    cx = basket.x + basket.w / 2
    apple = next(p for p in world.props if p.kind.name == "apple")
    # The player stands right over the basket's mouth, facing left, and picks an apple up.
    world.player.body.position = (cx + 10.0, 40.0)
    apple.body.position = (cx + 10.0, 80.0)
    world.step(PlayerIntent(move=-1))
    world.step(PlayerIntent(grab=True))
    assert world.player.carrying is apple
    run(world, 30)
    assert abs(world.player.body.position.x - cx) < basket.w / 2
    assert world.player.body.position.y > 25.0  # standing on the net, not wedged in the mouth
    world.step(PlayerIntent(grab=True))
    run(world, 90)
    assert apple.body.position.y < 0.0  # down in the basket
    errand = world.errands.get("apples")
    assert errand is not None
    assert errand.progress == 1
    assert world.player.body.position.y > 25.0


def test_the_crate_stack_reads_standing_until_it_falls(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=3)
    run(world, 60)
    (view,) = [e for e in world.snapshot().errands if e.id == "restack"]
    assert not view.open
    assert view.progress == 0


def test_a_leaning_heap_of_crates_in_the_zone_is_not_a_rebuilt_stack(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=7)
    stack = world.stacks[0]
    restack = world.errands.get("restack")
    assert restack is not None
    # Knock it over, then lean all four in the zone without stacking them square.
    top = max(stack.props, key=lambda p: p.body.position.y)
    top.body.position = (top.body.position.x + 200.0, 200.0)
    run(world, 30)
    assert restack.open
    zone = level.zone("stack_zone")
    for i, crate in enumerate(stack.props):
        crate.body.position = (zone.x + 20.0 + 14.0 * i, zone.y + 21.0 + 41.0 * i)
        crate.body.angle = 0.5
        crate.body.velocity = (0.0, 0.0)
    run(world, 120)
    assert not restack.done


def test_a_toppled_stack_is_heard_across_the_market(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=7)
    stack = world.stacks[0]
    # Everyone is at work, a long way down the street from the stack.
    for villager in world.villagers:
        villager.body.position = (stack.x - 1300.0, villager.body.position.y)
    run(world, 30)
    top = max(stack.props, key=lambda p: p.body.position.y)
    top.body.position = (top.body.position.x + 300.0, 200.0)
    events = run(world, 90)
    assert any(isinstance(e, StackToppled) for e in events)
    reactions = [e for e in events if isinstance(e, SpeechWanted) and e.trigger is Trigger.TOPPLED]
    assert reactions, "nobody reacted to the crates coming down"
