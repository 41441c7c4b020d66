"""Opening the save at start: continue from it, or start fresh, or play on without one."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from game.cli import notice
from game.config.loader import ConfigError
from game.config.settings import SaveConfig
from game.core.session import Session
from game.persist.autosave import Autosave, restore
from game.persist.lock import SaveInUseError
from game.persist.paths import check_writable, default_save_path, start_new
from game.persist.saver import Saver
from game.persist.store import SaveStore
from game.sim.ticks import ticks

logger = logging.getLogger(__name__)


def open_save(
    village: Session, config: SaveConfig, *, path: Path | None, new: bool, headless: bool
) -> Autosave | None:
    """Continue from the save (or start fresh with ``new``) and return the autosave.

    ``path`` is the ``--save`` file, if one was given. Window play saves unless
    ``save.enabled`` is false; headless runs only with ``--save``. Raises ConfigError for a
    ``--save`` path that cannot be written; any other trouble with the save file means
    playing on without saving, after one warning.
    """
    if path is not None:
        check_writable(path)
    elif headless or not config.enabled:
        return None
    else:
        path = Path(config.path).expanduser() if config.path else default_save_path()
    try:
        if new:
            start_new(path)
        store = SaveStore(path)
        state = store.load()
    except SaveInUseError as exc:
        if headless:
            raise ConfigError(f"{exc}; use another --save path") from None
        _notice(village, f"{exc}; playing without saving")
        return None
    except (OSError, sqlite3.Error) as exc:
        _notice(village, f"cannot use the save file {path} ({exc}); playing without saving")
        return None
    if store.moved_aside is not None:
        _notice(
            village,
            f"the save file was damaged or not ours; kept it as "
            f"{store.moved_aside.name} and started a new game",
        )
    if store.dropped:
        _notice(
            village,
            f"the save had {len(store.dropped)} damaged entr"
            f"{'y' if len(store.dropped) == 1 else 'ies'}, left out: {'; '.join(store.dropped)}",
        )
    if state is not None:
        lines = restore(village.world, village.dialogue.memories, state)
        logger.info("continuing the saved game: %d lines remembered (save %d)", lines, state.saves)
    interval = ticks(config.interval_s)
    return Autosave(village.world, village.dialogue.memories, Saver(store), interval)


def _notice(village: Session, message: str) -> None:
    """Tell the player once: on the terminal now, and in the window when it opens."""
    notice(message)
    village.notices.append(message[:1].upper() + message[1:] + ".")
