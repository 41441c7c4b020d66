"""Saves in SQLite: what villagers remember, errand progress and where the player stands.

One file per save (WAL mode), written in one transaction by a background thread so the
tick only copies a few small records. The schema is versioned (``PRAGMA user_version``)
and migrated forward on open; the file carries an application id so a foreign database
is recognised. A damaged or foreign file is moved aside, never overwritten, and the game
starts fresh with one clear message.
"""

from __future__ import annotations

import fcntl
import json
import logging
import math
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from game.dialogue.memory import MemoryRecord as SavedMemory

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 3
APPLICATION_ID = 0x5A535631  # "ZSV1"
DATA_DIR_ENV = "ZEROSTALL_DATA_DIR"

#: The first schema, kept so the migration from it can be tested.
SCHEMA_V1 = (
    "CREATE TABLE memory (npc TEXT PRIMARY KEY, lines TEXT NOT NULL, facts TEXT NOT NULL)",
    "CREATE TABLE errand (id TEXT PRIMARY KEY, progress INTEGER NOT NULL, done INTEGER NOT NULL)",
)
#: Steps from version N to N + 1, each run in the transaction that bumps the version.
MIGRATIONS: Mapping[int, tuple[str, ...]] = {
    1: (
        "ALTER TABLE memory ADD COLUMN summary TEXT NOT NULL DEFAULT ''",
        "CREATE TABLE player (id INTEGER PRIMARY KEY CHECK (id = 1), x REAL NOT NULL,"
        " y REAL NOT NULL)",
        "CREATE TABLE info (id INTEGER PRIMARY KEY CHECK (id = 1), saves INTEGER NOT NULL,"
        " tick INTEGER NOT NULL, saved_at REAL NOT NULL)",
    ),
    2: ("ALTER TABLE memory ADD COLUMN attitude INTEGER NOT NULL DEFAULT 0",),
}


def default_save_path() -> Path:
    """``$ZEROSTALL_DATA_DIR``, else ``$XDG_DATA_HOME/zerostall``, else ~/.local/share."""
    env = os.environ.get(DATA_DIR_ENV, "")
    if env:
        return Path(env).expanduser() / "save.sqlite3"
    xdg = os.environ.get("XDG_DATA_HOME", "")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "zerostall" / "save.sqlite3"


def start_new(path: Path) -> None:
    """``--new``: keep the current save as ``<name>.previous`` so the new game starts empty."""
    previous = path.with_name(path.name + ".previous")
    path.parent.mkdir(parents=True, exist_ok=True)
    _lock(path).close()  # never while another game has the save open
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{path}{suffix}")
        target = Path(f"{previous}{suffix}")
        if source.exists():
            os.replace(source, target)
        elif target.exists():
            target.unlink()


@dataclass(frozen=True, slots=True)
class SaveState:
    """Everything a save holds. Memories are keyed by a villager's stable key."""

    memories: Mapping[str, SavedMemory] = field(default_factory=dict)
    errands: Mapping[str, tuple[int, bool]] = field(default_factory=dict)
    player: tuple[float, float] | None = None
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
        self._lock = _lock(path)
        try:
            self._db = self._open()
        except sqlite3.OperationalError as exc:
            # A full or read-only disk, a folder that cannot be written: not damage. The
            # file is kept as it is, for the next start.
            self._lock.close()
            raise SaveUnavailableError(_cause(exc, path.parent)) from exc
        except (sqlite3.DatabaseError, _ForeignError) as exc:
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
            _prepare(db)
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
        for npc, lines, facts, summary, attitude in db.execute(
            "SELECT npc, lines, facts, summary, attitude FROM memory"
        ):
            try:
                memories[_key(npc)] = _memory(lines, facts, summary, attitude)
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                self.dropped.append(f"memory of {npc!r} ({exc})")
        errands: dict[str, tuple[int, bool]] = {}
        for errand_id, progress, done in db.execute("SELECT id, progress, done FROM errand"):
            try:
                errands[_key(errand_id)] = (_count(progress), _flag(done))
            except (ValueError, TypeError) as exc:
                self.dropped.append(f"errand {errand_id!r} ({exc})")
        player_row = db.execute("SELECT x, y FROM player WHERE id = 1").fetchone()
        player: tuple[float, float] | None = None
        if player_row is not None:
            try:
                player = (_finite(player_row[0]), _finite(player_row[1]))
            except (ValueError, TypeError) as exc:
                self.dropped.append(f"the player's place ({exc})")
        saves, tick = _count_or_zero(info[0]), _count_or_zero(info[1])
        if self.dropped:
            logger.warning(
                "save file %s: left out %d damaged row(s): %s",
                self.path,
                len(self.dropped),
                "; ".join(self.dropped),
            )
        return SaveState(memories, errands, player, tick, saves)

    def write(self, state: SaveState) -> int:
        """Replace the saved state with ``state`` in one transaction; return the save count."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute("SELECT saves FROM info WHERE id = 1").fetchone()
            saves = (0 if row is None else _count_or_zero(row[0])) + 1
            db.execute("DELETE FROM memory")
            db.executemany(
                "INSERT INTO memory (npc, lines, facts, summary, attitude) VALUES (?, ?, ?, ?, ?)",
                [
                    (npc, json.dumps(m.lines), json.dumps(m.facts), _summary_json(m), m.attitude)
                    for npc, m in state.memories.items()
                ],
            )
            db.execute("DELETE FROM errand")
            db.executemany(
                "INSERT INTO errand (id, progress, done) VALUES (?, ?, ?)",
                [(eid, progress, int(done)) for eid, (progress, done) in state.errands.items()],
            )
            if state.player is not None:
                db.execute(
                    "INSERT OR REPLACE INTO player (id, x, y) VALUES (1, ?, ?)", state.player
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


class SaveInUseError(OSError):
    """Another running game holds this save; the message is meant for a human."""


def _lock(path: Path) -> IO[bytes]:
    """Take the save's advisory lock (a ``.lock`` file beside it) for as long as it is open.

    Two games on one save would interleave their commits and the second would overwrite
    the first's memories; the second gets ``SaveInUseError`` instead. The lock goes with
    the process, so a game that was killed never leaves a stale one behind.
    """
    handle = open(path.with_name(path.name + ".lock"), "ab")  # noqa: SIM115 - held open
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise SaveInUseError(f"{path} is in use by another running game") from None
    return handle


def _summary_json(memory: SavedMemory) -> str:
    """The summary's parts as stored: how many lines left the window, and their topics."""
    if not memory.older and not memory.topics:
        return ""
    return json.dumps({"older": memory.older, "topics": list(memory.topics)})


def _memory(lines: object, facts: object, summary: object, attitude: object) -> SavedMemory:
    """One memory row, checked: every field of the shape and within the range it must be."""
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
    return SavedMemory(
        tuple((speaker, text) for speaker, text in window),
        tuple(kept),
        _count(parts.get("older", 0)),
        tuple(topics),
        feeling,
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


def _finite(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    return float(value)


class _ForeignError(Exception):
    """The file is a database, but not a save of this game (or from a newer version)."""


def _prepare(db: sqlite3.Connection) -> None:
    """Check the file is ours and healthy, create or migrate the schema. Raises on damage."""
    check = db.execute("PRAGMA quick_check").fetchone()
    if check is None or check[0] != "ok":
        raise sqlite3.DatabaseError(f"integrity check failed: {check}")
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if app_id != APPLICATION_ID and (app_id != 0 or tables):
        raise _ForeignError("not a Zerostall save")
    if version > SCHEMA_VERSION:
        raise _ForeignError(f"saved by a newer version (schema {version})")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    if tables == 0:
        db.execute("BEGIN IMMEDIATE")
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for statement in SCHEMA_V1:
            db.execute(statement)
        db.execute("PRAGMA user_version = 1")
        db.execute("COMMIT")
        version = 1
    migrate(db, version)


def migrate(db: sqlite3.Connection, version: int) -> None:
    """Apply every migration from ``version`` up to :data:`SCHEMA_VERSION`."""
    while version < SCHEMA_VERSION:
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[version]:
                db.execute(statement)
            version += 1
            db.execute(f"PRAGMA user_version = {version}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        logger.info("save file migrated to schema %d", version)


class Saver:
    """Writes states on its own thread; ``submit`` only hands over the latest one.

    If a write is still running when the next state arrives, the newer state replaces
    the waiting one: a save is a whole snapshot, so nothing is lost by skipping one.
    """

    def __init__(self, store: SaveStore) -> None:
        self._store = store
        self._cond = threading.Condition()
        self._pending: SaveState | None = None
        self._closing = False
        self.saves = 0
        self.write_ms: list[float] = []
        self.error: str | None = None
        self._thread = threading.Thread(target=self._run, name="saver", daemon=False)
        self._thread.start()

    def submit(self, state: SaveState) -> None:
        """Queue ``state`` for writing; never blocks on the disk."""
        with self._cond:
            self._pending = state
            self._cond.notify()

    def close(self) -> None:
        """Write what is pending, stop the thread and close the file."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()
        self._store.close()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._closing:
                    self._cond.wait()
                state, self._pending = self._pending, None
                closing = self._closing
            if state is not None:
                self._write(state)
            if closing and state is None:
                return

    def _write(self, state: SaveState) -> None:
        begin = time.perf_counter()
        try:
            self.saves = self._store.write(state)
        except (sqlite3.Error, SaveUnavailableError) as exc:
            if self.error is None:
                logger.error("cannot save to %s: %s", self._store.path, exc)
            self.error = str(exc)
            return
        self.write_ms.append((time.perf_counter() - begin) * 1000.0)
        logger.debug("save %d committed: %s", self.saves, state_digest(state))


def state_digest(state: SaveState) -> str:
    """A short hash of a state's content, to compare a save with what was written."""
    import hashlib

    payload = json.dumps(
        [
            sorted(
                (k, list(m.lines), list(m.facts), m.older, list(m.topics), m.attitude)
                for k, m in state.memories.items()
            ),
            sorted((k, list(v)) for k, v in state.errands.items()),
            state.player,
            state.tick,
        ]
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
