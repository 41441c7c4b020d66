"""The options a villager can choose from, in a village with a crowd of extra villagers."""

from __future__ import annotations

from game.decisions.options import OptionFinder
from game.sim.cast import load_cast
from game.sim.level import load_level
from game.sim.player import PlayerIntent
from game.sim.world import World


def test_choices_name_the_crowds_extra_villagers_too() -> None:
    level = load_level()
    world = World(level, load_cast(), seed=7, extra_npcs=6)
    finder = OptionFinder(world, level)
    extras = [i for i in world.npc_ids() if "#" in finder.cast_of[i]]
    assert extras
    for npc_id in world.npc_ids():
        choices = finder.choices(npc_id)
        assert finder.cast_of[npc_id] not in choices.villagers
    extra = world.npc_spec(extras[0])
    assert extra is not None
    assert finder.labels[extra.id] == f"{extra.name} the {extra.role}"


def test_a_villager_is_never_offered_a_crate_out_of_the_stack() -> None:
    level = load_level()
    world = World(level, load_cast(), seed=7)
    finder = OptionFinder(world, level)
    (stack,) = world.stacks
    villager = world.villagers[0]
    villager.body.position = (stack.x - 60.0, villager.body.position.y)
    column = {p.id for p in stack.props}
    assert "crate" not in finder.choices(villager.id).props  # the standing stack

    top = max(stack.props, key=lambda p: p.body.position.y)
    top.body.position = (stack.x + 150.0, top.body.position.y)  # knocked off, out of the zone
    for _ in range(60):
        world.step(PlayerIntent())
    crate = finder.choices(villager.id).props.get("crate")
    assert crate == top.id
    assert crate in column  # a crate of the stack once it has left it, and only that one
