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
    chat_input: str | None = None
    chat_target: str = ""
    toast: str = ""
