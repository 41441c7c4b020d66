"""Stop a llama.cpp decode in the middle, at no cost to a decode that is not stopped.

``llama_set_abort_callback`` takes a C function that llama.cpp calls between the nodes of
every compute graph, hundreds of times per token. A Python callback there would take the
GIL each time, competing with the game's main thread for it while the model works. So
the callback is the C library's own ``strlen``, pointed at a two-byte buffer: it returns
0 while the buffer reads ``"\\0"`` and 1 once :meth:`AbortSwitch.set` writes ``"\\1"``.
That runs natively without the GIL, costs nanoseconds per call, and the flag is one
byte that any thread may write (``bool`` and ``size_t`` results share the low byte of the
return register on x86-64 and arm64; the value is 0 or 1, so nothing is lost).

When no C library can be found, a Python callback is used instead; the README gives
what each costs the game's tick.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
from typing import Any

logger = logging.getLogger(__name__)


def _c_strlen() -> Any | None:
    """The C library's ``strlen``, or None when it cannot be found."""
    names = ["msvcrt"] if sys.platform == "win32" else [None, ctypes.util.find_library("c")]
    for name in names:
        try:
            return ctypes.CDLL(name).strlen
        except (OSError, AttributeError, TypeError):
            continue
    return None


class AbortSwitch:
    """A one-byte flag that llama.cpp checks during every decode.

    ``set`` may be called from any thread; ``clear`` by the thread that owns the model,
    before it starts the next piece of work.
    """

    def __init__(self) -> None:
        self._flag = ctypes.create_string_buffer(2)
        self._callbacks: list[Any] = []  # kept alive as long as a context may call one
        self.native = False

    @property
    def is_set(self) -> bool:
        """True while a decode would be aborted."""
        return self._flag.raw[0] != 0

    def set(self) -> None:
        """Make the decode in progress (and any later one) stop at its next graph node."""
        self._flag[0] = b"\x01"

    def clear(self) -> None:
        """Let decodes run again."""
        self._flag[0] = b"\x00"

    def install(self, llama_cpp: Any, ctx: Any, native: bool = True) -> None:
        """Attach the switch to a llama.cpp context (a ``llama_context_p``); one switch
        may serve several contexts.

        ``native=False`` forces the Python callback, for measuring what it costs.
        """
        strlen = _c_strlen() if native else None
        if strlen is not None:
            callback = ctypes.cast(strlen, llama_cpp.ggml_abort_callback)
            self.native = True
        else:
            flag = self._flag

            def aborted(data: Any) -> bool:
                del data
                return flag.raw[0] != 0

            callback = llama_cpp.ggml_abort_callback(aborted)
            self.native = False
        # Every context the switch is on keeps calling its callback: keep them all alive.
        self._callbacks.append(callback)
        llama_cpp.llama_set_abort_callback(ctx, callback, ctypes.cast(self._flag, ctypes.c_void_p))
        logger.debug("abort switch installed (%s)", "native" if self.native else "python")
