"""Presentation state handed to the renderer beside the world snapshot.

The game layer builds these each frame; the renderer only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BubbleKind = Literal["line", "chat", "thinking", "fallback"]


@dataclass(frozen=True, slots=True)
class BubbleView:
    """One speech bubble above a speaker. ``alpha`` (0..1) is the fade."""

    speaker_id: int
    text: str
    alpha: float
    streaming: bool = False
    kind: BubbleKind = "line"


@dataclass(frozen=True, slots=True)
class LoadView:
    """Progress of the language model loading in the background."""

    fraction: float
    stage: str
    state: Literal["loading", "ready", "degraded", "off"]


@dataclass(frozen=True, slots=True)
class ChatView:
    """The chat box: open with ``target`` and the text typed so far, or closed with a
    ``notice`` saying why; ``sent`` counts the player's lines in this conversation."""

    target: str
    typed: str
    open: bool
    notice: str = ""
    sent: int = 0


@dataclass(frozen=True, slots=True)
class CheerView:
    """A finished errand being celebrated: who gave it, what it was, how far along (0..1)."""

    giver_id: int
    title: str
    progress: float


@dataclass(frozen=True, slots=True)
class HudView:
    """What the HUD and overlays show this frame."""

    fps: float
    tick_ms: float
    frame_ms: tuple[float, ...] = ()
    show_graph: bool = False
    show_help: bool = False
    paused: bool = False
    mode: str = "off"
    load: LoadView | None = None
    ai_stats: tuple[tuple[str, str], ...] = ()
    chat: ChatView | None = None
    toast: str = ""
    pause_items: tuple[str, ...] = ()
    pause_choice: int = 0
    hint: str = ""
    hint_alpha: float = 0.0
    cheers: tuple[CheerView, ...] = ()
