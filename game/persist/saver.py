"""Writing saves on a thread of their own, so a tick never waits for the disk."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from dataclasses import astuple

from game.persist.store import SaveState, SaveStore, SaveUnavailableError

logger = logging.getLogger(__name__)


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
    world = state.world
    payload = json.dumps(
        [
            sorted(
                (k, list(m.lines), list(m.facts), m.older, list(m.topics), m.attitude, m.met)
                for k, m in state.memories.items()
            ),
            sorted((k, astuple(e)) for k, e in world.errands.items()),
            world.player,
            sorted((k, astuple(b)) for k, b in world.props.items()),
            world.carried,
            sorted((k, list(v)) for k, v in world.villagers.items()),
            sorted((k, astuple(st)) for k, st in world.stacks.items()),
            state.tick,
        ]
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
