"""Chat replies on their way to the screen: watch, stream, cut, and never take words back.

A reply types into its bubble token by token. Between tokens, and on every tick, the
reply's snapshot is held against the live world: the moment the player walks away or
the villager is knocked over, the request is cancelled. A reply that had shown nothing
yet takes its "thinking" bubble down; one the player has started to read keeps its
words and ends with an ellipsis, and so does any reply that cannot finish once words
are up (a failed check, a timeout, a broken model): what the player read stands.
"""

from __future__ import annotations

from collections.abc import Callable

from ai import LineRuntime, TokenStreamed
from game.dialogue.line_source import LineCut, LineEvent, LinePartial, LineReady
from game.dialogue.records import LineKind, LineRecord, LineRecords, LineState
from game.dialogue.validation import Checker

Emit = Callable[[LineEvent], None]

ELLIPSIS = "\u2026"
# Re-render a streaming bubble at most every few tokens: text surfaces are not free.
_STREAM_EVERY = 3
# A pause mark at the end of shown text gives way to the ellipsis ("Charcoal," -> "Charcoal…").
_PAUSE_MARKS = " ,;:-\u2013\u2014"


def unfinished(text: str) -> str:
    """``text`` as a line that stopped where it is: ended with an ellipsis, no word changed.

    A trailing comma or dash becomes the ellipsis; after a whole sentence it follows a
    space ("Charcoal. …").
    """
    text = text.rstrip(_PAUSE_MARKS)
    if text.endswith(ELLIPSIS):
        return text
    if text.endswith((".", "!", "?")):
        return f"{text} {ELLIPSIS}"
    return text + ELLIPSIS


def goes_on_from(text: str, streamed: str) -> bool:
    """Whether a finished ``text`` keeps every word of ``streamed`` (the cleaning of a
    finished line may drop a trailing comma, no more)."""
    return text.startswith(streamed.rstrip(_PAUSE_MARKS))


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
        """A token arrived: cut the reply if it no longer fits, else show the text so far.

        The fit is checked before the first word too: a reply already stale never starts.
        """
        record.tokens += 1
        reason = self._checker.reject(record.snapshot, tick)
        if reason is not None:
            self.cut(record, reason)
            return
        text = event.text_so_far
        if not text or record.ask is None:
            return
        if not text.startswith(record.streamed):
            # The request began again (re-queued after a preemption): its new words would
            # type over the ones the player is reading, so the reply ends here instead.
            self.cut(record, "restarted")
            return
        first = not record.streamed
        record.streamed = text
        # The first words as soon as there are any, then every few tokens.
        if first or record.tokens % _STREAM_EVERY == 0:
            record.state = LineState.STREAMING
            self._emit(LinePartial(record.ask.npc_id, text))

    def speaking(self, npc_id: int) -> bool:
        """Whether a reply of this villager has words on screen and is still arriving."""
        return any(r.streamed and r.npc_id == npc_id for r in self._records.of_kind(LineKind.CHAT))

    def cut(self, record: LineRecord, reason: str) -> None:
        """Stop a reply that no longer fits: cancel it; take down a bubble that showed
        nothing yet, or end the words shown with an ellipsis."""
        self._runtime.cancel(record.handle)
        self._records.remove(record.handle)
        if record.streamed:
            self._emit(self.unfinished(record))
        else:
            self._emit(LineCut(record.npc_id, reason))

    def unfinished(self, record: LineRecord, tier: str = "") -> LineReady:
        """The reply as far as it streamed, ended with an ellipsis: what the player read,
        and so what the villager said (it is shown and remembered like any line)."""
        ask = record.ask
        if ask is None:
            raise ValueError(f"request {record.handle.id} answers no ask")
        snapshot = record.snapshot
        live = self._checker.live(snapshot)
        text = unfinished(record.streamed)
        return LineReady(ask, text, "unfinished", snapshot, live, tier, record.handle.id)
