"""Several candidate lines for one request, judged and narrowed to one, on the worker.

A request with a :class:`CandidatePlan` gets up to ``plan.count`` generations, each from
its own opener. Each is cleaned like any line, judged by :mod:`ai.selection` and, when
asked, scored by the model's contrast between the situation and a neutral prompt. A new
candidate starts only while the request's budget and timeout leave room for one more
and no request of the same or higher priority is waiting, so candidates for a better
line never hold up another line (both bind once a candidate could be shown: until then,
another draw beats a certain template line while the timeout allows it). A cancel or a
preemption stops them at the next token like any request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from ai.backend import Backend, GenerationParams
from ai.config import HygieneConfig
from ai.events import AiEvent, LineCompleted, LineFailed, RequestStats, TokenStreamed
from ai.hygiene import clean_line, clean_partial, end_after, find_blocked, is_garbage
from ai.requests import CandidatePlan, Priority, PromptSpec
from ai.scheduler import Ticket
from ai.selection import Verdict, judge, pick

logger = logging.getLogger(__name__)

# Raw output longer than this many times max_chars is runaway text: stop early.
_RUNAWAY_FACTOR = 4


def neutral_prompt(prompt: PromptSpec) -> PromptSpec:
    """The same speaker and opener with no situation, notes, history or player words."""
    return replace(prompt, situation="", notes=(), history=(), player_text="")


def _continuation(text: str, opener: str) -> str:
    """What the model wrote after the opener, as shown."""
    return text[len(opener) :] if opener and text.startswith(opener) else text


def _settled(verdict: Verdict, plan: CandidatePlan) -> bool:
    if plan.settle == "first_pass":
        return verdict.passes
    if plan.settle == "first_good":
        return verdict.good
    return False


class CandidateDraw:
    """Draws and judges candidates for one request at a time; owned by the worker."""

    def __init__(
        self,
        backend: Backend,
        hygiene: HygieneConfig,
        clock: Callable[[], float],
        emit: Callable[[Ticket, AiEvent], None],
        others_waiting: Callable[[Priority], bool],
    ) -> None:
        self._backend = backend
        self._hygiene = hygiene
        self._clock = clock
        self._emit = emit
        self._others_waiting = others_waiting

    def run(self, ticket: Ticket, plan: CandidatePlan, params: GenerationParams) -> AiEvent | None:
        """The request's outcome: the best line, or "rejected"; None once it was stopped.

        Raises what the backend raises; the worker turns that into a failed line.
        """
        request = ticket.request
        clock = self._clock
        started = clock()
        if plan.temperature is not None:
            params = replace(params, temperature=plan.temperature)
        verdicts: list[Verdict] = []
        slowest = 0.0
        tokens = 0
        first_token: float | None = None
        for k in range(max(1, plan.count)):
            passed = any(v.passes for v in verdicts)
            if k and not self._room_for_another(ticket, plan, slowest, passed):
                break
            prompt = request.prompt
            if plan.openers:
                prompt = replace(prompt, opener=plan.openers[k % len(plan.openers)])
            begun = clock()
            raw, count, first = self._generate(ticket, prompt, params)
            if ticket.cancel_reason is not None:
                return None
            tokens += count
            if first_token is None and count:
                first_token = first
            verdicts.append(self._judge(raw, prompt, plan))
            slowest = max(slowest, clock() - begun)
            if _settled(verdicts[-1], plan):
                break
        ended = clock()
        best = pick(verdicts)
        if best is None:
            logger.debug("no candidate passed for npc %d: %s", request.npc_id, verdicts)
            return LineFailed(ticket.handle, request, "rejected", tuple(verdicts))
        first_at = started if first_token is None else first_token
        decode_s = ended - first_at
        stats = RequestStats(
            queue_wait_s=started - ticket.submitted_at,
            ttft_s=first_at - started,
            tokens=tokens,
            tokens_per_s=(tokens - 1) / decode_s if tokens > 1 and decode_s > 0 else 0.0,
            total_s=ended - ticket.submitted_at,
        )
        return LineCompleted(ticket.handle, request, best.text, stats, tuple(verdicts))

    def _room_for_another(
        self, ticket: Ticket, plan: CandidatePlan, slowest: float, passed: bool
    ) -> bool:
        """Whether one more candidate fits.

        The budget and waiting work bind once a candidate could be shown: until then the
        alternative is a template line for certain, so one more draw is worth the wait.
        """
        finish = self._clock() + slowest
        if finish > ticket.timeout_at:
            return False
        if not passed:
            return True
        if plan.budget_s > 0.0 and finish > ticket.submitted_at + plan.budget_s:
            return False
        return not self._others_waiting(ticket.priority)

    def _generate(
        self, ticket: Ticket, prompt: PromptSpec, params: GenerationParams
    ) -> tuple[str, int, float]:
        """One candidate's raw text, token count and first-token time; streamed if asked."""
        clock = self._clock
        streams = ticket.request.stream
        runaway = self._hygiene.max_chars * _RUNAWAY_FACTOR
        raw = ""
        count = 0
        first = clock()
        stream = self._backend.generate(prompt, params, ticket.should_stop)
        try:
            for piece in stream:
                if count == 0:
                    first = clock()
                count += 1
                raw += piece
                if streams:
                    partial = clean_partial(raw, self._hygiene.max_chars)
                    self._emit(ticket, TokenStreamed(ticket.handle, ticket.request, partial, piece))
                if len(raw) > runaway:
                    break
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        return raw, count, first

    def _judge(self, raw: str, prompt: PromptSpec, plan: CandidatePlan) -> Verdict:
        hygiene = self._hygiene
        text = clean_line(raw, hygiene)
        opener = prompt.opener
        if opener and text.startswith(opener):
            text = end_after(text, len(opener))
            if not _continuation(text, opener).strip(" .,!?"):
                return Verdict(text, ("opener_only",), False, None, 0.0)
        if is_garbage(text, hygiene.min_letters):
            return Verdict(text, ("garbage",), False, None, 0.0)
        if find_blocked(text, hygiene.blocklist) is not None:
            return Verdict(text, ("blocked",), False, None, 0.0)
        verdict = judge(text, plan.criteria)
        if not plan.contrast or not verdict.passes:
            return verdict  # a line that cannot be shown is not worth scoring
        continuation = _continuation(text, prompt.opener)
        contrast = self._backend.contrast(prompt, neutral_prompt(prompt), continuation)
        return judge(text, plan.criteria, contrast)
