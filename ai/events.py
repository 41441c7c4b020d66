"""Events the AI runtime hands back to the game, plus small status records.

Every event is a frozen dataclass named in the past tense and carries the
``handle`` and the original ``request`` (with its snapshot), so the game can
validate a line against the live world without keeping its own bookkeeping.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal, TypeAlias

from ai.requests import Handle, LineRequest
from ai.selection import Verdict

logger = logging.getLogger(__name__)

LoadState = Literal["loading", "ready", "degraded"]
SwapState = Literal["idle", "loading", "testing", "warming", "finishing"]


@dataclass(frozen=True, slots=True)
class RequestStats:
    """Timings of one finished request, in seconds (``ttft_s`` from start)."""

    queue_wait_s: float
    ttft_s: float
    tokens: int
    tokens_per_s: float
    total_s: float


@dataclass(frozen=True, slots=True)
class LoadProgress:
    """How far model loading has got; ``error`` is set when degraded.

    ``prompt_style`` names the prompts the loaded model was tuned for ("" for any).
    """

    fraction: float
    stage: str
    state: LoadState
    error: str | None = None
    prompt_style: str = ""


@dataclass(frozen=True, slots=True)
class RequestStarted:
    """The worker began generating for this request.

    A request stopped by a preemption and queued again starts again from scratch:
    ``preempted_s`` is then how long its stopped run had taken, worker time that made no
    line (0 on a first start).
    """

    handle: Handle
    request: LineRequest
    preempted_s: float = 0.0


@dataclass(frozen=True, slots=True)
class TokenStreamed:
    """A piece of text arrived; ``text_so_far`` is lightly cleaned, UI only."""

    handle: Handle
    request: LineRequest
    text_so_far: str
    piece: str


@dataclass(frozen=True, slots=True)
class LineCompleted:
    """The finished, cleaned line; the only event game logic should act on.

    ``tier`` names the tier that wrote it ("" from a lone runtime, set by the router).
    ``candidates`` holds every candidate judged for a request with a candidate plan;
    ``scores`` the log-probabilities of the option and tail picked for a closed choice.
    """

    handle: Handle
    request: LineRequest
    text: str
    stats: RequestStats
    tier: str = ""
    candidates: tuple[Verdict, ...] = ()
    scores: tuple[float, ...] = ()


PLAYER_TEXT_UNFIT = "player_text_unfit"
"""The failure of a chat request whose player's words the content filter refused: a
content decision, never the tier's fault (unlike "refused", a server's closed port)."""


@dataclass(frozen=True, slots=True)
class LineFailed:
    """Generation failed or its output was rejected; a fallback follows.

    ``retry_after_s`` is how long the server asked to be left alone (0: it did not say).
    ``stats`` holds the timings of the candidates the model wrote, when it wrote some.
    """

    handle: Handle
    request: LineRequest
    reason: str
    candidates: tuple[Verdict, ...] = ()
    retry_after_s: float = 0.0
    stats: RequestStats | None = None


@dataclass(frozen=True, slots=True)
class RequestCancelled:
    """The request stopped early: by the caller, preemption, or shutdown."""

    handle: Handle
    request: LineRequest
    reason: str


@dataclass(frozen=True, slots=True)
class RequestTimedOut:
    """The request exceeded its ``timeout_s``; a fallback follows."""

    handle: Handle
    request: LineRequest


@dataclass(frozen=True, slots=True)
class RequestDropped:
    """The request never ran: "evicted", "deadline", "rate_limited", "shutdown"."""

    handle: Handle
    request: LineRequest
    reason: str


@dataclass(frozen=True, slots=True)
class FallbackUsed:
    """A template line from the game's fallback source stands in for the model."""

    handle: Handle
    request: LineRequest
    text: str
    reason: str


AiEvent: TypeAlias = (
    RequestStarted
    | TokenStreamed
    | LineCompleted
    | LineFailed
    | RequestCancelled
    | RequestTimedOut
    | RequestDropped
    | FallbackUsed
)

# The events that end a request; exactly one reaches the caller per request.
TerminalEvent: TypeAlias = (
    LineCompleted | LineFailed | RequestCancelled | RequestTimedOut | RequestDropped
)
TERMINAL_EVENTS = (LineCompleted, LineFailed, RequestCancelled, RequestTimedOut, RequestDropped)


@dataclass(frozen=True, slots=True)
class ModelSwapped:
    """A new local model writes every line from now on, and the old one is freed.

    Build prompts in ``prompt_style`` from now on (``load_progress()`` says the same);
    ``moved`` requests were still queued and went over to the new model.
    """

    name: str
    prompt_style: str
    seconds: float
    moved: int


@dataclass(frozen=True, slots=True)
class SwapRefused:
    """The model asked for could not take over; the current one serves on untouched.

    ``reason`` is one sentence for the player (the log says the same, once).
    """

    name: str
    reason: str


#: How a model swap ended, from ``swap_events()``; these carry no request.
SwapEvent: TypeAlias = ModelSwapped | SwapRefused


@dataclass(frozen=True, slots=True)
class SwapProgress:
    """How far a model swap has got, for the HUD; ``state`` is "idle" when none runs.

    ``name`` is the model being brought up; ``stage`` says what it is doing.
    """

    state: SwapState
    name: str = ""
    fraction: float = 0.0
    stage: str = ""


def needs_fallback(event: TerminalEvent) -> bool:
    """Whether a ``FallbackUsed`` follows this terminal event (see ``ai.line_runtime``)."""
    if isinstance(event, LineCompleted):
        return False
    return not (isinstance(event, RequestCancelled) and event.reason == "cancelled")


def failure_reason(event: TerminalEvent) -> str | None:
    """Why a request failed, for a tier's figures and breaker; None if it did not fail."""
    if isinstance(event, LineFailed):
        return event.reason
    if isinstance(event, RequestTimedOut):
        return "timeout"
    if isinstance(event, RequestDropped) and event.reason == "deadline":
        return "deadline"
    return None
