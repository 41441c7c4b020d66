"""The chat box's rules, on a real world and without pygame."""

from __future__ import annotations

import subprocess
import sys

import pytest

from game.sim.cast import load_cast
from game.sim.level import load_level
from game.sim.npc_states import NpcState
from game.sim.orders import ActionKind, Order
from game.sim.player import PlayerIntent
from game.sim.senses import Stimulus, StimulusKind
from game.sim.world import World
from game.ui.chat_box import NOBODY_NEAR, NOTICE_TICKS, PREPARE_EVERY_TICKS, ChatBox

STAY = PlayerIntent()


class Speech:
    """Records what the box sends, as the dialogue's ``say`` would take it."""

    def __init__(self) -> None:
        self.said: list[tuple[int, int, str]] = []
        self.typed: list[tuple[int, int, str]] = []

    def say(self, tick: int, npc_id: int, player_id: int, text: str) -> str:
        self.said.append((tick, npc_id, text))
        return text

    def typing(self, tick: int, npc_id: int, player_id: int, text: str) -> None:
        self.typed.append((tick, npc_id, text))


@pytest.fixture
def world() -> World:
    return World(load_level(), load_cast(), seed=4)


def villager(world: World, spec_id: str):  # type: ignore[no-untyped-def]
    return next(v for v in world.villagers if v.spec.id == spec_id)


def stand_by(world: World, spec_id: str, dx: float = -50.0) -> int:
    """Put the player ``dx`` from a villager, and let the world settle a tick."""
    v = villager(world, spec_id)
    world.player.body.position = (v.x - dx, v.y + 2.0)
    world.player.body.velocity = (0.0, 0.0)
    world.step(STAY)
    return v.id


def test_the_chat_box_module_does_not_import_pygame() -> None:
    code = "import sys, game.ui.chat_box; sys.exit('pygame' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_opening_with_nobody_near_says_so_and_stays_closed(world: World) -> None:
    world.player.body.position = (60.0, 120.0)
    world.step(STAY)
    box = ChatBox(world, Speech())
    assert not box.open()
    assert not box.is_open
    view = box.view()
    assert view is not None
    assert not view.open
    assert view.notice == NOBODY_NEAR


def test_the_chat_stays_with_its_villager_and_open_for_follow_ups(world: World) -> None:
    marta = stand_by(world, "baker")
    speech = Speech()
    box = ChatBox(world, speech)
    assert box.open(swallow="t")
    box.type("t")  # the key that opened the box, sent again as text: dropped
    for ch in "Fresh bread?":
        box.type(ch)
    assert box.submit() == "Fresh bread?"
    view = box.view()
    assert view is not None
    assert (view.open, view.target, view.typed, view.sent) == (True, "Marta", "", 1)
    # Someone else comes nearer than Marta: the conversation stays with her.
    odo = villager(world, "farmer")
    odo.body.position = (world.player.body.position.x + 10.0, odo.y + 1.0)
    world.step(STAY)
    assert world.nearest_talker() == odo.id
    box.update()
    box.type("And cake?")
    box.submit()
    assert [npc for _, npc, _ in speech.said] == [marta, marta]
    assert villager(world, "baker").brain.state is NpcState.TALK


def test_walking_out_of_range_closes_the_chat_and_says_so(world: World) -> None:
    stand_by(world, "baker")
    box = ChatBox(world, Speech())
    assert box.open()
    for _ in range(240):
        world.step(PlayerIntent(move=1))
        box.update()
        if not box.is_open:
            break
    assert not box.is_open
    view = box.view()
    assert view is not None
    assert view.notice == "Marta is out of earshot. Chat closed."
    assert villager(world, "baker").brain.state is not NpcState.TALK
    for _ in range(NOTICE_TICKS):
        world.step(STAY)
    assert box.view() is None


def test_escape_closes_quietly_and_empty_lines_are_not_sent(world: World) -> None:
    stand_by(world, "baker")
    speech = Speech()
    box = ChatBox(world, speech)
    assert box.open()
    box.type("   ")
    assert box.submit() == ""
    box.type("hi")
    box.backspace()
    assert box.view().typed == "h"  # type: ignore[union-attr]
    box.close()
    assert speech.said == []
    assert box.view() is None
    assert villager(world, "baker").brain.state is not NpcState.TALK


def test_a_villager_knocked_down_ends_the_chat(world: World) -> None:
    stand_by(world, "baker")
    box = ChatBox(world, Speech())
    assert box.open()
    baker = villager(world, "baker")
    blow = world._tuning.knockdown_impulse
    baker.brain.notify(Stimulus(StimulusKind.HIT, (), blow, False, baker.x - 1.0))
    for _ in range(60):
        world.step(STAY)
        box.update()
    assert not box.is_open
    assert "can't talk" in box.view().notice  # type: ignore[union-attr]


def test_typed_text_is_handed_over_from_the_first_key_then_every_fifth_of_a_second(
    world: World,
) -> None:
    npc_id = stand_by(world, "baker")
    speech = Speech()
    box = ChatBox(world, speech)
    assert box.open()

    def typed() -> list[str]:
        return [text for _, _, text in speech.typed]

    def wait(ticks: int) -> None:
        for _ in range(ticks):
            world.step(STAY)
            box.update()

    for key in "What do you sell?":  # a key every 4 ticks: 15 keys a second
        box.type(key)
        wait(4)
    # The first key at once, then the text so far every 12 ticks, then the last of it.
    assert typed()[0] == "W"
    assert len(typed()) == 1 + (17 * 4) // PREPARE_EVERY_TICKS
    wait(PREPARE_EVERY_TICKS)
    assert typed()[-1] == "What do you sell?"
    assert all(to == npc_id for _, to, _ in speech.typed)
    count = len(typed())
    wait(3 * PREPARE_EVERY_TICKS)
    assert len(typed()) == count  # unchanged text is not handed over again
    box.submit()
    wait(3 * PREPARE_EVERY_TICKS)
    assert len(typed()) == count  # nothing typed after sending: nothing to prepare
    assert speech.said[-1][2] == "What do you sell?"
    box.type("What do you sell?")
    wait(1)
    assert typed()[-1] == "What do you sell?"  # the same line again, handed over again


def test_a_villager_turning_away_ends_the_chat_and_says_so(world: World) -> None:
    marta = stand_by(world, "baker")
    box = ChatBox(world, Speech())
    assert box.open()
    assert world.start_action(marta, Order(ActionKind.TURN_AWAY))
    world.step(STAY)
    box.update()
    assert not box.is_open
    view = box.view()
    assert view is not None
    assert view.notice == "Marta turned away from you. Chat closed."


def test_a_villager_who_walks_off_to_fetch_something_says_where_they_went(
    world: World,
) -> None:
    marta = stand_by(world, "baker")
    box = ChatBox(world, Speech())
    assert box.open()
    apple = next(
        p.id
        for p in sorted(world.props, key=lambda p: abs(p.body.position.x - 1000.0))
        if p.kind.name == "apple"
    )
    assert world.start_action(marta, Order(ActionKind.FETCH, prop_id=apple))
    for _ in range(600):
        world.step(STAY)
        box.update()
        if not box.is_open:
            break
    view = box.view()
    assert view is not None
    assert view.notice == "Marta went to fetch it. Chat closed."
