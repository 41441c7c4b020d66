"""One game per save: an advisory lock file beside the save, held while it is open."""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import IO


class SaveInUseError(OSError):
    """Another running game holds this save; the message is meant for a human."""


def lock_save(path: Path) -> IO[bytes]:
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
