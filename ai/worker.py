"""The one thread that owns the backend.

It loads the model, then takes requests from the scheduler and streams their
events into an outbox ``deque`` that the main thread drains in ``poll``.
It never calls game code and never calls the fallback source: everything it
produces is an immutable event. Per-token work is kept small because every
Python bytecode it runs competes with the game loop for the GIL.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace

from ai.backend import (
    Backend,
    GenerationError,
    GenerationParams,
    ModelLoadError,
    ServerBackend,
)
from ai.candidates import CandidateDraw
from ai.config import AiConfig
from ai.content.filter import ContentFilter
from ai.content.screen import Screen
from ai.content.words import WordList
from ai.events import (
    AiEvent,
    LineCompleted,
    LineFailed,
    LoadProgress,
    RequestCancelled,
    RequestDropped,
    RequestStarted,
    RequestStats,
    TokenStreamed,
)
from ai.hygiene import clean_line, clean_partial, is_garbage
from ai.load_checks import Probe, check_prompt_sizes
from ai.prompt import fit_prompt
from ai.requests import Choice, PlanSource, Priority, PromptSpec, make_plan
from ai.scheduler import Scheduler, Ticket, TicketState

logger = logging.getLogger(__name__)

Outbox = deque[tuple[Ticket, AiEvent]]

# Raw output longer than this many times max_chars is runaway text: stop early.
_RUNAWAY_FACTOR = 4
# The worker stops within a graph node of an abort (milliseconds) or a hash block; only
# llama.cpp's model load itself (about 0.5 s for the default model) cannot be interrupted.
_JOIN_WARN_S = 2.0


class _StopLoadingError(Exception):
    """Raised from the load progress callback to abandon loading at shutdown."""


class Worker:
    """Runs the backend on its own thread; shares state with the runtime.

    The thread is not a daemon: the runtime joins it at shutdown, and if anything ever
    kept it busy, the interpreter would wait for it rather than exit with it inside
    llama.cpp (which crashed the process).

    ``cond`` guards the scheduler, ticket states, ``running`` and the
    ``stopping``/``degraded`` flags. The outbox is a ``deque``, whose append
    and popleft are atomic, so tokens flow out without taking the lock.
    """

    def __init__(
        self,
        config: AiConfig,
        backend: Backend,
        scheduler: Scheduler,
        cond: threading.Condition,
        outbox: Outbox,
        clock: Callable[[], float],
        content: ContentFilter | None = None,
    ) -> None:
        self._config = config
        self._backend = backend
        self._scheduler = scheduler
        self._cond = cond
        self._outbox = outbox
        self._clock = clock
        self._default_params = GenerationParams.from_config(config.generation)
        #: Settings the main thread offers (one attribute rebind); adopted between requests.
        self.offered = config
        self.running: Ticket | None = None
        self.stopping = False
        self.degraded = False
        self.requeued = 0
        #: Largest prompts to check once the model is loaded; set before ``start``.
        self.probes: tuple[Probe, ...] = ()
        #: Brought up beside a serving model (a swap): whoever started it reports a failed load.
        self.standby = False
        self.progress = LoadProgress(0.0, "waiting to start", "loading")
        self._thread = threading.Thread(target=self._run, name="ai-worker", daemon=False)
        if content is None:
            words = WordList.from_entries(config.hygiene.blocklist, "hygiene.blocklist")
            content = ContentFilter(config.filter, words)
        #: The content filter; its semantic layer opens once the model has loaded.
        self.screen = Screen(content)
        self._candidates = CandidateDraw(
            backend,
            config.hygiene,
            clock,
            self._emit,
            self._next_deadline,
            self._queued,
            self.screen,
            self._decoding,
        )

    @property
    def thread(self) -> threading.Thread:
        """The worker's thread object."""
        return self._thread

    def start(self) -> None:
        """Spawn the thread; the model loads in the background."""
        self._thread.start()

    def _on_progress(self, fraction: float, stage: str) -> None:
        if self.stopping:
            # Hashing and unpacking report progress often: leave them at the next block.
            raise _StopLoadingError
        # One attribute rebind: the main thread always sees a whole record.
        self.progress = LoadProgress(min(1.0, max(0.0, fraction)), stage, "loading")

    def interrupt(self) -> None:
        """Abort the backend's native call in progress; the caller holds ``cond``."""
        self._backend.interrupt()

    def halt(self) -> tuple[list[Ticket], Ticket | None]:
        """Stop taking work: the queued tickets, drained, and the running one, cancelled.

        The thread then ends by itself, closing the backend; nothing here waits for it.
        """
        with self._cond:
            self.stopping = True
            running = self.running
            if running is not None and running.cancel_reason is None:
                running.cancel_reason = "shutdown"
            self.interrupt()
            queued = self._scheduler.drain()
            for ticket in queued:
                ticket.state = TicketState.DONE
            self._cond.notify_all()
        return queued, running

    def join(self) -> None:
        """Wait for the started thread to end, with a warning if it takes long."""
        begin = time.perf_counter()
        self._thread.join(_JOIN_WARN_S)
        if self._thread.is_alive():
            logger.warning("AI worker still busy after %.1f s; waiting for it", _JOIN_WARN_S)
            self._thread.join()
        logger.info("AI worker stopped in %.0f ms", (time.perf_counter() - begin) * 1000.0)

    def _run(self) -> None:
        if self._load():
            self.screen.open(self._backend)
            while (ticket := self._take()) is not None:
                self._serve(ticket)
        self.screen.close()
        try:
            self._backend.close()
        except Exception:
            logger.exception("backend close failed")

    def _load(self) -> bool:
        try:
            self._backend.load(self._on_progress)
        except _StopLoadingError:
            return False
        except ModelLoadError as exc:
            if self.stopping:
                return False
            self._degrade(str(exc))
            return False
        except Exception as exc:
            if self.stopping:
                return False  # the self-test's decode was aborted by the shutdown
            logger.exception("unexpected error while loading the model")
            self._degrade(f"unexpected error while loading the model: {exc!r}")
            return False
        try:
            problem = self._check_model()
        except Exception as exc:
            if self.stopping:
                return False
            problem = f"could not measure the game's prompts: {exc!r}"
        if problem is not None:
            self._degrade(problem)
            return False
        self.progress = LoadProgress(1.0, "ready", "ready", prompt_style=self._backend.prompt_style)
        logger.info("AI backend ready")
        return True

    def _check_model(self) -> str | None:
        return check_prompt_sizes(self._backend, self.probes, self._config.generation.max_tokens)

    def _degrade(self, message: str) -> None:
        if self.standby:
            logger.debug("the model brought up beside the serving one failed: %s", message)
        else:
            logger.error("AI model unavailable, using fallback lines only: %s", message)
        with self._cond:
            self.degraded = True
            self.progress = LoadProgress(
                self.progress.fraction, "model unavailable", "degraded", message
            )
            for ticket in self._scheduler.drain():
                ticket.state = TicketState.DONE
                self._outbox.append((ticket, LineFailed(ticket.handle, ticket.request, "degraded")))

    def _take(self) -> Ticket | None:
        """Block until a request is due, or return None when shutting down."""
        with self._cond:
            while not self.stopping:
                ticket = self._scheduler.pop()
                if ticket is None:
                    self._cond.wait(timeout=0.5)
                    continue
                if self._clock() > ticket.deadline_at:
                    self._scheduler.release(ticket)
                    ticket.state = TicketState.DONE
                    event = RequestDropped(ticket.handle, ticket.request, "deadline")
                    self._outbox.append((ticket, event))
                    continue
                ticket.state = TicketState.RUNNING
                self.running = ticket
                # Under the lock: an interrupt is only ever raised for the running ticket.
                self._backend.resume()
                return ticket
        return None

    def _adopt_offered(self) -> None:
        """Take the settings the main thread last offered; only this thread reads them."""
        config = self.offered
        if config is self._config:
            return
        old, self._config = self._config, config
        self._default_params = GenerationParams.from_config(config.generation)
        self._candidates.use_hygiene(config.hygiene)
        if config.filter != old.filter or config.hygiene.blocklist != old.hygiene.blocklist:
            screen = self.screen
            screen.content = screen.content.reconfigured(config.filter, config.hygiene.blocklist)
        if config.remote != old.remote and isinstance(self._backend, ServerBackend):
            self._backend.use_server(config.remote)

    def _serve(self, ticket: Ticket) -> None:
        self._adopt_offered()
        request = ticket.request
        handle = ticket.handle
        clock = self._clock
        outbox = self._outbox
        hygiene = self._config.hygiene
        max_chars = hygiene.max_chars
        runaway = max_chars * _RUNAWAY_FACTOR
        # Only a line that types into its bubble needs an event per token.
        streaming = request.stream
        params = self._default_params
        if request.max_tokens is not None:
            params = GenerationParams.from_config(self._config.generation, request.max_tokens)
        started = clock()
        ticket.run_started_at = started
        outbox.append((ticket, RequestStarted(handle, request, ticket.preempted_s)))
        backend = self._backend
        max_tokens = params.max_tokens
        try:
            prompt = fit_prompt(
                request.prompt, lambda spec: backend.prompt_room(spec) >= max_tokens
            )
        except Exception as exc:
            logger.warning("could not measure the prompt for npc %d: %r", request.npc_id, exc)
            prompt = request.prompt
        if request.choice is not None:
            self._serve_choice(ticket, request.choice, prompt, started)
            return
        if request.plan is not None:
            self._serve_candidates(ticket, request.plan, params, prompt)
            return
        raw = ""
        tokens = 0
        first_token = started
        gate = self.screen.gate(streaming)
        stream = backend.generate(prompt, params, ticket.should_stop)
        try:
            for piece in stream:
                if tokens == 0:
                    first_token = clock()
                tokens += 1
                raw += piece
                shown = gate.shown
                release = gate.feed(raw, clean_partial(raw, max_chars))
                if gate.refused is not None:
                    break
                if streaming and release is not None:
                    new = release[len(shown) :]
                    outbox.append((ticket, TokenStreamed(handle, request, release, new)))
                if len(raw) > runaway:
                    break
        except Exception as exc:
            if ticket.cancel_reason is not None:
                # An interrupted decode ends in an error; the request was stopped on purpose.
                self._stopped(ticket)
                return
            logger.warning("generation failed for npc %d: %s", request.npc_id, exc)
            reason = exc.reason if isinstance(exc, GenerationError) else "error"
            retry = exc.retry_after_s if isinstance(exc, GenerationError) else 0.0
            self._finish(ticket, LineFailed(handle, request, reason, retry_after_s=retry))
            return
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        ended = clock()
        if ticket.cancel_reason is not None:
            self._stopped(ticket)
            return
        text = clean_line(raw, hygiene)
        if gate.refused is None and is_garbage(text, hygiene.min_letters):
            logger.debug("garbage output for npc %d: %r", request.npc_id, raw)
            self._finish(ticket, LineFailed(handle, request, "garbage"))
            return
        if gate.refused is not None or not self.screen.line(text).ok:
            logger.info("unfit output for npc %d", request.npc_id)
            self._finish(ticket, LineFailed(handle, request, "unfit"))
            return
        decode_s = ended - first_token
        stats = RequestStats(
            queue_wait_s=started - ticket.submitted_at,
            ttft_s=(first_token - started) if tokens else 0.0,
            tokens=tokens,
            tokens_per_s=(tokens - 1) / decode_s if tokens > 1 and decode_s > 0 else 0.0,
            total_s=ended - ticket.submitted_at,
        )
        self._finish(ticket, LineCompleted(handle, request, text, stats))

    def _serve_candidates(
        self, ticket: Ticket, plan: PlanSource, params: GenerationParams, prompt: PromptSpec
    ) -> None:
        try:
            event = self._candidates.run(ticket, make_plan(plan), params, prompt)
        except Exception as exc:
            if ticket.cancel_reason is not None:
                self._stopped(ticket)  # an interrupted decode: stopped on purpose
                return
            logger.warning("generation failed for npc %d: %s", ticket.request.npc_id, exc)
            reason = exc.reason if isinstance(exc, GenerationError) else "error"
            self._finish(ticket, LineFailed(ticket.handle, ticket.request, reason))
            return
        if isinstance(event, LineCompleted) and ticket.cancel_reason == "preempted":
            with self._cond:  # its last candidate ended its line past the preemption
                if ticket.cancel_reason == "preempted":
                    ticket.cancel_reason = None
        if event is None or ticket.cancel_reason is not None:
            self._stopped(ticket)
        else:
            self._finish(ticket, event)

    def _decoding(self, ticket: Ticket, decoding: bool) -> bool:
        """Mark ``ticket``'s candidate as decoding (or done), so that a preemption lets it
        end its line rather than abort it. False when a preemption or cancel came first:
        the decode is being aborted."""
        with self._cond:
            if decoding and ticket.cancel_reason is not None:
                return False
            ticket.ending_draw = decoding
            return decoding

    def _serve_choice(
        self, ticket: Ticket, choice: Choice, prompt: PromptSpec, started: float
    ) -> None:
        """Choose among the closed options, then among the tails after the winner."""
        request = ticket.request
        backend = self._backend
        try:
            picked = backend.choose(prompt, choice.options) if choice.options else None
            text = tail = ""
            scores: tuple[float, ...] = ()
            if picked is not None:
                text, scores = choice.options[picked[0]], (picked[1],)
                if choice.tails:
                    after = backend.choose(
                        replace(prompt, opener=prompt.opener + text), choice.tails
                    )
                    if after is None:
                        picked = None
                    else:
                        tail, scores = choice.tails[after[0]], (picked[1], after[1])
        except Exception as exc:
            if ticket.cancel_reason is not None:
                self._stopped(ticket)  # an interrupted decode: stopped on purpose
                return
            logger.warning("choice failed for npc %d: %s", request.npc_id, exc)
            self._finish(ticket, LineFailed(ticket.handle, request, "error"))
            return
        if ticket.cancel_reason is not None:
            self._stopped(ticket)
            return
        if picked is None:
            self._finish(ticket, LineFailed(ticket.handle, request, "unsupported"))
            return
        ended = self._clock()
        stats = RequestStats(
            queue_wait_s=started - ticket.submitted_at,
            ttft_s=ended - started,
            tokens=0,
            tokens_per_s=0.0,
            total_s=ended - ticket.submitted_at,
        )
        event = LineCompleted(ticket.handle, request, text + tail, stats, scores=scores)
        self._finish(ticket, event)

    def _emit(self, ticket: Ticket, event: AiEvent) -> None:
        self._outbox.append((ticket, event))

    def _queued(self) -> int:
        # Read per token without the lock: a stale count only delays the stop by a token.
        return self._scheduler.depth

    def _next_deadline(self, priority: Priority) -> float | None:
        with self._cond:
            return self._scheduler.earliest_deadline_at_or_above(priority)

    def _stopped(self, ticket: Ticket) -> None:
        """Generation stopped on a cancel flag: requeue a preempted request if it may."""
        with self._cond:
            self.running = None
            reason = ticket.cancel_reason or "cancelled"
            if (
                reason == "preempted"
                and not ticket.closed
                and not self.stopping
                and self._clock() < ticket.deadline_at
            ):
                # Preempted work is still wanted: run it again from scratch later.
                ticket.preempted_s = self._clock() - ticket.run_started_at
                ticket.cancel_reason = None
                ticket.state = TicketState.QUEUED
                self._scheduler.requeue_front(ticket)
                self.requeued += 1
                return
            ticket.state = TicketState.DONE
            self._scheduler.release(ticket)
        self._outbox.append((ticket, RequestCancelled(ticket.handle, ticket.request, reason)))

    def _finish(self, ticket: Ticket, event: AiEvent) -> None:
        with self._cond:
            self.running = None
            ticket.state = TicketState.DONE
            self._scheduler.release(ticket)
        self._outbox.append((ticket, event))
