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


class BubbleBoard:
    """At most one bubble per speaker; a newer line replaces the older one.

    Lifetimes count in ticks, so headless runs and tests see the same bubbles as a window.
    """

    def __init__(self) -> None:
        self._bubbles: dict[int, _Bubble] = {}

    def show(self, speaker_id: int, text: str, tick: int, ttl_ticks: int, kind: BubbleKind) -> None:
        """Put up a finished line."""
        self._bubbles[speaker_id] = _Bubble(text, tick, ttl_ticks, kind, streaming=False)

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

    def text_of(self, speaker_id: int) -> str | None:
        """The text a speaker's bubble shows now, if any."""
        bubble = self._bubbles.get(speaker_id)
        return None if bubble is None else bubble.text

    def is_streaming(self, speaker_id: int) -> bool:
        """Whether a speaker's bubble is still receiving text."""
        bubble = self._bubbles.get(speaker_id)
        return bubble is not None and bubble.streaming

    def expire(self, tick: int) -> None:
        """Drop bubbles whose time is up. Streaming bubbles never expire on their own."""
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
