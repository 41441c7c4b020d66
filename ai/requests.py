"""Immutable request types that the game hands to the AI runtime.

They cross from the main thread to the worker thread, so they are frozen and
hold only immutable data; the ``snapshot`` is opaque here and is carried back
untouched on every event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Literal

from ai.selection import LineCriteria

logger = logging.getLogger(__name__)

Settle = Literal["first_pass", "first_good", "best"]


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
    per-request parts after it should stay short. ``conversation`` marks a reply to
    the player: a backend may keep such prompts in a cache of their own.
    """

    context: str
    speaker: str
    situation: str
    notes: tuple[str, ...] = ()
    history: tuple[Exchange, ...] = ()
    player_text: str = ""
    opener: str = ""
    conversation: bool = False


@dataclass(frozen=True, slots=True)
class CandidatePlan:
    """How many candidate lines to draw for a request, and how to choose one.

    Candidate ``k`` starts from ``openers[k % len(openers)]`` (none if empty). ``settle``
    says when to stop drawing: at the first candidate that passes ("first_pass"), the
    first good one, on topic and not made less likely by the situation ("first_good"),
    or never ("best": all that time allows); the best one drawn is kept. ``contrast``
    asks the backend for its contrastive score of each candidate; ``temperature``, when
    set, replaces the configured one for these candidates, and ``redraw_temperature``
    for a draw after one that failed its checks (sampled as cool, a small model often
    writes the same failing line again). ``sentence_words``, when
    above 0, ends each candidate at the first sentence end that closes at least that
    many words, instead of the hygiene's sentence limit; with ``answer_words`` too, at the
    first such end by which the line has used one of them (an answer that has given the
    fact asked for), else at the hygiene's limit. No new candidate
    starts later than ``budget_s`` after submit (0: only the request's timeout limits
    it), nor while a request of the same or higher priority is waiting. ``busy_count``,
    when above 0, is the most candidates drawn while any other request waits: the draws
    beyond it, for a line nothing drawn so far could show, use only idle time. When no
    candidate passes, the request fails as "rejected" and the fallback line stands in.
    """

    criteria: LineCriteria
    openers: tuple[str, ...] = ()
    count: int = 1
    settle: Settle = "first_good"
    contrast: bool = False
    budget_s: float = 0.0
    temperature: float | None = None
    sentence_words: int = 0
    answer_words: tuple[str, ...] = ()
    redraw_temperature: float | None = None
    busy_count: int = 0


PlanSource = CandidatePlan | Callable[[], CandidatePlan]
"""A candidate plan, or a function that makes one (see :class:`LineRequest`)."""


def make_plan(source: PlanSource) -> CandidatePlan:
    """The plan ``source`` is or makes."""
    return source if isinstance(source, CandidatePlan) else source()


@dataclass(frozen=True, slots=True)
class Choice:
    """Choose among closed options by the model's likelihood, instead of writing text.

    The backend picks the option it finds likeliest to follow the prompt, then the
    likeliest of ``tails`` after it. The answer is the winner and its tail, verbatim:
    nothing is sampled, so it is always one of the options.
    """

    options: tuple[str, ...]
    tails: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LineRequest:
    """A request for one spoken line.

    ``deadline_s``: the request must start generating within this many seconds
    of submit, else it is dropped. ``timeout_s``: the whole wall budget after
    submit; past it the request is cancelled and answered with a fallback.
    ``stream``: send a ``TokenStreamed`` event per token, for a line that types
    into its bubble (chat). Other lines arrive whole and cost no event per token.
    ``value``: what the line is worth per second of worker time, as the caller
    judges it; within a priority the most valuable request runs first (and the
    least valuable is evicted first). Requests of equal value run oldest first.
    ``plan`` may be given as a function that makes it: the word lists of its checks
    take the game's thread a tenth of a millisecond or more to gather, and only the
    worker reads them, so the worker makes the plan (:func:`make_plan`) as the request
    starts. Such a function must read only data that nobody changes once it is built.
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
    plan: PlanSource | None = None
    choice: Choice | None = None
    value: float = 0.0

    def read_ahead(self) -> LineRequest:
        """This request cut down to reading its prompt into the model's cache.

        One token, no candidates, nothing streamed, and a signature of its own so it
        never merges with the request itself.
        """
        return replace(
            self,
            signature=f"prefill:{self.signature}",
            max_tokens=1,
            stream=False,
            plan=None,
            choice=None,
        )


@dataclass(frozen=True, slots=True)
class Handle:
    """Identifies one submitted request; hashable, cheap to compare."""

    id: int
