"""The interpreter's switch interval, set while a runtime runs and put back after.

Shorter GIL slices let the main thread back in sooner when a worker is between native
calls (see :class:`~ai.config.RuntimeConfig`). The setting is process-wide: when a
model swap replaces the local runtime, the runtime that leaves hands the value to put
back to the one that takes over, so the setting lasts across the swap.
"""

from __future__ import annotations

import logging
import sys

logger = logging.getLogger(__name__)


class SwitchInterval:
    """Sets ``sys.setswitchinterval`` for one runtime's life; 0 seconds leaves it alone."""

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._saved: float | None = None

    def apply(self) -> None:
        """Remember the interpreter's value and set ours."""
        if self._seconds > 0.0:
            self._saved = sys.getswitchinterval()
            sys.setswitchinterval(self._seconds)

    def restore(self) -> None:
        """Put the remembered value back (once)."""
        if self._saved is not None:
            sys.setswitchinterval(self._saved)
            self._saved = None

    def hand_over(self, successor: SwitchInterval) -> None:
        """Let ``successor`` put the value back instead: it outlives this runtime."""
        if self._saved is not None:
            successor._saved, self._saved = self._saved, None
