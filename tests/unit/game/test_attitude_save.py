"""A villager's attitude towards the traveller survives a save: schema 3 and the round trip.

Schema 2 saves had no attitude; opening one migrates it and every memory reads as
neutral. A written attitude reads back as written, and a continued game puts it back
both into the villager's memory and into the brain that acts on it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from game.app import build_village
from game.config.settings import load_settings
from game.core.session import Session
from game.dialogue.memory import MemoryRecord
from game.persist.autosave import capture, restore, villager_keys
from game.persist.save_schema import APPLICATION_ID, MIGRATIONS, SCHEMA_V1, SCHEMA_VERSION
from game.persist.store import SaveState, SaveStore
from tests.unit.game.conftest import npc_named

OFF = ('game.dialogue.ai_mode="off"',)


def _schema_2_file(path: Path) -> None:
    """A save as version 2 of the game wrote it: one memory, one recorded save."""
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    for statement in (*SCHEMA_V1, *MIGRATIONS[1]):
        db.execute(statement)
    db.execute(
        "INSERT INTO memory (npc, lines, facts, summary) VALUES ('baker', ?, ?, '')",
        (json.dumps([["Marta", "Fresh bread!"]]), json.dumps(["the traveller waved"])),
    )
    db.execute("INSERT INTO info (id, saves, tick, saved_at) VALUES (1, 4, 600, 0.0)")
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()


def test_a_schema_2_save_migrates_with_neutral_attitudes(tmp_path: Path) -> None:
    path = tmp_path / "save.sqlite3"
    _schema_2_file(path)
    store = SaveStore(path)
    try:
        assert store.moved_aside is None
        assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        state = store.load()
        assert state is not None
        assert state.saves == 4
        assert state.memories == {
            "baker": MemoryRecord((("Marta", "Fresh bread!"),), ("the traveller waved",), met=True)
        }
        assert state.memories["baker"].attitude == 0
    finally:
        store.close()


def test_a_written_attitude_reads_back(tmp_path: Path) -> None:
    store = SaveStore(tmp_path / "save.sqlite3")
    try:
        cross = MemoryRecord((("Sela", "Move along."),), attitude=-2)
        store.write(SaveState({"guard": cross, "baker": MemoryRecord(attitude=1)}))
        state = store.load()
        assert state is not None
        assert state.memories["guard"] == cross
        assert state.memories["baker"].attitude == 1
    finally:
        store.close()


def _village() -> Session:
    return build_village(load_settings(overrides=OFF))


def _brain_attitude(village: Session, npc_id: int) -> int:
    (actor,) = [a for a in village.world.snapshot().actors if a.id == npc_id]
    return actor.attitude


def test_a_continued_game_keeps_the_attitude(tmp_path: Path) -> None:
    path = tmp_path / "save.sqlite3"
    first = _village()
    try:
        marta = npc_named(first, "Marta")
        first.dialogue.memories.of(marta).attitude = -1
        first.world.set_attitude(marta, -1)
        state = capture(first.world, first.dialogue.memories, villager_keys(first.world))
    finally:
        first.close()
    assert state.memories["baker"].attitude == -1
    store = SaveStore(path)
    store.write(state)
    store.close()

    store = SaveStore(path)
    loaded = store.load()
    store.close()
    assert loaded is not None
    again = _village()
    try:
        marta = npc_named(again, "Marta")
        assert _brain_attitude(again, marta) == 0
        restore(again.world, again.dialogue.memories, loaded)
        assert again.dialogue.memories.of(marta).attitude == -1
        assert _brain_attitude(again, marta) == -1
        others = [i for i in again.world.npc_ids() if i != marta]
        assert {_brain_attitude(again, i) for i in others} == {0}
    finally:
        again.close()
