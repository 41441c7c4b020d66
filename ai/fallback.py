"""Where lines come from when the model cannot answer."""

from __future__ import annotations

import logging
from typing import Protocol

from ai.requests import LineRequest

logger = logging.getLogger(__name__)

# Last resort when the game's own fallback source fails: a "thinking" bubble.
LAST_RESORT_LINE = "..."


class FallbackSource(Protocol):
    """Supplies a template line for a request; provided by the game.

    Called only on the main thread, inside ``AiRuntime.submit`` or ``poll``.
    """

    def fallback_line(self, request: LineRequest) -> str:
        """Return a line to show instead of a model line."""
        ...


def safe_fallback_line(source: FallbackSource, request: LineRequest) -> str:
    """Ask ``source`` for a line, never raising and never returning blank text."""
    try:
        text = source.fallback_line(request)
    except Exception:
        # A broken template must not take the game down with it.
        logger.exception("fallback source failed for npc %d", request.npc_id)
        return LAST_RESORT_LINE
    if not isinstance(text, str) or not text.strip():
        return LAST_RESORT_LINE
    return text
