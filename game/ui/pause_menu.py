"""The pause menu as plain state: which item is chosen, and what choosing it means."""

from __future__ import annotations

from typing import Literal

PauseAction = Literal["resume", "voice", "quit"]
ITEMS: tuple[tuple[str, PauseAction], ...] = (
    ("Resume", "resume"),
    ("Village voice on/off", "voice"),
    ("Quit", "quit"),
)
""""Village voice" swaps the village adapter on or off while the game runs."""


class PauseMenu:
    """Resume, the village voice, or Quit, chosen with the arrow keys and Enter, or by
    clicking."""

    def __init__(self) -> None:
        self.choice = 0

    @property
    def labels(self) -> tuple[str, ...]:
        """The items' labels, top to bottom."""
        return tuple(label for label, _ in ITEMS)

    def reset(self) -> None:
        """Start on Resume each time the game pauses."""
        self.choice = 0

    def move(self, step: int) -> None:
        """Move the highlight up (-1) or down (1), wrapping around."""
        self.choice = (self.choice + step) % len(ITEMS)

    def pick(self, index: int | None = None) -> PauseAction:
        """The action of the highlighted item, or of item ``index`` (a click)."""
        if index is not None:
            self.choice = max(0, min(len(ITEMS) - 1, index))
        return ITEMS[self.choice][1]
