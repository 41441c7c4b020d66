"""A villager in a chat stays for it: a knock or a nudge does not send them off, and a
nudge during any chat is not worth a line."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import pytest

from game.core.session import Session
from game.sim.cast import load_cast
from game.sim.events import PlayerBumpedNpc, Trigger
from game.sim.level import load_level
from game.sim.npc_states import NpcState
from game.sim.player import PLAYER_H, PlayerIntent
from game.sim.senses import Stimulus, StimulusKind
from game.sim.villager import NPC_H, Villager
from game.sim.world import World
from game.ui.chat_box import ChatBox
from tests.unit.game.conftest import LEFT, RIGHT, STAY, Tap, settle, source_of

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


def walk_into(village: Session, box: ChatBox, npc_id: int, intent: PlayerIntent) -> None:
    """Walk until the player bumps the villager, then stand a couple of seconds."""
    for _ in range(120):
        village.step(intent)
        settle(village)
        box.update()
        if bumped(village.last_events, npc_id):
            break
    else:
        pytest.fail("the player never bumped them")
    for _ in range(120):
        village.step(STAY)
        settle(village)
        box.update()


@pytest.mark.parametrize("whom", ["the villager in the chat", "a villager nearby"])
def test_a_bump_during_a_chat_asks_for_no_line(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch, whom: str
) -> None:
    village = make_village()
    tap = Tap(source_of(village), monkeypatch)
    world = village.world
    wen, corvin = villager(world, "elder"), villager(world, "merchant")
    assert 100.0 < wen.x - corvin.x < 250.0  # at their spots, Corvin a little to the left
    put_player(world, wen.x - 60.0)
    village.step(STAY)
    box = ChatBox(world, village.dialogue)
    assert box.open()
    assert box.npc_id == wen.id
    if whom == "the villager in the chat":
        target, way = wen, RIGHT
    else:
        target, way = corvin, LEFT
    walk_into(village, box, target.id, way)
    assert box.is_open
    assert tap.asked(target.id, Trigger.BUMPED) is None
