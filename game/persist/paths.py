"""Where the save lives on disk, starting a new game beside the old one, and checking
that a path given on the command line can be written."""

from __future__ import annotations

import os
from pathlib import Path

from game.config.loader import ConfigError
from game.persist.lock import lock_save

DATA_DIR_ENV = "ZEROSTALL_DATA_DIR"


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
    lock_save(path).close()  # never while another game has the save open
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{path}{suffix}")
        target = Path(f"{previous}{suffix}")
        if source.exists():
            os.replace(source, target)
        elif target.exists():
            target.unlink()


def check_writable(path: Path) -> None:
    """Fail now, not after a long run, when ``path`` cannot be written. Raises ConfigError."""
    if path.is_dir():
        raise ConfigError(f"cannot write {path}: it is a directory")
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the folder {parent}: {exc.strerror}") from None
    target = path if path.exists() else parent
    if not os.access(target, os.W_OK):
        raise ConfigError(f"cannot write {path}: permission denied")
