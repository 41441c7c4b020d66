"""Several candidate lines for one request, judged and narrowed to one, on the worker.

A request with a :class:`CandidatePlan` gets up to ``plan.count`` generations, each from
its own opener. Each is cleaned like any line and judged by :mod:`ai.selection`; when
asked, and when two showable lines need ranking, the model's contrast between the
situation and a neutral prompt is measured for them. A draw for a better line uses only
time the worker would otherwise idle: it starts only while nothing else waits and the
budget leaves room, and stops at the next token when another request arrives. A draw
because nothing drawn could be shown may keep other work waiting, never past its start
deadline. A streamed candidate that put words on screen is the request's last: what
the player read is never typed over. A cancel stops any candidate at the next token,
like any request, and so does a preemption, but for a candidate the request needs (no
line has passed yet) that has begun to decode: it may write up to
:data:`PREEMPT_GRACE_TOKENS` more to end its line, and a line that passes completes the
request. Begun again from scratch, it would cost its prompt and every token again: in
a village game, runs stopped by a preemption had taken 8% of the worker's time, most of
them stopped while they decoded.

The content filter (:mod:`ai.content.screen`) judges each candidate on the way: a
candidate ends at the first piece whose newest word the word list refuses, a finished
line the word list or the semantic layer refuses is an "unfit" candidate, and the
player's words in a chat request are read by the semantic layer before any reply is
drawn ("player_text_unfit" when they fail; not "refused", a server's closed port).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import replace

from ai.backend import Backend, GenerationParams
from ai.config import HygieneConfig
from ai.content.screen import Screen, StreamGate
from ai.events import (
    PLAYER_TEXT_UNFIT,
    AiEvent,
    LineCompleted,
    LineFailed,
    RequestStats,
    TokenStreamed,
)
from ai.hygiene import (
    clean_line,
    clean_partial,
    end_after,
    is_garbage,
    sentence_end,
    sentences_end,
)
from ai.requests import CandidatePlan, Priority, PromptSpec
from ai.scheduler import Ticket
from ai.selection import (
    LineCriteria,
    Verdict,
    judge,
    mentions,
    pick,
    without_self_address,
    words,
)

logger = logging.getLogger(__name__)

# Raw output longer than this many times max_chars is runaway text: stop early.
_RUNAWAY_FACTOR = 4
# The fewest words a line cut back to its first sentences keeps: "Hello, friend!" is a
# greeting; "Ow!" alone is where the draw was meant to go on. A single word that names
# the line's moment stands too: "Hello!" of "Hello! I'm Pip!" at a later meeting.
_KEPT_WORDS = 2
#: How many more tokens a candidate that is decoding may write, once a preemption has
#: come, to end its line: a bark is done in about as many (a third of a second here),
#: the most the work that preempted it waits.
PREEMPT_GRACE_TOKENS = 10


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


class _EndingDraw:
    """The stop check of a candidate the request needs (no line has passed yet).

    A cancel stops it at the next token. A preemption that comes while the worker has
    marked it decoding lets it write up to :data:`PREEMPT_GRACE_TOKENS` more tokens.
    """

    def __init__(self, ticket: Ticket) -> None:
        self._ticket = ticket
        #: Marked as decoding: a preemption does not abort it.
        self.held = False
        #: Tokens written so far, and when the preemption was first seen.
        self.tokens = 0
        self._seen_at: int | None = None
        self._cut = False

    def __call__(self) -> bool:
        reason = self._ticket.cancel_reason
        if reason is None:
            return False
        if reason == "preempted" and self.held:
            if self._seen_at is None:
                self._seen_at = self.tokens
            if self.tokens - self._seen_at < PREEMPT_GRACE_TOKENS:
                return False
        self._cut = True
        return True

    @property
    def ended_line(self) -> bool:
        """Whether it ended its line by itself after a preemption came."""
        return self.held and not self._cut and self._ticket.cancel_reason == "preempted"


class CandidateDraw:
    """Draws and judges candidates for one request at a time; owned by the worker."""

    def __init__(
        self,
        backend: Backend,
        hygiene: HygieneConfig,
        clock: Callable[[], float],
        emit: Callable[[Ticket, AiEvent], None],
        next_deadline: Callable[[Priority], float | None],
        queued: Callable[[], int],
        screen: Screen,
        decoding: Callable[[Ticket, bool], bool],
    ) -> None:
        """``decoding(ticket, on)`` marks the ticket's candidate as decoding (or done)
        under the runtime's lock; False when a preemption or cancel came first."""
        self._backend = backend
        self._decoding = decoding
        self._hygiene = hygiene
        self._screen = screen
        self._clock = clock
        self._emit = emit
        self._next_deadline = next_deadline
        self._queued = queued

    def use_hygiene(self, hygiene: HygieneConfig) -> None:
        """Judge the next request's candidates by ``hygiene`` (live settings)."""
        self._hygiene = hygiene

    def run(
        self,
        ticket: Ticket,
        plan: CandidatePlan,
        params: GenerationParams,
        fitted: PromptSpec | None = None,
    ) -> AiEvent | None:
        """The request's outcome: the best line, or "rejected"; None once it was stopped.

        ``fitted`` is the request's prompt trimmed to the context, when it had to be.
        Raises what the backend raises; the worker turns that into a failed line.
        """
        request = ticket.request
        base_prompt = request.prompt if fitted is None else fitted
        clock = self._clock
        started = clock()
        if plan.temperature is not None:
            params = replace(params, temperature=plan.temperature)
        player_text = base_prompt.player_text
        if player_text and self._screen.reads_meaning and not self._screen.meaning(player_text).ok:
            # The word list passed it on the main thread; its meaning did not pass here.
            logger.info("player text refused for npc %d", request.npc_id)
            return LineFailed(ticket.handle, request, PLAYER_TEXT_UNFIT)
        drawn: list[tuple[Verdict, PromptSpec]] = []
        slowest = 0.0
        tokens = 0
        first_token: float | None = None
        shown = False
        for k in range(max(1, plan.count)):
            passed = any(v.passes for v, _ in drawn)
            # Words on screen are never typed over: a reply that showed some is its only draw.
            if k and (shown or not self._room_for_another(ticket, plan, slowest, passed, k)):
                break
            prompt = base_prompt
            drawn_with = params
            if k and not passed and plan.redraw_temperature is not None:
                drawn_with = replace(params, temperature=plan.redraw_temperature)
            if plan.openers:
                prompt = replace(prompt, opener=plan.openers[k % len(plan.openers)])
            begun = clock()
            # A draw for a better line gives way the moment other work arrives; one the
            # request needs may end its line past a preemption.
            ending = None if passed else _EndingDraw(ticket)
            yields = self._yields(ticket) if ending is None else ending
            gate = self._screen.gate(request.stream)
            raw, count, first = self._generate(
                ticket, prompt, drawn_with, yields, gate, plan, ending
            )
            shown = request.stream and bool(gate.shown)
            past_preemption = ending is not None and ending.ended_line
            if ticket.cancel_reason is not None and not past_preemption:
                return None
            tokens += count
            if first_token is None and count:
                first_token = first
            if gate.refused is not None:
                # Ended at the piece that tripped the filter; nothing of that was shown.
                logger.info("unfit candidate for npc %d: %s", request.npc_id, gate.refused.reason)
                logger.debug("refused text: %r", raw)
                drawn.append((Verdict(gate.shown, ("unfit",), False, None, 0.0), prompt))
                slowest = max(slowest, clock() - begun)
                if past_preemption:
                    return None
                continue
            if ending is None and yields():
                break
            drawn.append((self._judge(raw, prompt, plan, request.stream), prompt))
            slowest = max(slowest, clock() - begun)
            if past_preemption:
                if not drawn[-1][0].passes:
                    return None  # queued again, to start afresh
                break
            if _settled(drawn[-1][0], plan):
                break
        verdicts = self._contrasted(ticket, plan, drawn)
        ended = clock()
        first_at = started if first_token is None else first_token
        decode_s = ended - first_at
        stats = RequestStats(
            queue_wait_s=started - ticket.submitted_at,
            ttft_s=first_at - started,
            tokens=tokens,
            tokens_per_s=(tokens - 1) / decode_s if tokens > 1 and decode_s > 0 else 0.0,
            total_s=ended - ticket.submitted_at,
        )
        best = pick(verdicts)
        if best is None:
            logger.debug("no candidate passed for npc %d: %s", request.npc_id, verdicts)
            wrote = stats if first_token is not None else None
            return LineFailed(ticket.handle, request, "rejected", verdicts, stats=wrote)
        return LineCompleted(ticket.handle, request, best.text, stats, candidates=verdicts)

    def _yields(self, ticket: Ticket) -> Callable[[], bool]:
        queued = self._queued
        return lambda: ticket.should_stop() or queued() > 0

    def _contrasted(
        self, ticket: Ticket, plan: CandidatePlan, drawn: list[tuple[Verdict, PromptSpec]]
    ) -> tuple[Verdict, ...]:
        """The verdicts, with the model's contrast when it has two showable lines to rank.

        Scored only when nothing else waits, and for all showable lines or for none, so
        that lines are ranked on the same terms.
        """
        verdicts = tuple(v for v, _ in drawn)
        showable = [(v, p) for v, p in drawn if v.passes]
        if not plan.contrast or len(showable) < 2:
            return verdicts
        scored: dict[int, Verdict] = {}
        for verdict, prompt in showable:
            if ticket.should_stop() or self._queued() > 0:
                return verdicts
            continuation = _continuation(verdict.text, prompt.opener)
            contrast = self._backend.contrast(prompt, neutral_prompt(prompt), continuation)
            scored[id(verdict)] = judge(verdict.text, plan.criteria, contrast)
        return tuple(scored.get(id(v), v) for v in verdicts)

    def _room_for_another(
        self, ticket: Ticket, plan: CandidatePlan, slowest: float, passed: bool, drawn: int
    ) -> bool:
        """Whether one more candidate fits before the timeout.

        A draw for a better line needs the budget and an idle queue. A draw because no
        line could be shown yet (the alternative is a template line for certain) may
        keep waiting work waiting, up to ``plan.busy_count`` draws, and never past the
        start deadline of any of it.
        """
        finish = self._clock() + slowest
        if finish > ticket.timeout_at:
            return False
        waiting = self._next_deadline(ticket.priority)
        if not passed:
            if 0 < plan.busy_count <= drawn and self._queued() > 0:
                return False
            return waiting is None or finish < waiting
        if plan.budget_s > 0.0 and finish > ticket.submitted_at + plan.budget_s:
            return False
        return waiting is None

    def _generate(
        self,
        ticket: Ticket,
        prompt: PromptSpec,
        params: GenerationParams,
        should_stop: Callable[[], bool],
        gate: StreamGate,
        plan: CandidatePlan,
        ending: _EndingDraw | None = None,
    ) -> tuple[str, int, float]:
        """One candidate's raw text, token count and first-token time; streamed if asked.

        It ends where ``plan.sentence_words`` (and ``answer_words``) say, else at the
        hygiene's sentence limit. For a streamed line, ``gate`` decides what of it may be
        shown, and ends it at the first unfit word. With ``ending``, it is marked as
        decoding from its first token to its end.
        """
        sentence_words = plan.sentence_words
        named = (
            functools.partial(mentions, keywords=plan.answer_words) if plan.answer_words else None
        )

        clock = self._clock
        streams = ticket.request.stream
        runaway = self._hygiene.max_chars * _RUNAWAY_FACTOR
        # A finished line keeps this many sentences: a stream shows no more than that.
        sentences = self._hygiene.max_sentences if streams else 0
        raw = ""
        count = 0
        first = clock()
        stream = self._backend.generate(prompt, params, should_stop)
        try:
            for piece in stream:
                if count == 0:
                    first = clock()
                    if ending is not None:
                        ending.held = self._decoding(ticket, True)
                count += 1
                if ending is not None:
                    ending.tokens = count
                raw += piece
                end = sentence_end(raw, sentence_words, named) if sentence_words else None
                if end is None and sentences:
                    end = sentences_end(raw, sentences)
                if end is not None:
                    piece = piece[: max(0, len(piece) - (len(raw) - end))]
                    raw = raw[:end]
                if streams:
                    # A line that is not streamed is screened once, whole, when judged:
                    # screening each piece would cost the worker a pass of the word list
                    # and its patterns per token, with the GIL held, while the tick runs.
                    shown = gate.shown
                    release = gate.feed(raw, clean_partial(raw, self._hygiene.max_chars))
                    if gate.refused is not None:
                        break
                    if release is not None:
                        new = release[len(shown) :]
                        self._emit(
                            ticket, TokenStreamed(ticket.handle, ticket.request, release, new)
                        )
                if end is not None or len(raw) > runaway:
                    break
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
            if ending is not None and ending.held:
                self._decoding(ticket, False)
        return raw, count, first

    def _judge(self, raw: str, prompt: PromptSpec, plan: CandidatePlan, streamed: bool) -> Verdict:
        hygiene = self._hygiene
        text = clean_line(raw, hygiene)
        opener = prompt.opener
        if opener and text.startswith(opener):
            text = end_after(text, len(opener))
            if not _continuation(text, opener).strip(" .,!?"):
                return Verdict(text, ("opener_only",), False, None, 0.0)
        if is_garbage(text, hygiene.min_letters):
            return Verdict(text, ("garbage",), False, None, 0.0)
        if not self._screen.words(text).ok:
            return Verdict(text, ("unfit",), False, None, 0.0)
        verdict = judge(text, plan.criteria)
        if not verdict.passes and not streamed:
            # A streamed reply's words are on screen already: never cut back after.
            kept = unaddressed(text, plan.criteria) or leading_passes(text, plan.criteria)
            if kept is not None:
                logger.debug("kept %r of %r (%s)", kept.text, text, ", ".join(verdict.faults))
                verdict = kept
        # The semantic layer reads only a line that could otherwise be shown.
        if verdict.passes and not self._screen.line(verdict.text).ok:
            return replace(verdict, faults=("unfit",))
        return verdict


def unaddressed(text: str, criteria: LineCriteria) -> Verdict | None:
    """``text`` without the speaker's own name said to the listener, if the rest passes
    (cut back to its first sound sentences if need be).

    "Morning, blacksmith." from Brann fails as naming its speaker; "Morning." is the
    greeting it began as, and is shown rather than spending another draw on a line that
    may call the traveller by the speaker's name again.
    """
    cut = without_self_address(text, criteria.speaker_names)
    if cut == text or not words(cut):
        return None
    verdict = judge(cut, criteria)
    return verdict if verdict.passes else leading_passes(cut, criteria)


def leading_passes(text: str, criteria: LineCriteria) -> Verdict | None:
    """The longest run of ``text``'s first whole sentences that passes, if one does.

    A small model's line often goes wrong only in its last sentence: "Hello, friend! I'm
    Pip!" to a traveller Pip has met before, "Welcome, friend. The market is still full."
    on a first meeting. What came before stands on its own, so the line is shown without
    the sentence that broke it, rather than spending another draw on a line that may
    fail again. A line whose first sentence is at fault has nothing to keep.
    """
    ends: list[int] = []
    while (end := sentences_end(text, len(ends) + 1)) is not None:
        ends.append(end)
    for end in reversed(ends):
        kept = text[:end].strip()
        if kept == text.strip():
            continue
        if len(words(kept)) < _KEPT_WORDS and not criteria.must_mention:
            continue
        verdict = judge(kept, criteria)
        if verdict.passes:
            return verdict
    return None
