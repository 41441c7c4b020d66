"""The save file's format: its application id, the versioned schema and the migrations.

The schema is versioned (``PRAGMA user_version``) and migrated forward on open; the file
carries an application id so that a foreign database is recognised.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Mapping

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 5
APPLICATION_ID = 0x5A535631  # "ZSV1"

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
    # The world itself: where props and villagers are, how the stacks stand, whether an
    # errand is open and was offered (NULL in older rows: not recorded), what the player
    # holds. A save from before has none of it, and the level's own places stand in.
    3: (
        "ALTER TABLE errand ADD COLUMN opened INTEGER",
        "ALTER TABLE errand ADD COLUMN offered INTEGER",
        "ALTER TABLE player ADD COLUMN carried TEXT NOT NULL DEFAULT ''",
        "CREATE TABLE prop (key TEXT PRIMARY KEY, x REAL NOT NULL, y REAL NOT NULL,"
        " angle REAL NOT NULL, vx REAL NOT NULL, vy REAL NOT NULL, spin REAL NOT NULL)",
        "CREATE TABLE villager (key TEXT PRIMARY KEY, x REAL NOT NULL, y REAL NOT NULL)",
        "CREATE TABLE stack (id TEXT PRIMARY KEY, standing INTEGER NOT NULL, x REAL NOT NULL,"
        " top_y REAL NOT NULL, props TEXT NOT NULL)",
    ),
    # Whether each villager has met the traveller (NULL in older rows: not recorded).
    4: ("ALTER TABLE memory ADD COLUMN met INTEGER",),
}


class ForeignSaveError(Exception):
    """The file is a database, but not a save of this game (or from a newer version)."""


def prepare(db: sqlite3.Connection) -> None:
    """Check the file is ours and healthy, create or migrate the schema. Raises on damage."""
    check = db.execute("PRAGMA quick_check").fetchone()
    if check is None or check[0] != "ok":
        raise sqlite3.DatabaseError(f"integrity check failed: {check}")
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if app_id != APPLICATION_ID and (app_id != 0 or tables):
        raise ForeignSaveError("not a Zerostall save")
    if version > SCHEMA_VERSION:
        raise ForeignSaveError(f"saved by a newer version (schema {version})")
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
