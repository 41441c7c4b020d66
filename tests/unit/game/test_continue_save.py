"""Continue means continue: a save brings back the world, not only the tallies.

Each test plays a village (with the errand bot, or by moving props as a player would),
saves it through the save file, continues it in a freshly built village and compares:
props where they were and moving as they moved, the player and villagers in their
places, errands as open or done as they were, givers who do not ask twice.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from game.app import build_village
from game.config.settings import load_settings
from game.core.session import Session
from game.input.bot import Bot
from game.persist.autosave import Autosave, capture, restore, villager_keys
from game.persist.save_schema import APPLICATION_ID, MIGRATIONS, SCHEMA_V1, SCHEMA_VERSION
from game.persist.saver import Saver
from game.persist.store import SaveState, SaveStore
from game.sim.errands import Errand
from game.sim.events import PropHitNpc, SpeechWanted, StackToppled, Trigger
from game.sim.orders import ActionKind, Order
from game.sim.player import PlayerIntent
from game.sim.villager import NPC_H, NPC_W
from game.sim.world import World

OFF = ('game.dialogue.ai_mode="off"',)
STILL = PlayerIntent()
NEAR = 4.0
"""World units two runs of the same physics may drift apart in a second."""


def _village() -> Session:
    return build_village(load_settings(overrides=OFF))


def _save_and_load(path: Path, village: Session) -> SaveState:
    """Capture the village as the autosave does, write it, and read it back from the file."""
    world = village.world
    state = capture(world, village.dialogue.memories, villager_keys(world))
    store = SaveStore(path)
    try:
        store.write(state)
    finally:
        store.close()
    store = SaveStore(path)
    try:
        loaded = store.load()
        assert not store.dropped
    finally:
        store.close()
    assert loaded is not None
    return loaded


def _continued(state: SaveState) -> Session:
    village = _village()
    restore(village.world, village.dialogue.memories, state)
    return village


def _bodies(world: World) -> dict[int, tuple[float, ...]]:
    """Every prop's position, angle and velocity, by entity id (the same in both worlds)."""
    return {
        p.id: (*p.body.position, p.body.angle, *p.body.velocity, p.body.angular_velocity)
        for p in world.props
    }


def _errands(world: World) -> dict[str, tuple[int, bool, bool]]:
    return {e.spec.id: (e.progress, e.done, e.open) for e in world.errands.errands}


def _errand(world: World, errand_id: str) -> Errand:
    errand = world.errands.get(errand_id)
    assert errand is not None
    return errand


def _said_by(world: World, npc_id: int, ticks: int) -> list[Trigger]:
    """What the villager wanted to say over ``ticks`` ticks of the player standing still."""
    events = [e for _ in range(ticks) for e in world.step(STILL)]
    return [e.trigger for e in events if isinstance(e, SpeechWanted) and e.npc_id == npc_id]


def _villager(world: World, cast_id: str) -> int:
    return next(v.id for v in world.villagers if v.spec.id == cast_id)


def _stand_by(world: World, npc_id: int) -> None:
    position = world.entity_position(npc_id)
    assert position is not None
    world.place_player(position[0] + 60.0, position[1])


def _speech(world: World, ticks: int, trigger: Trigger) -> list[SpeechWanted]:
    events = [e for _ in range(ticks) for e in world.step(STILL)]
    return [e for e in events if isinstance(e, SpeechWanted) and e.trigger is trigger]


def _close(a: tuple[float, ...], b: tuple[float, ...], tolerance: float) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def test_a_continued_game_has_its_props_people_and_errands_where_they_were(
    tmp_path: Path,
) -> None:
    first = _village()
    try:
        world = first.world
        bot = Bot("errands", world.seed, world.level_view())
        apples = _errand(world, "apples")
        for _ in range(7200):
            world.step(bot.intent(world.snapshot()))
            if apples.progress >= 3:
                break
        assert apples.progress >= 3
        assert not apples.done
        for _ in range(60):
            world.step(STILL)
        # The ball knocked off the roof, in flight when the game is saved.
        ball = next(p for p in world.props if p.tag == "roof_ball")
        ball.body.velocity = (-220.0, 260.0)
        for _ in range(3):
            world.step(STILL)
        bodies = _bodies(world)
        errands = _errands(world)
        player = world.player.body.position
        carried = world.player.carrying.id if world.player.carrying is not None else None
        villagers = {v.id: (v.x, v.y) for v in world.villagers}
        state = _save_and_load(tmp_path / "save.sqlite3", first)
        for _ in range(40):
            world.step(STILL)
        later = _bodies(world)
        later_errands = _errands(world)
    finally:
        first.close()

    again = _continued(state)
    try:
        world = again.world
        assert _bodies(world).keys() == bodies.keys()
        for prop_id, saved in _bodies(world).items():
            assert _close(saved, bodies[prop_id], 1e-6), prop_id
        assert _close(tuple(world.player.body.position), tuple(player), 1e-6)
        assert (world.player.carrying.id if world.player.carrying else None) == carried
        for v in world.villagers:
            assert _close((v.x, v.y), villagers[v.id], 1.0), v.spec.id
        assert _errands(world) == errands
        for _ in range(40):
            world.step(STILL)
        # The ball flies on along the same arc, the apples stay in the basket (its
        # recount finds them there), and every prop is where the saved game has it.
        assert _close(_bodies(world)[ball.id][:2], later[ball.id][:2], NEAR)
        assert _errands(world) == later_errands
        assert _errand(world, "apples").progress == errands["apples"][0]
        moved = [i for i, b in _bodies(world).items() if not _close(b[:2], later[i][:2], NEAR)]
        assert not moved
    finally:
        again.close()


def test_a_finished_errand_is_not_offered_again_after_a_restart(tmp_path: Path) -> None:
    first = _village()
    try:
        world = first.world
        pip = _villager(world, "child")
        ball = next(p for p in world.props if p.tag == "roof_ball")
        position = world.entity_position(pip)
        assert position is not None
        ball.body.position = (position[0] + 40.0, position[1])
        for _ in range(60):
            world.step(STILL)
        assert _errand(world, "ball").done
        state = _save_and_load(tmp_path / "save.sqlite3", first)
    finally:
        first.close()

    again = _continued(state)
    try:
        world = again.world
        pip = _villager(world, "child")
        _stand_by(world, pip)
        said = _said_by(world, pip, 300)
        assert Trigger.GREET in said, "she met the traveller"
        assert Trigger.ERRAND_OFFER not in said
        assert _errand(world, "ball").done
    finally:
        again.close()


def test_an_opened_errand_stays_open_and_an_offered_one_is_not_offered_twice(
    tmp_path: Path,
) -> None:
    first = _village()
    try:
        world = first.world
        pip, corvin = _villager(world, "child"), _villager(world, "merchant")
        _stand_by(world, pip)
        offers = _speech(world, 300, Trigger.ERRAND_OFFER)
        assert [o.npc_id for o in offers] == [pip], "Pip asks for her ball"
        world.place_player(600.0, world.level.ground_y(600.0) + 40.0)
        stack = world.stacks[0]
        top = max(stack.props, key=lambda p: p.body.position.y)
        top.body.position = (top.body.position.x - 300.0, 200.0)
        events = [e for _ in range(60) for e in world.step(STILL)]
        assert any(isinstance(e, StackToppled) for e in events)
        assert _errand(world, "restack").open
        crates = {p.id for p in stack.props}
        state = _save_and_load(tmp_path / "save.sqlite3", first)
    finally:
        first.close()

    again = _continued(state)
    try:
        world = again.world
        assert _errand(world, "restack").open
        assert not world.stacks[0].standing
        events = [e for _ in range(60) for e in world.step(STILL)]
        assert not any(isinstance(e, StackToppled) for e in events), "it fell before the save"
        _stand_by(world, pip)
        events = [e for _ in range(300) for e in world.step(STILL)]
        _stand_by(world, corvin)
        events += [e for _ in range(300) for e in world.step(STILL)]
        said = [e for e in events if isinstance(e, SpeechWanted)]
        assert Trigger.GREET in [e.trigger for e in said if e.npc_id == pip]
        assert not [e for e in said if e.npc_id == pip and e.trigger is Trigger.ERRAND_OFFER]
        restack = [e for e in said if e.npc_id == corvin and e.trigger is Trigger.ERRAND_OFFER]
        assert len(restack) == 1, "Corvin asks once for his stack"
        assert set(restack[0].refs) == crates
    finally:
        again.close()


def test_the_autosave_keeps_up_with_a_prop_moved_between_saves(tmp_path: Path) -> None:
    """Saves after the first skip reading props asleep where they were; one moved since
    (and asleep again) is still saved where it lies now."""
    path = tmp_path / "save.sqlite3"
    first = _village()
    try:
        world = first.world
        autosave = Autosave(world, first.dialogue.memories, Saver(SaveStore(path)), 600)
        for _ in range(120):
            world.step(STILL)
        apple = next(p for p in world.props if p.kind.name == "apple" and p.body.is_sleeping)
        autosave.save()
        apple.body.position = (apple.body.position.x + 40.0, apple.body.position.y + 10.0)
        for _ in range(120):
            world.step(STILL)
        assert apple.body.is_sleeping
        place = tuple(apple.body.position)
        autosave.close()
    finally:
        first.close()
    store = SaveStore(path)
    try:
        state = store.load()
    finally:
        store.close()
    assert state is not None
    again = _continued(state)
    try:
        restored = next(p for p in again.world.props if p.id == apple.id)
        assert _close(tuple(restored.body.position), place, 1e-6)
    finally:
        again.close()


def test_a_prop_a_villager_carried_is_set_down_beside_them(tmp_path: Path) -> None:
    first = _village()
    try:
        world = first.world
        marta = next(v for v in world.villagers if v.spec.id == "baker")
        apples = [p for p in world.props if p.kind.name == "apple" and p.body.position.y < 130]
        apple = min(apples, key=lambda p: abs(p.body.position.x - marta.x))
        assert world.start_action(marta.id, Order(ActionKind.FETCH, prop_id=apple.id))
        for _ in range(600):
            world.step(STILL)
            if world.carried_by(marta.id) == apple.id:
                break
        assert world.carried_by(marta.id) == apple.id
        for _ in range(10):
            world.step(STILL)
        assert world.carried_by(marta.id) == apple.id, "still over her head at the save"
        head = marta.y + NPC_H / 2
        state = _save_and_load(tmp_path / "save.sqlite3", first)
    finally:
        first.close()

    again = _continued(state)
    try:
        world = again.world
        marta = next(v for v in world.villagers if v.spec.id == "baker")
        apple = next(p for p in world.props if p.id == apple.id)
        assert world.carried_by(marta.id) is None
        x, y = apple.body.position
        assert abs(x - marta.x) >= NPC_W / 2, "beside her"
        assert y < marta.y, "at her feet, not over her head"
        assert apple.body.velocity.length == 0.0
        events = [e for _ in range(60) for e in world.step(STILL)]
        assert not [e for e in events if isinstance(e, PropHitNpc) and e.prop_id == apple.id]
        assert apple.body.position.y < head
    finally:
        again.close()


def _schema_3_file(path: Path) -> None:
    """A save as version 3 of the game wrote it: tallies and the player, no world rows."""
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    for statement in (*SCHEMA_V1, *MIGRATIONS[1], *MIGRATIONS[2]):
        db.execute(statement)
    db.execute(
        "INSERT INTO memory (npc, lines, facts, summary, attitude) VALUES ('child', ?, ?, '', 1)",
        (json.dumps([["Pip", "My ball!"]]), json.dumps(["the traveller helped with their errand"])),
    )
    db.execute("INSERT INTO errand VALUES ('ball', 1, 1)")
    db.execute("INSERT INTO errand VALUES ('apples', 2, 0)")
    db.execute("INSERT INTO player (id, x, y) VALUES (1, 1500.0, 130.0)")
    db.execute("INSERT INTO info (id, saves, tick, saved_at) VALUES (1, 7, 900, 0.0)")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()


def test_a_schema_3_save_still_continues_with_what_it_has(tmp_path: Path) -> None:
    path = tmp_path / "save.sqlite3"
    _schema_3_file(path)
    store = SaveStore(path)
    try:
        assert store.moved_aside is None
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
        state = store.load()
        assert not store.dropped
    finally:
        store.close()
    assert state is not None
    assert state.saves == 7
    assert not state.world.props
    assert state.world.player == (1500.0, 130.0)

    fresh = _village()
    level_places = _bodies(fresh.world)
    fresh.close()
    again = _continued(state)
    try:
        world = again.world
        assert _errand(world, "ball").done
        assert _errands(world)["apples"] == (0, False, True), "recounted from the props"
        assert _bodies(world) == level_places, "no saved places: the level's own"
        assert _close(tuple(world.player.body.position), (1500.0, 130.0), 1e-6)
        pip = _villager(world, "child")
        assert again.dialogue.memories.of(pip).attitude == 1
        _stand_by(world, pip)
        said = _said_by(world, pip, 300)
        assert Trigger.GREET in said
        assert Trigger.ERRAND_OFFER not in said
    finally:
        again.close()


@pytest.mark.parametrize(
    ("statement", "named"),
    [
        ("UPDATE prop SET x = 'abc' WHERE key = 'roof_ball'", "prop 'roof_ball'"),
        ("UPDATE villager SET y = 'up' WHERE key = 'baker'", "villager 'baker'"),
        ("UPDATE stack SET props = '[\"crate1\"' ", "stack "),
        ("UPDATE errand SET opened = 7 WHERE id = 'restack'", "errand 'restack'"),
    ],
)
def test_a_damaged_world_row_costs_only_that_row(
    tmp_path: Path, statement: str, named: str
) -> None:
    path = tmp_path / "save.sqlite3"
    first = _village()
    try:
        world = first.world
        pip = _villager(world, "child")
        apple = next(p for p in world.props if p.kind.name == "apple")
        apple.body.position = (apple.body.position.x + 80.0, apple.body.position.y + 20.0)
        for _ in range(30):
            world.step(STILL)
        apple_place = tuple(apple.body.position)
        pip_place = world.entity_position(pip)
        assert pip_place is not None
        _save_and_load(path, first)
    finally:
        first.close()
    db = sqlite3.connect(path)
    db.execute(statement)
    db.commit()
    db.close()

    store = SaveStore(path)
    try:
        state = store.load()
        assert [d for d in store.dropped if d.startswith(named)] == store.dropped
        assert len(store.dropped) == 1
    finally:
        store.close()
    assert state is not None
    again = _continued(state)
    try:
        world = again.world
        restored = next(p for p in world.props if p.id == apple.id)
        assert _close(tuple(restored.body.position), apple_place, 1e-6)
        assert _close(world.entity_position(pip) or (0.0, 0.0), pip_place, 1.0)
    finally:
        again.close()
