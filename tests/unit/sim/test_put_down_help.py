"""Put-downs do what the player means near the stack being rebuilt and over the basket.

The player acts through inputs (walking, facing, E); only the starting spots are set
directly, and they are deliberately a little off where a careful player would stand.
"""

from __future__ import annotations

from game.sim.cast import Cast
from game.sim.level import Level
from game.sim.player import PLAYER_H, PLAYER_W, PlayerIntent
from game.sim.props import Prop
from game.sim.world import World

STILL = PlayerIntent()
REACH = PLAYER_W / 2 + 20.0 + 3.0
"""How far in front of the player's middle a crate is put down."""


def run(world: World, ticks: int, intent: PlayerIntent = STILL) -> None:
    for _ in range(ticks):
        world.step(intent)


def stand(world: World, x: float, ground: float) -> None:
    world.player.body.position = (x, ground + PLAYER_H / 2 + 1.0)
    world.player.body.velocity = (0.0, 0.0)


def moved(crates: list[Prop], home: list[tuple[float, float]]) -> float:
    """How far the crates that moved most have gone from ``home`` (x plus y)."""
    return max(
        abs(c.body.position.x - x) + abs(c.body.position.y - y)
        for c, (x, y) in zip(crates, home, strict=True)
    )


def carrying_by_three(world: World, level: Level, off: float) -> tuple[list[Prop], float]:
    """Three crates in a column, the player ``off`` to its right with the fourth in hand."""
    crates = open_restack(world, level)
    column = build_column(world, level, crates[:3])
    stand(world, column + off, level.zone("stack_zone").y)
    run(world, 10)
    hand(world, crates[3])
    return crates, column


def hand(world: World, prop: Prop) -> None:
    """Give the player ``prop``, as a grab would."""
    hx, hy = world.player.hold_point(prop)
    prop.body.position = (hx, hy)
    prop.body.velocity = (0.0, 0.0)
    prop.body.angle = 0.0
    prop.body.angular_velocity = 0.0
    world.player.take(prop)
    run(world, 10)


def walk_to(world: World, x: float) -> None:
    """Walk (inputs only) until within a few units of ``x``, or held up for a while."""
    still = 0
    for _ in range(400):
        px = world.player.body.position.x
        if abs(px - x) < 3.0 or still > 20:
            break
        world.step(PlayerIntent(move=1 if x > px else -1))
        still = still + 1 if abs(world.player.body.velocity.x) < 5.0 else 0
    run(world, 30)


def face(world: World, facing: int) -> None:
    if world.player.facing != facing:
        world.step(PlayerIntent(move=facing))
    run(world, 15)


def put_down(world: World) -> None:
    world.step(PlayerIntent(grab=True))
    run(world, 90)


def open_restack(world: World, level: Level) -> list[Prop]:
    """Knock the stack down and carry its crates off the stack's spot; returns them."""
    stack = world.stacks[0]
    top = max(stack.props, key=lambda p: p.body.position.y)
    top.body.position = (top.body.position.x + 300.0, 200.0)
    run(world, 30)
    restack = world.errands.get("restack")
    assert restack is not None
    assert restack.open
    zone = level.zone("stack_zone")
    ground = zone.y
    spots = (zone.x + zone.w + 80.0, zone.x + zone.w + 125.0, zone.x - 200.0, zone.x - 245.0)
    for crate, x in zip(stack.props, spots, strict=True):
        crate.body.position = (x, ground + 21.0)
        crate.body.velocity = (0.0, 0.0)
        crate.body.angle = 0.0
        crate.body.angular_velocity = 0.0
    run(world, 60)
    assert restack.progress == 0
    return list(stack.props)


def build_column(world: World, level: Level, crates: list[Prop]) -> float:
    """Stand ``crates`` in a square column in the middle of the stack's spot; its x."""
    zone = level.zone("stack_zone")
    x = zone.x + zone.w / 2
    for i, crate in enumerate(crates):
        crate.body.position = (x, zone.y + 20.5 + 40.5 * i)
        crate.body.velocity = (0.0, 0.0)
        crate.body.angle = 0.0
        crate.body.angular_velocity = 0.0
    run(world, 60)
    restack = world.errands.get("restack")
    assert restack is not None
    assert restack.progress == len(crates)
    return x


def test_grab_beside_the_stack_takes_the_free_crate_not_the_stacks(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=7)
    crates = open_restack(world, level)
    column = build_column(world, level, crates[:2])
    ground = level.zone("stack_zone").y
    # The player stands just right of the column; a free crate lies further off, right.
    free = crates[2]
    stand(world, column + 42.0, ground)
    free.body.position = (column + 42.0 + 50.0, ground + 21.0)
    free.body.velocity = (0.0, 0.0)
    run(world, 20)
    assert world.player.candidates, "nothing in reach"
    world.step(PlayerIntent(grab=True))
    assert world.player.carrying is free
    restack = world.errands.get("restack")
    assert restack is not None
    run(world, 30)
    assert restack.progress == 2


def test_grab_by_the_stack_alone_takes_nothing_from_it(level: Level, cast: Cast) -> None:
    world = World(level, cast, seed=7)
    crates = open_restack(world, level)
    column = build_column(world, level, crates[:3])
    ground = level.zone("stack_zone").y
    stand(world, column - 40.0, ground)
    run(world, 20)
    world.step(PlayerIntent(grab=True))
    assert world.player.carrying is None
    run(world, 30)
    restack = world.errands.get("restack")
    assert restack is not None
    assert restack.progress == 3


def test_four_crates_put_down_from_spots_a_little_off_rebuild_the_stack(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=7)
    crates = open_restack(world, level)
    zone = level.zone("stack_zone")
    middle, ground = zone.x + zone.w / 2, zone.y
    restack = world.errands.get("restack")
    assert restack is not None
    # Each crate from a side in turn, the player up to 20 units off the spot that would
    # put it down right over the middle (too close means leaning on the column).
    offsets = (0.0, 15.0, -20.0, 10.0)
    for i, (crate, off) in enumerate(zip(crates, offsets, strict=True)):
        side = -1 if i % 2 == 0 else 1
        spot = middle + side * (REACH + off)
        # Walk in from a step away (on the left, the town wall is close behind).
        stand(world, max(spot + side * 60.0, zone.x - 35.0), ground)
        run(world, 1)
        hand(world, crate)
        walk_to(world, spot)
        face(world, -side)
        put_down(world)
        assert restack.progress == i + 1, f"crate {i + 1} did not go on the stack"
    run(world, 30)
    assert restack.done


def test_a_carried_crate_passes_through_the_stack_without_moving_it(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=7)
    # Right beside the column, not touching it; the carried crate overhead reaches a few
    # units into it.
    crates, column = carrying_by_three(world, level, 36.0)
    carried_x = crates[3].body.position.x
    assert carried_x - 20.0 < column + 20.0, "the carried crate does not reach the column"
    home = [(c.body.position.x, c.body.position.y) for c in crates[:3]]
    for _ in range(3):  # hop in place, sweeping the crate up and down through the column
        world.step(PlayerIntent(jump=True))
        run(world, 50)
    assert moved(crates[:3], home) < 0.5
    assert world.player.carrying is crates[3]
    restack = world.errands.get("restack")
    assert restack is not None
    assert restack.progress == 3


def test_a_player_walking_into_the_stack_with_a_crate_leans_on_it_and_does_not_shove_it(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=7)
    crates, _ = carrying_by_three(world, level, 110.0)
    home = [(c.body.position.x, c.body.position.y) for c in crates[:3]]
    run(world, 90, PlayerIntent(move=-1))  # at a run, and keep pushing
    assert moved(crates[:3], home) < 3.0
    restack = world.errands.get("restack")
    assert restack is not None
    run(world, 30)
    assert restack.progress == 3


def _basket_put_downs(
    world: World, level: Level, offsets: tuple[float, ...]
) -> tuple[int, list[Prop]]:
    """Put an apple down from each offset off the basket's middle, facing the middle."""
    basket = level.zone("basket")
    middle = basket.x + basket.w / 2
    apples = [p for p in world.props if p.kind.name == "apple"][: len(offsets)]
    for apple, off in zip(apples, offsets, strict=True):
        stand(world, middle + off, basket.y + basket.h)
        face(world, -1 if off > 0 else 1)
        hand(world, apple)
        put_down(world)
    run(world, 60)
    inside = [
        a
        for a in apples
        if basket.x <= a.body.position.x <= basket.x + basket.w
        and basket.y <= a.body.position.y <= basket.y + basket.h
    ]
    return len(inside), apples


def test_five_apples_put_down_from_spots_near_the_basket_all_go_in(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=2)
    # Over the mouth, on the rim, a step off it: none of them the one careful spot.
    inside, _ = _basket_put_downs(world, level, (45.0, -12.0, 62.0, 8.0, -30.0))
    assert inside == 5
    errand = world.errands.get("apples")
    assert errand is not None
    assert errand.done


def test_an_apple_put_down_over_a_villager_on_the_net_goes_past_them_into_the_basket(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=2)
    basket = level.zone("basket")
    middle = basket.x + basket.w / 2
    baker = next(v for v in world.villagers if v.spec.id == "baker")
    apple = next(p for p in world.props if p.kind.name == "apple")
    stand(world, middle + 30.0, basket.y + basket.h)
    face(world, -1)
    hand(world, apple)
    # The baker stands on the net, right under where the apple would be put down.
    baker.body.position = (middle + 5.0, 33.0)
    baker.body.velocity = (0.0, 0.0)
    run(world, 5)
    assert abs(baker.x - (middle + 5.0)) < 4.0
    world.step(PlayerIntent(grab=True))
    run(world, 40)
    x, y = apple.body.position
    assert basket.x <= x <= basket.x + basket.w
    assert y < 0.0


def test_walking_across_the_top_of_the_column_does_not_drag_its_top_crate(
    level: Level, cast: Cast
) -> None:
    world = World(level, cast, seed=7)
    crates = open_restack(world, level)
    column = build_column(world, level, crates[:3])
    top = crates[2]
    home = [(c.body.position.x, c.body.position.y) for c in crates[:3]]
    stand(world, column - 10.0, top.body.position.y + top.kind.h / 2)
    run(world, 20)
    for move in (1, -1, 1, -1):  # pace to and fro on top, at a walk, stopping each time
        run(world, 12, PlayerIntent(move=move))
        run(world, 20)
    assert moved(crates[:3], home) < 2.0
    restack = world.errands.get("restack")
    assert restack is not None
    assert restack.progress == 3
