"""Watch ``config/game.toml`` and ``config/ai.toml`` while the game runs.

A small thread stats the two files every half second. When their size, time or inode
changed and then held still for one more look (an editor may still be writing), it reads
and checks them with the loader the game started with, ``--set`` overrides included, and
queues the outcome for the main thread: the settings, or the message of the first
mistake. An unchanged file is never read again, so a bad edit is reported once.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from game.config.loader import ConfigError
from game.config.settings import Settings, load_settings

logger = logging.getLogger(__name__)

CONFIG_FILES = ("game.toml", "ai.toml")
INTERVAL_S = 0.5

#: What one look sees of a file: (mtime in ns, size, inode), or None when it cannot be read.
Stamp = tuple[int, int, int] | None
Stat = Callable[[Path], os.stat_result]


@dataclass(frozen=True, slots=True)
class SettingsRead:
    """The files changed and were read; these are the settings they now hold."""

    settings: Settings


@dataclass(frozen=True, slots=True)
class SettingsRefused:
    """The files changed but cannot be used; ``message`` names the file and the mistake."""

    message: str


ConfigRead = SettingsRead | SettingsRefused


class ConfigWatcher:
    """Notices edits to the config files and reads them off the main thread.

    Make it before the game loads its settings, so an edit made while the game starts is
    seen too. :meth:`check` is one look (the thread calls it; tests call it directly);
    :meth:`take` hands the outcomes to the main thread without waiting.
    """

    def __init__(
        self,
        config_dir: Path,
        overrides: tuple[str, ...] = (),
        interval_s: float = INTERVAL_S,
        stat: Stat = os.stat,
    ) -> None:
        self.config_dir = config_dir
        self._overrides = overrides
        self._interval_s = interval_s
        self._stat = stat
        self._paths = tuple(config_dir / name for name in CONFIG_FILES)
        self._seen = self._stamps()
        self._changing: tuple[Stamp, ...] | None = None
        self._out: queue.SimpleQueue[ConfigRead] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Look at the files every ``interval_s`` on a thread of its own until :meth:`close`."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="config-watch", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the thread and wait for it (at most one look)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def check(self) -> None:
        """One look: stat the files, and read them once a change has held still."""
        stamps = self._stamps()
        if stamps == self._seen:
            self._changing = None
            return
        if stamps != self._changing:
            self._changing = stamps  # read it at the next look, if it stays like this
            return
        self._seen, self._changing = stamps, None
        self._out.put(self._read())

    def take(self) -> list[ConfigRead]:
        """The outcomes of the reads since the last call, oldest first; never waits."""
        reads: list[ConfigRead] = []
        while True:
            try:
                reads.append(self._out.get_nowait())
            except queue.Empty:
                return reads

    def _read(self) -> ConfigRead:
        try:
            return SettingsRead(load_settings(self.config_dir, self._overrides))
        except ConfigError as exc:
            return SettingsRefused(str(exc))
        except Exception as exc:  # the game plays on with what it has, whatever the file
            logger.debug("reading the settings failed", exc_info=True)
            return SettingsRefused(f"{self.config_dir}: cannot read the settings: {exc!r}")

    def _stamps(self) -> tuple[Stamp, ...]:
        return tuple(self._stamp(path) for path in self._paths)

    def _stamp(self, path: Path) -> Stamp:
        try:
            info = self._stat(path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self.check()
            except Exception:  # a look that fails is tried again at the next one
                logger.exception("config watch: a look at the files failed")
