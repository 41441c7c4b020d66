"""The pause menu as plain state: which item is chosen, and what choosing it means."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from game.dialogue.line_source import ModelChoice

PauseAction = Literal["resume", "voice", "model", "quit"]
ITEMS: tuple[tuple[str, PauseAction], ...] = (
    ("Resume", "resume"),
    ("Village voice on/off", "voice"),
    ("Quit", "quit"),
)
""""Village voice" swaps the village adapter on or off while the game runs. Each GGUF in
the models folder comes between it and Quit, as "Model: <file>"; choosing one swaps it
in while the game runs."""

MODELS_LISTED = 6
"""At most this many models are listed (by name), so the menu fits the window."""


@dataclass(frozen=True)
class PauseItem:
    """One line of the menu: its label, its action, and the model it names, if any."""

    label: str
    action: PauseAction
    model: Path | None = None


class PauseMenu:
    """Resume, the village voice, the models, or Quit, chosen with the arrow keys and
    Enter, or by clicking."""

    def __init__(self) -> None:
        self.choice = 0
        self._items = _items(())

    @property
    def labels(self) -> tuple[str, ...]:
        """The items' labels, top to bottom."""
        return tuple(item.label for item in self._items)

    def reset(self, models: Sequence[ModelChoice] = ()) -> None:
        """Start on Resume each time the game pauses, with the models found then."""
        self.choice = 0
        self._items = _items(models)

    def move(self, step: int) -> None:
        """Move the highlight up (-1) or down (1), wrapping around."""
        self.choice = (self.choice + step) % len(self._items)

    def pick(self, index: int | None = None) -> PauseItem:
        """The highlighted item, or item ``index`` (a click)."""
        if index is not None:
            self.choice = max(0, min(len(self._items) - 1, index))
        return self._items[self.choice]


def _items(models: Sequence[ModelChoice]) -> tuple[PauseItem, ...]:
    head = [PauseItem(label, action) for label, action in ITEMS[:-1]]
    listed = [
        PauseItem(f"Model: {m.path.name}{' (speaking)' if m.serving else ''}", "model", m.path)
        for m in models[:MODELS_LISTED]
    ]
    label, action = ITEMS[-1]
    return (*head, *listed, PauseItem(label, action))
