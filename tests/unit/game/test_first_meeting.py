"""A villager meets the traveller once: lines to other villagers do not count, and the
meeting survives a save."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from game.dialogue.line_source import LineAsk, TemplateLineSource
from game.dialogue.memory import MemoryRecord
from game.dialogue.speech import Dialogue
from game.dialogue.templates import TemplateLines
from game.persist.save_schema import APPLICATION_ID, MIGRATIONS, SCHEMA_V1
from game.persist.store import SaveState, SaveStore
from game.sim.events import Trigger

PLAYER = 1
BESS, TOM = 7, 8


def _dialogue() -> Dialogue:
    lines = {
        npc: {Trigger.GREET: ("Morning.",), Trigger.AMBIENT: ("Nice day.",), Trigger.HIT: ("Ow!",)}
        for npc in (BESS, TOM)
    }
    names = {BESS: "Bess", TOM: "Tom"}
    source = TemplateLineSource(TemplateLines(lines, names, seed=1), {PLAYER: "traveller"})
    return Dialogue(source, names, bubble_ticks=60, chat_bubble_ticks=120)


def test_chatting_with_villagers_is_not_meeting_the_traveller() -> None:
    dialogue = _dialogue()
    dialogue.ask(LineAsk(5, BESS, Trigger.AMBIENT, TOM))
    dialogue.update(5)
    bess = dialogue.memories.of(BESS)
    assert bess.exchanges
    assert not bess.met
    assert not bess.recollection().met
    dialogue.ask(LineAsk(7, BESS, Trigger.HIT, None))  # a prop nobody threw
    dialogue.update(7)
    assert not bess.met
    dialogue.ask(LineAsk(9, BESS, Trigger.GREET, PLAYER))
    dialogue.update(9)
    assert bess.met
    assert bess.recollection().met


def test_the_traveller_speaking_first_is_a_meeting() -> None:
    dialogue = _dialogue()
    dialogue.say(3, TOM, PLAYER, "hello there")
    assert dialogue.memories.of(TOM).met


def test_a_meeting_is_saved_and_read_back(tmp_path: Path) -> None:
    store = SaveStore(tmp_path / "save.sqlite3")
    try:
        met = MemoryRecord((("Bess", "Morning."),), met=True)
        chatted = MemoryRecord((("Tom", "Nice day."),))
        store.write(SaveState({"bess": met, "tom": chatted}))
        state = store.load()
        assert state is not None
        assert state.memories == {"bess": met, "tom": chatted}
    finally:
        store.close()


def test_a_save_from_before_meetings_were_kept_counts_a_villager_who_remembers_as_met(
    tmp_path: Path,
) -> None:
    path = tmp_path / "save.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    for statement in (*SCHEMA_V1, *MIGRATIONS[1], *MIGRATIONS[2], *MIGRATIONS[3]):
        db.execute(statement)
    insert = "INSERT INTO memory (npc, lines, facts, summary, attitude) VALUES (?, ?, ?, '', 0)"
    db.execute(insert, ("bess", json.dumps([["Bess", "Morning."]]), "[]"))
    db.execute(insert, ("tom", "[]", "[]"))
    db.execute("INSERT INTO info (id, saves, tick, saved_at) VALUES (1, 2, 300, 0.0)")
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    store = SaveStore(path)
    try:
        state = store.load()
        assert state is not None
        assert not store.dropped
        assert state.memories["bess"].met
        assert not state.memories["tom"].met
    finally:
        store.close()
