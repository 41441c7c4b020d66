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
