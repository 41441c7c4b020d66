"""One worker thread and its queue, behind submit and poll: a runtime.

The router runs one runtime for each lane of each tier (the local model has one lane,
a server may have several). A runtime on its own is a
:class:`~ai.line_runtime.LineRuntime` too, with no tiers, and keeps the outcome rules
set out there.

Threading model: the main thread calls every public method here. One worker
thread (:mod:`ai.worker`) owns the backend. They share a scheduler guarded by
one lock held for microseconds, and an outbox ``deque`` of immutable events.
Fallback lines are fetched here, on the main thread, never by the worker.

Preemption (``ai.scheduler.preempts``): PLAYER_CHAT work stops a running PREDICTIVE or
AMBIENT request at its next token, and PREDICTIVE work a running AMBIENT one. While its
deadline allows, it is re-queued at the head of its class and starts again (a second
``RequestStarted``), else it ends in ``RequestCancelled("preempted")``. A candidate
already decoding may first end its line, within a few tokens (``ai.candidates``): a line
that passes then completes the request, which is not run again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from ai.backend import Backend
from ai.cache_fills import CacheFills
from ai.config import AiConfig
from ai.content.filter import ContentFilter
from ai.events import (
    TERMINAL_EVENTS,
    AiEvent,
    FallbackUsed,
    LineFailed,
    LoadProgress,
    RequestCancelled,
    RequestDropped,
    RequestStarted,
    RequestTimedOut,
    TerminalEvent,
)
from ai.expiry import Expiry
from ai.fallback import FallbackSource, safe_fallback_line
from ai.line_runtime import ConfigurableRuntime, LineRuntime, poll_until
from ai.load_checks import Probe
from ai.metrics import AiMetrics, MetricsRecorder, TierStats
from ai.requests import Handle, LineRequest, Priority
from ai.scheduler import RateLimit, Scheduler, Ticket, TicketState, preempts
from ai.switch_interval import SwitchInterval
from ai.worker import Outbox, Worker

logger = logging.getLogger(__name__)


class AiRuntime:
    """Schedules line requests onto one worker thread and reports events; one lane.

    Not thread-safe: call it from the game's main thread only. ``clock`` must
    be monotonic seconds; tests inject a fake one. A ``standby`` runtime comes up beside
    a serving one (a model swap), whose caller reports a model that fails to load.
    """

    def __init__(
        self,
        config: AiConfig,
        backend: Backend,
        fallback: FallbackSource,
        clock: Callable[[], float] = time.perf_counter,
        standby: bool = False,
        content: ContentFilter | None = None,
    ) -> None:
        self._config = config
        self._fallback = fallback
        self._clock = clock
        self._cond = threading.Condition(threading.Lock())
        self._scheduler = Scheduler(config.scheduler.queue_capacity)
        self._outbox: Outbox = deque()
        self._worker = Worker(
            config, backend, self._scheduler, self._cond, self._outbox, clock, content
        )
        self._worker.standby = standby
        self._metrics = MetricsRecorder()
        self._tickets: dict[int, Ticket] = {}
        self._pending: list[AiEvent] = []
        self._expiry = Expiry()
        self._rate_limit = RateLimit(config.scheduler.rate_limit_s)
        self._fills = CacheFills()
        self._next_id = 1
        self._started = False
        self._shut_down = False
        self._switch = SwitchInterval(config.runtime.switch_interval_s)

    # -- lifecycle -----------------------------------------------------------

    def start(self, probes: Sequence[Probe] = ()) -> None:
        """Spawn the worker thread, which loads the model in the background.

        ``probes`` are the caller's largest prompts, labelled: once the model has loaded,
        one that leaves no room for a line marks the runtime degraded, naming its label.
        """
        if self._started:
            return
        self._started = True
        self._worker.probes = tuple(probes)
        self._switch.apply()
        self._worker.start()

    def shutdown(self) -> None:
        """Stop the worker and join it, even mid-prompt or mid-generation.

        Queued requests are dropped with reason "shutdown"; the running one is
        cancelled and its decode aborted through the backend's interrupt. Their
        events (with fallbacks) are returned by the next ``poll``. Loading stops
        at its next progress report. The worker is joined, never abandoned:
        a process that exits with the thread inside llama.cpp can crash.
        """
        self.retire()
        if self._started:
            self._worker.join()
        self._switch.restore()

    def retire(self, successor: AiRuntime | None = None) -> None:
        """Stop the worker as :meth:`shutdown` does, but without waiting for it to end.

        Once :attr:`stopped`, :meth:`shutdown` returns at once. ``successor`` (a model
        swap's new runtime) takes over putting the switch interval back.
        """
        if successor is not None:
            self._switch.hand_over(successor._switch)
        if self._shut_down:
            return
        self._shut_down = True
        queued, running = self._worker.halt()
        for ticket in queued:
            self._emit_terminal(ticket, RequestDropped(ticket.handle, ticket.request, "shutdown"))
        if running is not None and not running.closed:
            self._emit_terminal(
                running, RequestCancelled(running.handle, running.request, "shutdown")
            )

    def reconfigure(self, config: AiConfig) -> None:
        """Use ``config``'s live settings from the next request on; never blocks.

        Sampling, hygiene and the filter settings go to the worker as one immutable
        object, which it adopts before it starts its next request; the rate limit applies
        to the next submit. What cannot change live stays as it started (see
        :meth:`AiConfig.with_live_settings`): this lane's model among it.
        """
        config = self._config.with_live_settings(config)
        self._config = config
        self._rate_limit.seconds = config.scheduler.rate_limit_s
        self._worker.offered = config

    @property
    def stopped(self) -> bool:
        """Whether the worker thread has ended (or never started)."""
        return not self._worker.thread.is_alive()

    # -- requests ------------------------------------------------------------

    def submit(self, request: LineRequest) -> Handle:
        """Queue a request and return its handle; never blocks, never raises when full.

        A duplicate ``signature`` of a queued or running request returns the
        existing handle (raising its priority if this one is higher). A request
        below PLAYER_CHAT arriving sooner than ``scheduler.rate_limit_s`` after
        the previous one from the same NPC at the same priority is dropped as
        "rate_limited" (a closed choice, a decision, is exempt). In degraded mode
        every request is answered at once by a fallback.
        """
        begin = time.perf_counter()
        try:
            return self._submit(request)
        finally:
            self._metrics.submit_calls.append(time.perf_counter() - begin)

    def _submit(
        self, request: LineRequest, waited_s: float | None = None, limited: bool = True
    ) -> Handle:
        """``waited_s``: how long another runtime already kept it (then no rate limit);
        ``limited``: whether the villager's rate limit applies (not to a cache fill)."""
        now = self._clock()
        existing = self._scheduler.find(request.signature)
        if existing is not None and not existing.closed:
            self._metrics.merged_duplicates += 1
            if existing.state is TicketState.QUEUED and request.priority > existing.priority:
                with self._cond:
                    self._scheduler.promote(existing, request.priority)
            return existing.handle
        handle = Handle(self._next_id)
        self._next_id += 1
        ticket = Ticket(handle, request, handle.id, now - (waited_s or 0.0))
        self._metrics.record_submit(request.priority)
        if self._shut_down:
            return self._reject(ticket, RequestDropped(handle, request, "shutdown"))
        if waited_s is None and limited and not self._rate_limit.allows(request, now):
            return self._reject(ticket, RequestDropped(handle, request, "rate_limited"))
        evicted: Ticket | None = None
        with self._cond:
            # Checked under the lock: the worker drains the queue when it degrades.
            degraded = self._worker.degraded
            if not degraded:
                evicted = self._scheduler.push(ticket)
                if evicted is not None:
                    evicted.state = TicketState.DONE
                running = self._worker.running
                if (
                    running is not None
                    and preempts(request.priority, running.priority)
                    and running.cancel_reason is None
                ):
                    running.cancel_reason = "preempted"
                    if not running.ending_draw:
                        self._worker.interrupt()
                    self._metrics.preempted += 1
                self._cond.notify()
        if degraded:
            return self._reject(ticket, LineFailed(handle, request, "degraded"))
        depth = self._scheduler.depth
        if depth > self._metrics.max_queue_depth:
            self._metrics.max_queue_depth = depth
        if evicted is not ticket:
            self._tickets[handle.id] = ticket
            self._expiry.track(ticket)
        if evicted is not None:
            self._emit_terminal(evicted, RequestDropped(evicted.handle, evicted.request, "evicted"))
        return handle

    def _reject(self, ticket: Ticket, event: AiEvent) -> Handle:
        ticket.state = TicketState.DONE
        self._emit_terminal(ticket, event)
        return ticket.handle

    def _emit_terminal(self, ticket: Ticket, event: AiEvent) -> None:
        """Close ``ticket`` now and queue its final event for the next poll."""
        ticket.closed = True
        self._tickets.pop(ticket.handle.id, None)
        self._pending.append(event)

    def warm(self, request: LineRequest) -> None:
        """Run ``request`` for the model's cache only (see :mod:`ai.cache_fills`).

        It is nobody's line, so it does not count against its villager's rate limit:
        their first real line may follow at once.
        """
        self._fills.add_warm_up(self._submit(request, limited=False))

    def prefill(self, request: LineRequest) -> None:
        """Read a reply's prompt into the model's cache ahead (see :mod:`ai.cache_fills`).

        It generates one token and its events never reach the caller. An earlier
        read-ahead still queued is cancelled: only the newest matters.
        """
        for handle in self._fills.read_aheads():
            ticket = self._tickets.get(handle.id)
            if ticket is not None and ticket.state is TicketState.QUEUED:
                self.cancel(handle)
        self._fills.add_read_ahead(self.submit(request.read_ahead()))

    @property
    def warming(self) -> bool:
        """Whether a warm-up sent by :meth:`warm` has not ended yet (seen through ``poll``)."""
        return self._fills.warming

    def cancel(self, handle: Handle) -> bool:
        """Cancel a queued or running request; True if it was still live.

        The caller gets ``RequestCancelled("cancelled")`` from the next poll and
        no fallback. A running generation stops at its next token.
        """
        begin = time.perf_counter()
        try:
            ticket = self._tickets.get(handle.id)
            if ticket is None or ticket.closed:
                return False
            self._stop(ticket, "cancelled")
            self._emit_terminal(ticket, RequestCancelled(handle, ticket.request, "cancelled"))
            return True
        finally:
            self._metrics.cancel_calls.append(time.perf_counter() - begin)

    def promote(self, handle: Handle, priority: Priority, value: float) -> bool:
        """Raise a queued or running request to ``priority`` and ``value``; True if live.

        A greeting written ahead at ambient priority becomes worth more once the player
        walks towards its villager: queued, it moves up; running, work that may stop
        ambient lines no longer stops it.
        """
        ticket = self._tickets.get(handle.id)
        if ticket is None or ticket.closed:
            return False
        with self._cond:
            if ticket.state is TicketState.DONE:
                return False
            if value > ticket.request.value:
                ticket.request = replace(ticket.request, value=value)
            self._scheduler.promote(ticket, priority)
        return True

    def take_over(self, old: AiRuntime, handles: Iterable[Handle]) -> dict[int, Handle]:
        """Move requests still queued on ``old`` here, unseen by the caller (a model swap).

        Returns each new handle by old handle id, and limits none by rate again; a
        request ``old``'s worker has started, or that has ended, stays there.
        """
        taken: list[Ticket] = []
        with old._cond:
            for handle in handles:
                ticket = old._tickets.get(handle.id)
                if ticket is not None and ticket.state is TicketState.QUEUED:
                    old._scheduler.remove(ticket)
                    ticket.state = TicketState.DONE
                    ticket.closed = True
                    del old._tickets[handle.id]
                    taken.append(ticket)
        now = self._clock()
        return {
            ticket.handle.id: self._submit(ticket.request, now - ticket.submitted_at)
            for ticket in taken
        }

    # -- events --------------------------------------------------------------

    def poll(self) -> list[AiEvent]:
        """Drain ready events without blocking; also enforces deadlines and timeouts.

        Events of a request the caller has already seen end (cancelled,
        timed out) are swallowed. Every failure-type terminal event is
        followed by its ``FallbackUsed``.
        """
        begin = time.perf_counter()
        try:
            return self._poll()
        finally:
            self._metrics.poll_calls.append(time.perf_counter() - begin)

    def _poll(self) -> list[AiEvent]:
        outbox = self._outbox
        if outbox:
            tickets = self._tickets
            while outbox:
                ticket, event = outbox.popleft()
                if ticket.closed:
                    continue
                if isinstance(event, RequestStarted):
                    self._metrics.started += 1
                    self._pending.append(event)
                elif isinstance(event, TERMINAL_EVENTS):
                    ticket.closed = True
                    tickets.pop(ticket.handle.id, None)
                    self._pending.append(event)
                else:
                    self._pending.append(event)
        now = self._clock()
        if self._expiry.due(now):
            self._expire(now)
        if not self._pending:
            return []
        pending, self._pending = self._pending, []
        out: list[AiEvent] = []
        for event in pending:
            out.append(event)
            if isinstance(event, TERMINAL_EVENTS):
                self._count_outcome(event, out)
        if self._fills:
            return self._fills.drop_from(out)
        return out

    def _count_outcome(self, event: TerminalEvent, out: list[AiEvent]) -> None:
        """Record a terminal event in metrics and add its fallback, if it needs one."""
        reason = self._metrics.record_outcome(event)
        if reason is not None:
            text = safe_fallback_line(self._fallback, event.request)
            out.append(FallbackUsed(event.handle, event.request, text, reason))

    def _expire(self, now: float) -> None:
        """Drop the queued requests past their deadline; stop those past their timeout."""
        for ticket in self._expiry.past_deadline(now):
            with self._cond:
                if ticket.state is not TicketState.QUEUED:
                    continue
                self._scheduler.remove(ticket)
                ticket.state = TicketState.DONE
            self._emit_terminal(ticket, RequestDropped(ticket.handle, ticket.request, "deadline"))
        for ticket in self._expiry.past_timeout(now):
            self._stop(ticket, "timeout")
            self._emit_terminal(ticket, RequestTimedOut(ticket.handle, ticket.request))

    def _stop(self, ticket: Ticket, reason: str) -> None:
        """Take a queued ticket out of the queue, or stop a running one at its next token."""
        with self._cond:
            if ticket.state is TicketState.QUEUED:
                self._scheduler.remove(ticket)
                ticket.state = TicketState.DONE
            elif ticket.state is TicketState.RUNNING:
                ticket.cancel_reason = reason
                if self._worker.running is ticket:
                    self._worker.interrupt()
                self._scheduler.release(ticket)

    def wait(self, handle: Handle, timeout_s: float) -> list[AiEvent]:
        """Poll until ``handle`` ends or ``timeout_s`` passes (the naive sync demo mode).

        Returns every event seen meanwhile; a ticket leaves the table as it closes.
        """
        return poll_until(self.poll, lambda: handle.id not in self._tickets, timeout_s)

    # -- status --------------------------------------------------------------

    def load_progress(self) -> LoadProgress:
        """How far model loading has got, and whether the runtime is degraded."""
        return self._worker.progress

    @property
    def queue_depth(self) -> int:
        """Requests waiting to start."""
        return self._scheduler.depth

    @property
    def in_flight(self) -> int:
        """Requests generating right now (0 or 1: there is one worker)."""
        return 0 if self._worker.running is None else 1

    def metrics(self) -> AiMetrics:
        """An immutable snapshot of counters and latency percentiles."""
        self._metrics.requeued = self._worker.requeued
        return self._metrics.snapshot(self.queue_depth, self.in_flight)

    @property
    def multi_tier(self) -> bool:
        """A lone runtime is no tier: the router keeps tiers."""
        return False

    def tiers(self) -> tuple[TierStats, ...]:
        """No tiers to report."""
        return ()


# mypy checks here that a runtime offers every call the game makes.
_IS_A_LINE_RUNTIME: type[LineRuntime] = AiRuntime
_IS_CONFIGURABLE: type[ConfigurableRuntime] = AiRuntime
