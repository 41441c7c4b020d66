"""Speech bubbles as game state: who says what, since which tick, and for how long."""

from __future__ import annotations

from dataclasses import dataclass

from game.ui.views import BubbleKind, BubbleView

_FADE_TICKS = 20


@dataclass(slots=True)
class _Bubble:
    text: str
    shown_tick: int
    ttl_ticks: int
    kind: BubbleKind
    streaming: bool
    read_ticks: int = 0

    def kept(self, tick: int) -> bool:
        """Whether another line must wait: a reply typing in, or one not yet read."""
        if self.streaming:
            return self.kind == "chat"
        return tick - self.shown_tick < self.read_ticks


class BubbleBoard:
    """At most one bubble per speaker; a newer line replaces the older one.

    Except over a chat reply the player is reading: while it types in, and for its
    ``read_ticks`` once finished, any other line (a bark, a farewell, a refusal) waits,
    and goes up when the reply has been read (the newest waiting line, one a speaker).
    Only the reply to the player's next words takes its place at once.

    Lifetimes count in ticks, so headless runs and tests see the same bubbles as a window.
    """

    def __init__(self) -> None:
        self._bubbles: dict[int, _Bubble] = {}
        self._waiting: dict[int, _Bubble] = {}

    def show(
        self,
        speaker_id: int,
        text: str,
        tick: int,
        ttl_ticks: int,
        kind: BubbleKind,
        read_ticks: int = 0,
        reply: bool = False,
    ) -> None:
        """Put up a finished line, or have it wait behind a reply being read.

        ``read_ticks``: how long this line stays up before another may replace it.
        ``reply``: it answers the player's words, so it replaces a reply being read.
        """
        bubble = _Bubble(text, tick, ttl_ticks, kind, False, min(read_ticks, ttl_ticks))
        current = self._bubbles.get(speaker_id)
        if not reply and current is not None and current.kept(tick):
            self._waiting[speaker_id] = bubble
            return
        self._bubbles[speaker_id] = bubble

    def stream(
        self, speaker_id: int, text: str, tick: int, ttl_ticks: int, kind: BubbleKind
    ) -> None:
        """Show or extend a line that is still arriving; its lifetime starts when it ends."""
        bubble = self._bubbles.get(speaker_id)
        if bubble is not None and bubble.streaming:
            bubble.text = text
            bubble.shown_tick = tick
            bubble.kind = kind
            return
        self._bubbles[speaker_id] = _Bubble(text, tick, ttl_ticks, kind, streaming=True)

    def finish(self, speaker_id: int, text: str, tick: int) -> None:
        """Mark a streaming line as complete with its final text."""
        bubble = self._bubbles.get(speaker_id)
        if bubble is not None:
            bubble.text = text
            bubble.streaming = False
            bubble.shown_tick = tick

    def clear_thinking(self, speaker_id: int) -> None:
        """Take down a speaker's "thinking" bubble; one with words in it stays up."""
        bubble = self._bubbles.get(speaker_id)
        if bubble is not None and bubble.kind == "thinking":
            del self._bubbles[speaker_id]

    def waiting_of(self, speaker_id: int) -> str | None:
        """The text of a line waiting behind a reply being read, if any."""
        bubble = self._waiting.get(speaker_id)
        return None if bubble is None else bubble.text

    def text_of(self, speaker_id: int) -> str | None:
        """The text a speaker's bubble shows now, if any."""
        bubble = self._bubbles.get(speaker_id)
        return None if bubble is None else bubble.text

    def is_streaming(self, speaker_id: int) -> bool:
        """Whether a speaker's bubble is still receiving text."""
        bubble = self._bubbles.get(speaker_id)
        return bubble is not None and bubble.streaming

    def expire(self, tick: int) -> None:
        """Put up lines whose reply has been read; drop bubbles whose time is up.

        Streaming bubbles never expire on their own. A waiting line's time starts when
        it goes up.
        """
        for speaker_id, waiting in list(self._waiting.items()):
            current = self._bubbles.get(speaker_id)
            if current is None or not current.kept(tick):
                waiting.shown_tick = tick
                self._bubbles[speaker_id] = waiting
                del self._waiting[speaker_id]
        for speaker_id in [
            sid
            for sid, b in self._bubbles.items()
            if not b.streaming and tick - b.shown_tick >= b.ttl_ticks
        ]:
            del self._bubbles[speaker_id]

    def views(self, tick: int) -> tuple[BubbleView, ...]:
        """Immutable views for the renderer, with the fade-out folded into alpha."""
        out = []
        for speaker_id, b in self._bubbles.items():
            left = b.ttl_ticks - (tick - b.shown_tick)
            alpha = 1.0 if b.streaming else max(0.0, min(1.0, left / _FADE_TICKS))
            out.append(BubbleView(speaker_id, b.text, alpha, b.streaming, b.kind))
        return tuple(out)

    def __len__(self) -> int:
        return len(self._bubbles)
