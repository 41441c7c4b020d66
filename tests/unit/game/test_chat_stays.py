"""A villager in a chat stays for it: a knock or a nudge does not send them off."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from game.sim.cast import load_cast
from game.sim.events import PlayerBumpedNpc
from game.sim.level import load_level
from game.sim.npc_states import NpcState
from game.sim.player import PLAYER_H
from game.sim.senses import Stimulus, StimulusKind
from game.sim.villager import NPC_H, Villager
from game.sim.world import World
from game.ui.chat_box import ChatBox
from tests.unit.game.conftest import RIGHT, STAY

CHAT_HOLD = 10 * 60


class Speech:
    """Takes what the box sends and asks for nothing."""

    def say(self, tick: int, npc_id: int, player_id: int, text: str) -> str:
        return text

    def typing(self, tick: int, npc_id: int, player_id: int, text: str) -> None:
        pass


def villager(world: World, spec_id: str) -> Villager:
    return next(v for v in world.villagers if v.spec.id == spec_id)


def put_player(world: World, x: float) -> None:
    world.place_player(x, world.level.ground_y(x) + PLAYER_H / 2 + 1.0)


def bumped(events: Iterable[object], npc_id: int) -> bool:
    return any(isinstance(e, PlayerBumpedNpc) and e.npc_id == npc_id for e in events)


@pytest.mark.parametrize("knock", ["the player walks into him", "a ball rolls into him"])
def test_a_villager_in_a_chat_does_not_walk_off_and_faces_the_player(knock: str) -> None:
    world = World(load_level(), load_cast(), seed=4)
    wen = villager(world, "elder")
    # Far from his spot, in a quiet stretch of the street: his round would take him off
    # to the right, away from the player on his left.
    x = 1000.0
    assert wen.brain.routine.work_x > x + 400.0
    wen.body.position = (x, world.level.ground_y(x) + NPC_H / 2 + 1.0)
    wen.sense()
    put_player(world, x - 100.0)
    world.step(STAY)
    box = ChatBox(world, Speech())
    assert box.open()
    assert box.npc_id == wen.id
    if knock == "a ball rolls into him":
        # From the right: he turns that way, away from the player, to look.
        wen.brain.notify(Stimulus(StimulusKind.HIT, (), 300.0, False, wen.x + 40.0))
    else:
        for _ in range(90):
            events = world.step(RIGHT)
            box.update()
            if bumped(events, wen.id):
                break
        else:
            pytest.fail("the player never bumped Old Wen")
    start = wen.x
    for _ in range(CHAT_HOLD):
        world.step(STAY)
        box.update()
        assert box.is_open, box.view()
    assert abs(wen.x - start) < 30.0
    assert wen.brain.state is NpcState.TALK
    assert wen.brain.facing == (1 if world.player.body.position.x >= wen.x else -1)
