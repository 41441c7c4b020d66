"""Requests a runtime runs only to fill its model's cache; the caller never sees them.

A warm-up reads the shared prompt prefix once, at start, so the first real line does
not pay for reading it. A read-ahead (``prefill``) reads a reply's prompt while the
player is still typing: when they send the line, the prompt is already read and the
reply starts at once. Only the newest read-ahead matters, so an earlier one still
queued is cancelled; one already running is left to finish, since the newer prompt
shares most of what it reads. Main thread only.
"""

from __future__ import annotations

import logging

from ai.events import TERMINAL_EVENTS, AiEvent
from ai.requests import Handle

logger = logging.getLogger(__name__)


class CacheFills:
    """One runtime's warm-ups and read-aheads that have not ended, by handle id."""

    def __init__(self) -> None:
        self._warm_ups: set[int] = set()
        self._read_aheads: set[int] = set()

    def __bool__(self) -> bool:
        return bool(self._warm_ups or self._read_aheads)

    @property
    def warming(self) -> bool:
        """Whether a warm-up has not ended yet."""
        return bool(self._warm_ups)

    def add_warm_up(self, handle: Handle) -> None:
        """``handle`` is a warm-up: hide its events."""
        self._warm_ups.add(handle.id)

    def add_read_ahead(self, handle: Handle) -> None:
        """``handle`` is a read-ahead: hide its events."""
        self._read_aheads.add(handle.id)

    def read_aheads(self) -> list[Handle]:
        """The read-aheads that have not ended."""
        return [Handle(handle_id) for handle_id in self._read_aheads]

    def drop_from(self, events: list[AiEvent]) -> list[AiEvent]:
        """``events`` less those of warm-ups and read-aheads, each forgotten once it ends."""
        hidden = self._warm_ups | self._read_aheads
        ended = {e.handle.id for e in events if isinstance(e, TERMINAL_EVENTS)}
        self._warm_ups -= ended
        self._read_aheads -= ended
        return [e for e in events if e.handle.id not in hidden]
