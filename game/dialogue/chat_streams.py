"""Chat replies on their way to the screen: watch, stream, cut.

A reply types into its bubble token by token. Between tokens, and on every tick, the
reply's snapshot is held against the live world: the moment the player walks away or
the villager is knocked over, the request is cancelled and the bubble comes down.
"""

from __future__ import annotations

from collections.abc import Callable

from ai import LineRuntime, TokenStreamed
from game.dialogue.line_source import LineCut, LineEvent, LinePartial
from game.dialogue.records import LineKind, LineRecord, LineRecords, LineState
from game.dialogue.validation import Checker

Emit = Callable[[LineEvent], None]

# Re-render a streaming bubble at most every few tokens: text surfaces are not free.
_STREAM_EVERY = 3


class ChatStreams:
    """Streams every chat reply in the record table, and cuts those that stop fitting."""

    def __init__(
        self, runtime: LineRuntime, records: LineRecords, checker: Checker, emit: Emit
    ) -> None:
        self._runtime = runtime
        self._records = records
        self._checker = checker
        self._emit = emit

    def watch(self, tick: int) -> None:
        """Cut a reply the moment it stops fitting, even between tokens."""
        for record in self._records.of_kind(LineKind.CHAT):
            reason = self._checker.reject(record.snapshot, tick)
            if reason is not None:
                self.cut(record, reason)

    def stream(self, record: LineRecord, event: TokenStreamed, tick: int) -> None:
        """A token arrived: cut the reply if it no longer fits, else show the text so far."""
        record.tokens += 1
        reason = self._checker.reject(record.snapshot, tick)
        if reason is not None:
            self.cut(record, reason)
        elif (
            event.text_so_far
            and record.ask
            # The first words as soon as there are any, then every few tokens.
            and (record.state is not LineState.STREAMING or record.tokens % _STREAM_EVERY == 0)
        ):
            record.state = LineState.STREAMING
            self._emit(LinePartial(record.ask.npc_id, event.text_so_far))

    def cut(self, record: LineRecord, reason: str) -> None:
        """Stop a reply that no longer fits: cancel it and take its bubble down."""
        self._runtime.cancel(record.handle)
        self._records.remove(record.handle)
        self._emit(LineCut(record.npc_id, reason))
