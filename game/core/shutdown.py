"""SIGINT, SIGTERM and SIGHUP as a polite request to stop, not an exception in a tick.

The handlers only set a flag (and run a few registered callbacks, such as telling the
window loop to finish its frame). The loop notices the flag between ticks, so the run ends
with its report written, the bubble log flushed and the model worker joined.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType

logger = logging.getLogger(__name__)

#: SIGHUP too: closing the terminal ends the run as cleanly as Ctrl+C does.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopRequest:
    """A flag that the stop signals set; check it between ticks with ``requested``."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._callbacks: list[Callable[[], None]] = []

    @property
    def requested(self) -> bool:
        """True once a stop signal arrived (or ``request`` was called)."""
        return self.signum is not None

    def install(self) -> None:
        """Route the stop signals here; only possible on the main thread."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._handle)

    def on_stop(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the main thread, from the handler) when a stop arrives."""
        self._callbacks.append(callback)
        if self.requested:
            callback()

    def request(self, signum: int = signal.SIGTERM) -> None:
        """Ask the run to stop, as the signal would."""
        first = self.signum is None
        self.signum = signum
        if first:
            for callback in self._callbacks:
                callback()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        del frame
        self.request(signum)
