"""Saves in SQLite: what villagers remember and the world as it was (see
:mod:`game.sim.continuity`): errands, props, villagers, crate stacks and the player.

One file per save (WAL mode), written in one transaction (by :mod:`game.persist.saver`'s
thread, so the tick only copies a few small records). A damaged or foreign file is moved
aside, never overwritten, and the game starts fresh with one clear message.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from game.dialogue.memory import MemoryRecord as SavedMemory
from game.persist.lock import lock_save
from game.persist.save_schema import ForeignSaveError, prepare
from game.sim.continuity import BodyState, ErrandState, StackState, WorldState

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SaveState:
    """Everything a save holds: memories, keyed by a villager's stable key, and the world."""

    memories: Mapping[str, SavedMemory] = field(default_factory=dict)
    world: WorldState = field(default_factory=WorldState)
    tick: int = 0
    saves: int = 0


class SaveStore:
    """One save file. Open it, ``load`` what it holds, ``write`` new states."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.moved_aside: Path | None = None
        self.dropped: list[str] = []
        """What the last ``load`` left out, one entry per damaged row."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = lock_save(path)
        try:
            self._db = self._open()
        except sqlite3.OperationalError as exc:
            # A full or read-only disk, a folder that cannot be written: not damage. The
            # file is kept as it is, for the next start.
            self._lock.close()
            raise SaveUnavailableError(_cause(exc, path.parent)) from exc
        except (sqlite3.DatabaseError, ForeignSaveError) as exc:
            self.moved_aside = self._move_aside()
            logger.warning(
                "save file %s is unusable (%s); moved it to %s and started fresh",
                path,
                exc,
                self.moved_aside.name,
            )
            self._db = self._open()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        try:
            prepare(db)
        except BaseException:
            db.close()
            raise
        return db

    def _move_aside(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.unusable-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                os.replace(source, Path(f"{aside}{suffix}"))
        return aside

    def load(self) -> SaveState | None:
        """The saved state, or None when nothing was saved yet.

        Every row is checked (types, shapes, ranges); a damaged one is left out and named
        in ``dropped``, and the rest of the save is used. Only a file SQLite cannot read
        is damage to the whole save.
        """
        db = self._db
        self.dropped = []
        info = db.execute("SELECT saves, tick FROM info WHERE id = 1").fetchone()
        if info is None:
            return None
        memories: dict[str, SavedMemory] = {}
        for npc, lines, facts, summary, attitude, met in db.execute(
            "SELECT npc, lines, facts, summary, attitude, met FROM memory"
        ):
            try:
                memories[_key(npc)] = _memory(lines, facts, summary, attitude, met)
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                self.dropped.append(f"memory of {npc!r} ({exc})")
        world = self._load_world()
        saves, tick = _count_or_zero(info[0]), _count_or_zero(info[1])
        if self.dropped:
            logger.warning(
                "save file %s: left out %d damaged row(s): %s",
                self.path,
                len(self.dropped),
                "; ".join(self.dropped),
            )
        return SaveState(memories, world, tick, saves)

    def _load_world(self) -> WorldState:
        """The world's rows, each checked; a damaged one is named in ``dropped``."""
        db = self._db
        errands: dict[str, ErrandState] = {}
        for errand_id, progress, done, opened, offered in db.execute(
            "SELECT id, progress, done, opened, offered FROM errand"
        ):
            try:
                errands[_key(errand_id)] = ErrandState(
                    _count(progress), _flag(done), _maybe_flag(opened), _maybe_flag(offered)
                )
            except (ValueError, TypeError) as exc:
                self.dropped.append(f"errand {errand_id!r} ({exc})")
        player_row = db.execute("SELECT x, y, carried FROM player WHERE id = 1").fetchone()
        player: tuple[float, float] | None = None
        carried = ""
        if player_row is not None:
            try:
                player = (_finite(player_row[0]), _finite(player_row[1]))
                carried = _text(player_row[2])
            except (ValueError, TypeError) as exc:
                self.dropped.append(f"the player's place ({exc})")
        props: dict[str, BodyState] = {}
        for key, *numbers in db.execute("SELECT key, x, y, angle, vx, vy, spin FROM prop"):
            try:
                props[_key(key)] = BodyState(*(_finite(n) for n in numbers))
            except (ValueError, TypeError) as exc:
                self.dropped.append(f"prop {key!r} ({exc})")
        villagers: dict[str, tuple[float, float]] = {}
        for key, x, y in db.execute("SELECT key, x, y FROM villager"):
            try:
                villagers[_key(key)] = (_finite(x), _finite(y))
            except (ValueError, TypeError) as exc:
                self.dropped.append(f"villager {key!r} ({exc})")
        stacks: dict[str, StackState] = {}
        for stack_id, standing, x, top_y, members in db.execute(
            "SELECT id, standing, x, top_y, props FROM stack"
        ):
            try:
                stacks[_key(stack_id)] = StackState(
                    _flag(standing), _finite(x), _finite(top_y), _keys(members)
                )
            except (ValueError, TypeError) as exc:
                self.dropped.append(f"stack {stack_id!r} ({exc})")
        return WorldState(
            player, errands, props, carried if carried in props else "", villagers, stacks
        )

    def write(self, state: SaveState) -> int:
        """Replace the saved state with ``state`` in one transaction; return the save count."""
        db = self._db
        world = state.world
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT saves FROM info WHERE id = 1").fetchone()
            saves = (0 if row is None else _count_or_zero(row[0])) + 1
            db.execute("DELETE FROM memory")
            db.executemany(
                "INSERT INTO memory (npc, lines, facts, summary, attitude, met)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        npc,
                        json.dumps(m.lines),
                        json.dumps(m.facts),
                        _summary_json(m),
                        m.attitude,
                        int(m.met),
                    )
                    for npc, m in state.memories.items()
                ],
            )
            db.execute("DELETE FROM errand")
            db.executemany(
                "INSERT INTO errand (id, progress, done, opened, offered) VALUES (?, ?, ?, ?, ?)",
                [
                    (eid, e.progress, int(e.done), _maybe_int(e.open), _maybe_int(e.offered))
                    for eid, e in world.errands.items()
                ],
            )
            if world.player is not None:
                db.execute(
                    "INSERT OR REPLACE INTO player (id, x, y, carried) VALUES (1, ?, ?, ?)",
                    (*world.player, world.carried),
                )
            db.execute("DELETE FROM prop")
            db.executemany(
                "INSERT INTO prop (key, x, y, angle, vx, vy, spin) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(k, b.x, b.y, b.angle, b.vx, b.vy, b.spin) for k, b in world.props.items()],
            )
            db.execute("DELETE FROM villager")
            db.executemany(
                "INSERT INTO villager (key, x, y) VALUES (?, ?, ?)",
                [(k, x, y) for k, (x, y) in world.villagers.items()],
            )
            db.execute("DELETE FROM stack")
            db.executemany(
                "INSERT INTO stack (id, standing, x, top_y, props) VALUES (?, ?, ?, ?, ?)",
                [
                    (k, int(st.standing), st.x, st.top_y, json.dumps(list(st.props)))
                    for k, st in world.stacks.items()
                ],
            )
            db.execute(
                "INSERT OR REPLACE INTO info (id, saves, tick, saved_at) VALUES (1, ?, ?, ?)",
                (saves, state.tick, time.time()),
            )
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError):
                raise SaveUnavailableError(_cause(exc, self.path.parent)) from exc
            raise
        return saves

    def close(self) -> None:
        """Close the file (the WAL is checkpointed by SQLite) and let go of its lock."""
        self._db.close()
        self._lock.close()


class SaveUnavailableError(OSError):
    """The save cannot be opened or written now (the disk is full, read-only, ...), though
    nothing says it is damaged; the message names the cause for a human."""


_FULL_BELOW = 1 << 20
"""Free space under this on the save's disk makes an I/O error "the disk is full"."""


def _cause(exc: sqlite3.Error, folder: Path) -> str:
    """What a player should read for an SQLite error that is not damage.

    SQLite says "disk I/O error" when it cannot grow its side files on a full disk, so
    the free space is looked at too.
    """
    text = str(exc)
    try:
        full = shutil.disk_usage(folder).free < _FULL_BELOW
    except OSError:
        full = False
    if "full" in text or full:
        return "the disk is full"
    if "readonly" in text or "read-only" in text:
        return "the disk or the file is read-only"
    if "unable to open" in text:
        return "the file cannot be opened (is the disk full or read-only?)"
    return text


def _summary_json(memory: SavedMemory) -> str:
    """The summary's parts as stored: how many lines left the window, and their topics."""
    if not memory.older and not memory.topics:
        return ""
    return json.dumps({"older": memory.older, "topics": list(memory.topics)})


def _memory(
    lines: object, facts: object, summary: object, attitude: object, met: object
) -> SavedMemory:
    """One memory row, checked: every field of the shape and within the range it must be.

    A row saved before meetings were kept (``met`` NULL) counts a villager who remembers
    anything as met."""
    parts = json.loads(_text(summary)) if summary else {}
    if not isinstance(parts, dict):
        raise ValueError("summary is not an object")
    window = json.loads(_text(lines))
    if not isinstance(window, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
        for pair in window
    ):
        raise ValueError("lines are not (speaker, text) pairs")
    kept = json.loads(_text(facts))
    if not isinstance(kept, list) or not all(isinstance(fact, str) for fact in kept):
        raise ValueError("facts are not strings")
    topics = parts.get("topics", [])
    if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        raise ValueError("topics are not strings")
    feeling = _count(attitude, low=-2, high=2)
    older = _count(parts.get("older", 0))
    return SavedMemory(
        tuple((speaker, text) for speaker, text in window),
        tuple(kept),
        older,
        tuple(topics),
        feeling,
        bool(window or kept or older) if met is None else _flag(met),
    )


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected text, found {type(value).__name__}")
    return value


def _key(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("an empty or non-text key")
    return value


def _count(value: object, low: int = 0, high: int = 2**31) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{value!r} is not a whole number in {low}..{high}")
    return value


def _count_or_zero(value: object) -> int:
    try:
        return _count(value)
    except ValueError:
        return 0


def _flag(value: object) -> bool:
    if value not in (0, 1) or isinstance(value, float):
        raise ValueError(f"{value!r} is not 0 or 1")
    return bool(value)


def _maybe_flag(value: object) -> bool | None:
    """A flag that older saves did not record (NULL)."""
    return None if value is None else _flag(value)


def _maybe_int(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _keys(value: object) -> tuple[str, ...]:
    keys = json.loads(_text(value))
    if not isinstance(keys, list):
        raise ValueError("not a list of keys")
    return tuple(_key(k) for k in keys)


def _finite(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    return float(value)
