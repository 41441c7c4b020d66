"""Which speech bubbles to show: at most two per patch of screen, the rest fade out, and a
speaker off screen gets a marker at the edge instead of a bubble."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from game.ui.views import BubbleView

AREA = (200.0, 150.0)
"""Bubbles whose speakers stand closer than this (screen px, x and y) share an area."""
PER_AREA = 2
FADE_S = 0.4

Point = tuple[float, float]
Marker = tuple[str, float, float]


class BubbleCrowd:
    """Remembers when each bubble first showed, so the newest ones win a crowded area."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[str, float]] = {}
        self._hidden: dict[int, float] = {}

    def select(
        self,
        bubbles: Sequence[BubbleView],
        anchors: Mapping[int, Point],
        offscreen: Mapping[int, tuple[str, float, float]],
        now: float,
    ) -> tuple[list[BubbleView], list[Marker]]:
        """The bubbles to draw (faded where crowded out), and the edge markers to draw."""
        markers: list[Marker] = []
        live: list[BubbleView] = []
        for bubble in bubbles:
            seen = self._seen.get(bubble.speaker_id)
            if seen is None or seen[0] != bubble.text and not bubble.streaming:
                self._seen[bubble.speaker_id] = (bubble.text, now)
            if bubble.speaker_id in offscreen and bubble.alpha > 0.05:
                markers.append(offscreen[bubble.speaker_id])
            elif bubble.speaker_id in anchors:
                live.append(bubble)
        speakers = {b.speaker_id for b in bubbles}
        for gone in [s for s in self._seen if s not in speakers]:
            del self._seen[gone]
            self._hidden.pop(gone, None)
        # The player's own conversation first, then the newest lines.
        ranked = sorted(
            live, key=lambda b: (b.kind != "chat", -self._seen[b.speaker_id][1], b.speaker_id)
        )
        kept: list[Point] = []
        alpha: dict[int, float] = {}
        for bubble in ranked:
            ax, ay = anchors[bubble.speaker_id]
            near = sum(1 for kx, ky in kept if abs(kx - ax) < AREA[0] and abs(ky - ay) < AREA[1])
            if near < PER_AREA:
                kept.append((ax, ay))
                self._hidden.pop(bubble.speaker_id, None)
                alpha[bubble.speaker_id] = bubble.alpha
            else:
                since = self._hidden.setdefault(bubble.speaker_id, now)
                alpha[bubble.speaker_id] = bubble.alpha * max(0.0, 1.0 - (now - since) / FADE_S)
        shown = [
            b
            if alpha[b.speaker_id] == b.alpha
            else dataclasses.replace(b, alpha=alpha[b.speaker_id])
            for b in live
            if alpha[b.speaker_id] > 0.01
        ]
        return shown, markers
