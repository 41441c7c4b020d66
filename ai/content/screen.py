"""The content filter as the worker applies it to lines being written.

:class:`Screen` binds a :class:`~ai.content.filter.ContentFilter` to the semantic layer's
reader, which the worker opens on its own thread once the model has loaded (a backend
that can read hidden states is a :class:`MeaningSource`); without one, only the word
list applies.

:class:`StreamGate` decides how much of a line still being written may reach the
screen. A word is shown only once it is closed (the next piece has begun) and the word
list has passed it; a piece whose newest word trips the list is never shown and ends
the candidate. When the semantic layer reads the line too, text is held back until a
clause closes (a comma, a full stop) and goes out only once the whole line so far has
passed both layers; text the semantic layer refuses waits for the next clause, read
with all before it, and the tail after the last clause goes out with the finished line,
after its own check. So nothing on screen was ever refused, and nothing shown is taken
back by the filter.
"""

from __future__ import annotations

import logging
import re
from typing import Protocol, runtime_checkable

from ai.content.filter import ContentFilter, ContentVerdict
from ai.content.hidden import HiddenStates

logger = logging.getLogger(__name__)

# The end of text that may be the start of a longer word ("ass" of "assassin").
_OPEN_WORD = re.compile(r"[\w@$*'\u2019!]+$")
# A clause ends at punctuation followed by a space or the end of the text.
_CLAUSE_END = re.compile(r"[,;:.!?\u2026\u2014]+(?=\s|$)")
_CLOSED_TAIL = re.compile(r"[\s,;:.!?\u2026\u2014\"\u201d)\]-]$")


@runtime_checkable
class MeaningSource(Protocol):
    """A backend that can open the semantic layer's reader on its loaded model."""

    def meaning_reader(self, content: ContentFilter) -> HiddenStates | None:
        """The reader for ``content``'s classifier, or None (worker thread, after load)."""
        ...


class Screen:
    """Both layers of the filter for one worker; the semantic one once :meth:`open` ran.

    Worker thread only, like the model it reads.
    """

    def __init__(self, content: ContentFilter) -> None:
        self.content = content
        self._states: HiddenStates | None = None
        self._last: tuple[str, ContentVerdict] | None = None

    def open(self, backend: object) -> None:
        """Open the semantic layer on ``backend``'s loaded model, if it can read one."""
        if not isinstance(backend, MeaningSource):
            return
        try:
            self._states = backend.meaning_reader(self.content)
        except (RuntimeError, ValueError, OSError) as exc:
            logger.warning("content filter: no semantic layer: %s", exc)
            self._states = None
        if self._states is not None:
            logger.info("content filter: semantic layer on, layer %d", self._states.layer)

    def close(self) -> None:
        """Free the reader (before the model it was opened on)."""
        states, self._states = self._states, None
        if states is not None:
            states.close()

    @property
    def reads_meaning(self) -> bool:
        """Whether the semantic layer judges lines here."""
        config = self.content.config
        return (
            self._states is not None
            and config.enabled
            and config.meaning
            and self.content.classifier is not None
        )

    def words(self, text: str) -> ContentVerdict:
        """The word list alone (cheap)."""
        return self.content.check_words(text)

    def line(self, text: str) -> ContentVerdict:
        """Both layers; the same text twice in a row is read once."""
        last = self._last
        if last is not None and last[0] == text:
            return last[1]
        verdict = self.content.check(text, self._states)
        self._last = (text, verdict)
        return verdict

    def meaning(self, text: str) -> ContentVerdict:
        """The semantic layer alone (for player text the word list already passed)."""
        return self.content.check_meaning(text, self._states)

    def gate(self, shows: bool) -> StreamGate:
        """A gate for one candidate; ``shows`` when its text streams to a bubble."""
        return StreamGate(self, shows and self.reads_meaning)


class StreamGate:
    """What of one streamed candidate may be shown; :attr:`refused` once it must end."""

    __slots__ = ("_by_clause", "_passed", "_screen", "refused", "shown")

    def __init__(self, screen: Screen, by_clause: bool) -> None:
        self._screen = screen
        self._by_clause = by_clause
        self._passed = ""
        self.shown = ""
        self.refused: ContentVerdict | None = None

    def feed(self, raw: str, partial: str) -> str | None:
        """The text to show now that ``raw`` has grown, or None to show nothing new.

        ``partial`` is ``raw`` cleaned for a bubble. Sets :attr:`refused` (and returns
        None) when the text so far must not be shown: the candidate ends there.
        """
        if self.refused is not None:
            return None
        closed = partial if _CLOSED_TAIL.search(raw) else _OPEN_WORD.sub("", partial)
        if closed != self._passed:
            # Most pieces close no word: the words checked last time are not read again.
            verdict = self._screen.words(closed)
            if not verdict.ok:
                self.refused = verdict
                return None
            self._passed = closed
        if self._by_clause:
            end = None
            for match in _CLAUSE_END.finditer(closed):
                end = match.end()
            if end is None:
                return None
            closed = closed[:end]
        closed = closed.rstrip()
        if len(closed) <= len(self.shown) or not closed.startswith(self.shown):
            return None
        if self._by_clause and not self._screen.line(closed).ok:
            # Held back, not ended: the line read whole has the last word. The layer
            # learnt from whole lines and misreads a first clause alone ("Charcoal."
            # 0.95, "Charcoal, and good iron from the hills." 0.02), so the text waits
            # for the next clause, and what the finished line's check refuses is never
            # shown.
            return None
        self.shown = closed
        return closed
