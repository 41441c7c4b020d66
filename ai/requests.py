"""Immutable request types that the game hands to the AI runtime.

They cross from the main thread to the worker thread, so they are frozen and
hold only immutable data; the ``snapshot`` is opaque here and is carried back
untouched on every event.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import IntEnum

logger = logging.getLogger(__name__)


class Priority(IntEnum):
    """Scheduling class of a request; a higher value runs first."""

    AMBIENT = 0
    PREDICTIVE = 1
    REACTIVE = 2
    PLAYER_CHAT = 3


@dataclass(frozen=True, slots=True)
class Exchange:
    """One line of conversation history that was actually shown."""

    speaker: str
    text: str


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """What to ask the model, split by how stable each part is.

    ``context`` is long and identical across many requests (world blurb, cast,
    examples). It always goes first so llama.cpp can reuse its KV cache; the
    per-request parts after it should stay short.
    """

    context: str
    speaker: str
    situation: str
    notes: tuple[str, ...] = ()
    history: tuple[Exchange, ...] = ()
    player_text: str = ""


@dataclass(frozen=True, slots=True)
class LineRequest:
    """A request for one spoken line.

    ``deadline_s``: the request must start generating within this many seconds
    of submit, else it is dropped. ``timeout_s``: the whole wall budget after
    submit; past it the request is cancelled and answered with a fallback.
    ``stream``: send a ``TokenStreamed`` event per token, for a line that types
    into its bubble (chat). Other lines arrive whole and cost no event per token.
    """

    npc_id: int
    priority: Priority
    signature: str
    prompt: PromptSpec
    snapshot: object
    deadline_s: float
    timeout_s: float
    max_tokens: int | None = None
    stream: bool = False


@dataclass(frozen=True, slots=True)
class Handle:
    """Identifies one submitted request; hashable, cheap to compare."""

    id: int
