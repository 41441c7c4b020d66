"""llama.cpp's own log, routed into Python's logging at the level it was written at.

llama-cpp-python's callback reads ggml's log levels with an older numbering (INFO 1,
WARN 2, ERROR 3), so every warning llama.cpp writes (the LoRA adapter's "cannot use
buft 'CPU_REPACK', fallback to CPU" for each of 26 tensors, the sliding-window cache
note) reaches the terminal as an error, ``verbose=False`` or not. ggml numbers them
DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5 (continue the last message). Here its debug,
info, warning and error lines all go to the ``llama.cpp`` logger at DEBUG: they are
notes on how the library runs, nothing a player can act on. Its commonest error is a
decode the worker aborted on purpose ("graph_compute ... failed with error 1", three
lines at every cancel), and a model that fails to load is reported by the backend in
one message of its own.

:func:`open_llama` also keeps llama-cpp-python from silencing the whole process while a
model loads: with ``verbose=False`` it points file descriptors 1 and 2 at /dev/null for
the length of the load, so every line any other thread wrote meanwhile was lost (the
window's "first frame" log, a warning from the game during a hot swap).
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import logging
from typing import Any

logger = logging.getLogger("llama.cpp")

_GGML_CONT = 5
_state = {"level": logging.DEBUG}
_installed: list[Any] = []  # the ctypes callback, kept alive for as long as llama.cpp may call it


def python_level(ggml_level: int, last: int) -> int:
    """The logging level for a message at ``ggml_level``; ``last`` for a continuation."""
    return last if ggml_level == _GGML_CONT else logging.DEBUG


def _write(ggml_level: int, text: bytes | None, _user: Any) -> None:
    level = python_level(ggml_level, _state["level"])
    _state["level"] = level
    message = (text or b"").decode("utf-8", errors="replace").strip()
    if message:
        logger.log(level, "%s", message)


def route_llama_logs(llama_cpp: Any) -> None:
    """Send llama.cpp's log to :data:`logger` from now on (once per process)."""
    if _installed:
        return
    callback = llama_cpp.llama_log_callback(_write)
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
    _installed.append(callback)


def open_llama(llama_class: Any, **kwargs: Any) -> Any:
    """``llama_class(**kwargs)``, its chatter logged at DEBUG instead of silenced.

    Built with ``verbose=True``, so that no file descriptor is redirected; what it prints
    itself while loading (the system info) goes to a buffer and then to the log, and the
    object is then made quiet for every later call. The log handlers keep the stream they
    were made with, so other threads' logging is untouched meanwhile.
    """
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        llm = llama_class(verbose=True, **kwargs)
    llm.verbose = False
    for line in printed.getvalue().splitlines():
        if line.strip():
            logger.debug("%s", line.strip())
    return llm
