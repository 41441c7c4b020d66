"""Incremental stop-string handling for streamed model output.

llama.cpp yields one token at a time, and a stop string may arrive split over
several tokens. :class:`StopFilter` releases text as soon as it cannot be the
start of a stop string, and never releases the stop string itself.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

logger = logging.getLogger(__name__)


class StopFilter:
    """Feed pieces in, get back the text that is safe to show.

    After a stop string is seen, :attr:`stopped` is true and further input is
    ignored. Call :meth:`flush` at the end of generation for held-back text.
    """

    __slots__ = ("_held", "_stops", "stopped")

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._stops = tuple(stop for stop in stops if stop)
        self._held = ""
        self.stopped = False

    def feed(self, piece: str) -> str:
        """Add ``piece``; return the text now known to precede any stop string."""
        if self.stopped:
            return ""
        text = self._held + piece
        cut = -1
        for stop in self._stops:
            index = text.find(stop)
            if index >= 0 and (cut < 0 or index < cut):
                cut = index
        if cut >= 0:
            self.stopped = True
            self._held = ""
            return text[:cut]
        hold = 0
        for stop in self._stops:
            # Longest tail of ``text`` that could still grow into this stop.
            for size in range(min(len(stop) - 1, len(text)), hold, -1):
                if text.endswith(stop[:size]):
                    hold = size
                    break
        if hold:
            self._held = text[-hold:]
            return text[:-hold]
        self._held = ""
        return text

    def flush(self) -> str:
        """Release text held back at the end of generation."""
        held, self._held = self._held, ""
        return "" if self.stopped else held


def with_opener(opener: str, pieces: Iterator[str]) -> Iterator[str]:
    """The opener (already in the prompt) joined to the first piece the model writes.

    Joined rather than sent ahead, so the time to the first piece stays the model's.
    A model that writes nothing still leaves the opener as the line.
    """
    pending = opener
    try:
        for piece in pieces:
            yield pending + piece
            pending = ""
    finally:
        close = getattr(pieces, "close", None)
        if close is not None:
            close()
    if pending:
        yield pending
