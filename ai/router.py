"""The game-facing front of the tiers: route each request, hedge chat, break circuits.

The router is a :class:`~ai.line_runtime.LineRuntime`, like each runtime behind it,
so the game talks to one object whether one tier or two stand behind it. Each request
gets a router handle; its id is the request id that the tiers' logs (``ai.tier.local``,
``ai.tier.remote``) and the game's bubble log carry, so a line can be traced end to
end. Behind a handle run one or two "legs", each a request on one tier's lane, and the
router hands the game exactly the events a lone runtime would: one terminal event per
request, and at most one fallback.

Where a request goes:

- its priority class lists tiers best first (``routing`` in ``config/ai.toml``);
- a tier is skipped while its breaker is open or probing, or while its recent p95
  time to first token does not fit the request's deadline;
- a player's conversation stays on the tier it started on while that tier is healthy;
- ``local`` answers when nothing listed can.

Player chat is hedged: when its tier has produced no token after ``hedge_delay_s``
(or fails before its first token), the next tier starts too; the first leg to
produce a token wins and the other is cancelled.

Main thread only, like the runtime.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from ai.backend import Backend
from ai.breaker import CircuitBreaker
from ai.config import AiConfig, RuntimeConfig
from ai.events import (
    TERMINAL_EVENTS,
    AiEvent,
    FallbackUsed,
    LineCompleted,
    LineFailed,
    LoadProgress,
    RequestCancelled,
    RequestDropped,
    RequestStarted,
    RequestTimedOut,
    TerminalEvent,
    TokenStreamed,
    needs_fallback,
)
from ai.fallback import FallbackSource
from ai.line_runtime import LineRuntime
from ai.load_checks import Probe
from ai.metrics import AiMetrics, MetricsRecorder, TierStats
from ai.requests import Handle, LineRequest, Priority
from ai.runtime import AiRuntime
from ai.tiers import Tier

logger = logging.getLogger(__name__)

LOCAL = "local"
REMOTE = "remote"
_PROBE_TOKENS = 2


class _Leg:
    """One request on one tier's lane, serving a router request."""

    __slots__ = ("done", "first_token_at", "handle", "lane", "submitted_at", "tier")

    def __init__(self, tier: Tier, lane: AiRuntime, handle: Handle, now: float) -> None:
        self.tier = tier
        self.lane = lane
        self.handle = handle
        self.submitted_at = now
        self.first_token_at: float | None = None
        self.done = False


class _Entry:
    """A router request: its legs, the winning leg, and a hedge that may still start."""

    __slots__ = (
        "answered_by",
        "closed",
        "handle",
        "hedge_at",
        "legs",
        "request",
        "spare",
        "started_sent",
        "submitted_at",
        "winner",
    )

    def __init__(self, handle: Handle, request: LineRequest, now: float) -> None:
        self.handle = handle
        self.request = request
        self.submitted_at = now
        self.legs: list[_Leg] = []
        self.winner: _Leg | None = None
        self.answered_by: _Leg | None = None
        self.spare: Tier | None = None
        self.hedge_at: float | None = None
        self.started_sent = False
        self.closed = False

    def live_legs(self) -> list[_Leg]:
        return [leg for leg in self.legs if not leg.done]


class Router:
    """Routes line requests over tiers; a :class:`LineRuntime` like each of its lanes."""

    def __init__(
        self,
        config: AiConfig,
        tiers: list[Tier],
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if not tiers or tiers[0].name != LOCAL:
            raise ValueError("the first tier must be the local one")
        self._routing = config.routing
        self._probe_timeout_s = config.breaker.probe_timeout_s
        self._tiers = tiers
        self._by_name = {tier.name: tier for tier in tiers}
        self._local = tiers[0]
        self._clock = clock
        self._metrics = MetricsRecorder()
        self._entries: dict[int, _Entry] = {}
        self._by_signature: dict[str, _Entry] = {}
        self._legs: dict[tuple[int, int], tuple[_Entry, _Leg]] = {}
        # The router's own requests, breaker probes: their events never reach the game.
        self._probes: dict[tuple[int, int], tuple[Tier, AiRuntime]] = {}
        self._hedges: dict[int, _Entry] = {}
        self._sticky: dict[int, str] = {}
        self._pending: list[AiEvent] = []
        self._next_id = 1
        self._probe_seq = 0

    # -- lifecycle -----------------------------------------------------------

    def start(self, probes: Sequence[Probe] = ()) -> None:
        """Start every tier's threads; the local model checks ``probes`` once it has loaded.

        See :meth:`AiRuntime.start`: a probe that leaves no room for a line marks the local
        tier degraded, naming its label.
        """
        for tier in self._tiers:
            tier.start(probes if tier is self._local else ())

    def shutdown(self) -> None:
        """Stop every tier within about a second each; the next poll reports what ended."""
        for tier in reversed(self._tiers):
            tier.shutdown()

    @property
    def multi_tier(self) -> bool:
        """Whether more than the local tier is configured."""
        return len(self._tiers) > 1

    # -- requests ------------------------------------------------------------

    def submit(self, request: LineRequest) -> Handle:
        """Route and queue a request; never blocks. Duplicates merge as in the runtime."""
        begin = time.perf_counter()
        try:
            return self._submit(request)
        finally:
            self._metrics.submit_calls.append(time.perf_counter() - begin)

    def _submit(self, request: LineRequest) -> Handle:
        existing = self._by_signature.get(request.signature)
        if existing is not None and not existing.closed and existing.legs:
            # The tier merges it too, raising the queued request's priority if asked.
            leg = existing.legs[0]
            leg.lane.submit(request)
            self._metrics.merged_duplicates += 1
            return existing.handle
        now = self._clock()
        handle = Handle(self._next_id)
        self._next_id += 1
        entry = _Entry(handle, request, now)
        self._metrics.record_submit(request.priority)
        self._entries[handle.id] = entry
        self._by_signature[request.signature] = entry
        order = self._order(request, now)
        self._start_leg(entry, order[0], request, now)
        if request.priority is Priority.PLAYER_CHAT and len(order) > 1:
            entry.spare = order[1]
            entry.hedge_at = now + self._routing.hedge_delay_s
            self._hedges[handle.id] = entry
        return handle

    def _order(self, request: LineRequest, now: float) -> list[Tier]:
        """The tiers that may serve ``request`` now, best first; never empty."""
        if len(self._tiers) == 1 or request.choice is not None:
            # A closed choice is scored from the model's own logits: only the local tier can.
            return [self._local]
        by_name = self._by_name
        usable = [
            tier
            for name in self._routing.tiers_for(request.priority)
            if (tier := by_name.get(name)) is not None and tier.usable()
        ]
        if len(usable) > 1:
            fitting = [tier for tier in usable if tier.fits(request.deadline_s, now)]
            usable = fitting + [tier for tier in usable if tier not in fitting]
        if request.priority is Priority.PLAYER_CHAT:
            sticky = by_name.get(self._sticky.get(request.npc_id, ""))
            if sticky is not None and sticky in usable:
                usable.remove(sticky)
                usable.insert(0, sticky)
        if not usable:
            usable = [self._local]
        return usable

    def _start_leg(self, entry: _Entry, tier: Tier, request: LineRequest, now: float) -> None:
        lane = tier.lane()
        handle = lane.submit(request)
        leg = _Leg(tier, lane, handle, now)
        entry.legs.append(leg)
        self._legs[(id(lane), handle.id)] = (entry, leg)
        tier.requests += 1
        tier.last_request = request
        tier.log.debug(
            "request %d: %s line for npc %d, leg %d",
            entry.handle.id,
            request.priority.name.lower(),
            request.npc_id,
            handle.id,
        )

    def warm(self, request: LineRequest) -> None:
        """Warm every lane of every tier with ``request`` (see :meth:`AiRuntime.warm`).

        Each model keeps the shared prompt prefix in its cache, so the first real line on
        any tier does not pay for reading it.
        """
        for tier in self._tiers:
            for lane in tier.lanes:
                lane.warm(request)

    def prefill(self, request: LineRequest) -> None:
        """Read a reply's prompt ahead on the local model (see :meth:`AiRuntime.prefill`).

        A server tier keeps its own cache; it is not asked.
        """
        self._local.lanes[0].prefill(request)

    @property
    def warming(self) -> bool:
        """Whether a warm-up sent by :meth:`warm` has not ended yet on any lane."""
        return any(lane.warming for tier in self._tiers for lane in tier.lanes)

    def cancel(self, handle: Handle) -> bool:
        """Cancel every leg of a request; True if it was still live.

        As with the runtime, the caller gets ``RequestCancelled("cancelled")`` from
        the next poll and no fallback.
        """
        begin = time.perf_counter()
        try:
            entry = self._entries.get(handle.id)
            if entry is None or entry.closed:
                return False
            for leg in entry.live_legs():
                leg.lane.cancel(leg.handle)
            self._close(entry, None)
            event = RequestCancelled(handle, entry.request, "cancelled")
            self._metrics.record_outcome(event)
            self._pending.append(event)
            return True
        finally:
            self._metrics.cancel_calls.append(time.perf_counter() - begin)

    # -- events --------------------------------------------------------------

    def poll(self) -> list[AiEvent]:
        """Drain every tier without blocking; start due hedges and probes."""
        begin = time.perf_counter()
        try:
            return self._poll()
        finally:
            self._metrics.poll_calls.append(time.perf_counter() - begin)

    def _poll(self) -> list[AiEvent]:
        now = self._clock()
        out, self._pending = self._pending, []
        for tier in self._tiers:
            for lane in tier.lanes:
                for event in lane.poll():
                    self._route(tier, lane, event, now, out)
        if self._hedges:
            self._start_due_hedges(now)
        for tier in self._tiers:
            if tier.breaker is not None and tier.breaker.probe_due(now):
                self._probe(tier)
        return out

    def _route(
        self, tier: Tier, lane: AiRuntime, event: AiEvent, now: float, out: list[AiEvent]
    ) -> None:
        key = (id(lane), event.handle.id)
        if key in self._probes:
            self._settle_probe(key, event, now)
            return
        pair = self._legs.get(key)
        if pair is None:
            return
        entry, leg = pair
        if isinstance(event, TokenStreamed):
            self._token(entry, leg, event, now, out)
        elif isinstance(event, RequestStarted):
            if not entry.closed and (
                entry.winner is leg or (entry.winner is None and not entry.started_sent)
            ):
                entry.started_sent = True
                self._metrics.started += 1
                out.append(replace(event, handle=entry.handle, request=entry.request))
        elif isinstance(event, FallbackUsed):
            del self._legs[key]
            if entry.answered_by is leg:
                out.append(replace(event, handle=entry.handle, request=entry.request))
        elif isinstance(event, TERMINAL_EVENTS):
            leg.done = True
            if not needs_fallback(event):
                del self._legs[key]
            self._leg_ended(leg, event, now)
            if not entry.closed:
                self._answer(entry, leg, event, now, out)

    def _token(
        self, entry: _Entry, leg: _Leg, event: TokenStreamed, now: float, out: list[AiEvent]
    ) -> None:
        if leg.first_token_at is None:
            leg.first_token_at = now
            leg.tier.record_ttft(now, now - leg.submitted_at)
        if entry.closed:
            return
        if entry.winner is None:
            self._win(entry, leg)
        if entry.winner is leg:
            out.append(replace(event, handle=entry.handle, request=entry.request))

    def _win(self, entry: _Entry, leg: _Leg) -> None:
        """``leg`` produced the first token: it answers, and any other leg is cancelled."""
        entry.winner = leg
        self._hedges.pop(entry.handle.id, None)
        if entry.request.priority is Priority.PLAYER_CHAT:
            self._sticky[entry.request.npc_id] = leg.tier.name
        if len(entry.legs) < 2:
            return
        leg.tier.hedges_won += 1
        for other in entry.live_legs():
            if other is not leg:
                other.tier.hedges_lost += 1
                other.lane.cancel(other.handle)
                other.tier.log.info(
                    "request %d: hedge lost to %s, leg %d cancelled",
                    entry.handle.id,
                    leg.tier.name,
                    other.handle.id,
                )

    def _leg_ended(self, leg: _Leg, event: TerminalEvent, now: float) -> None:
        """Per-tier figures, breaker and log for one leg's end."""
        tier = leg.tier
        if isinstance(event, LineCompleted):
            if leg.first_token_at is None:
                # A line that does not stream sends no token events: its stats say when.
                stats = event.stats
                leg.first_token_at = leg.submitted_at + stats.queue_wait_s + stats.ttft_s
                tier.record_ttft(now, stats.queue_wait_s + stats.ttft_s)
            if tier.breaker is not None:
                tier.breaker.record_success()
            tier.log.debug("request %d: leg %d completed", leg.handle.id, event.handle.id)
            return
        reason = _failure_reason(event)
        if reason is None:
            return
        if leg.first_token_at is None:
            # A request that gave up waiting says the tier is at least this slow.
            tier.record_ttft(now, now - leg.submitted_at)
        retry = event.retry_after_s if isinstance(event, LineFailed) else 0.0
        tier.record_failure(now, reason, retry)
        tier.log.info("leg %d failed on %s: %s", event.handle.id, tier.name, reason)

    def _answer(
        self, entry: _Entry, leg: _Leg, event: TerminalEvent, now: float, out: list[AiEvent]
    ) -> None:
        """Forward a leg's end as the request's end, unless another leg may still answer."""
        if entry.winner is not None and entry.winner is not leg:
            return  # a hedge that lost: the winner answers
        if entry.winner is None and not isinstance(event, LineCompleted):
            if any(other is not leg for other in entry.live_legs()):
                return
            if self._hedge(entry, now, "failed"):
                return
        if entry.winner is None:
            self._win(entry, leg)
        forwarded: TerminalEvent
        if isinstance(event, LineCompleted):
            leg.tier.record_completed(event.stats)
            forwarded = replace(
                event, handle=entry.handle, request=entry.request, tier=leg.tier.name
            )
        else:
            forwarded = replace(event, handle=entry.handle, request=entry.request)
        self._close(entry, leg)
        self._metrics.record_outcome(forwarded)
        out.append(forwarded)
        leg.tier.log.debug("request %d: answered by leg %d", entry.handle.id, leg.handle.id)

    def _close(self, entry: _Entry, answered_by: _Leg | None) -> None:
        entry.closed = True
        entry.answered_by = answered_by
        self._entries.pop(entry.handle.id, None)
        self._hedges.pop(entry.handle.id, None)
        if self._by_signature.get(entry.request.signature) is entry:
            del self._by_signature[entry.request.signature]

    # -- hedging and probing ---------------------------------------------------

    def _start_due_hedges(self, now: float) -> None:
        for entry in [e for e in self._hedges.values() if e.hedge_at is not None]:
            if entry.hedge_at is not None and entry.hedge_at <= now:
                self._hedge(entry, now, "slow")

    def _hedge(self, entry: _Entry, now: float, why: str) -> bool:
        """Start the spare tier for a chat line that has no token yet; True if started."""
        self._hedges.pop(entry.handle.id, None)
        spare, entry.spare, entry.hedge_at = entry.spare, None, None
        if spare is None or entry.winner is not None or entry.closed or not spare.usable():
            return False
        request = entry.request
        left = request.timeout_s - (now - entry.submitted_at)
        if left <= 0.0:
            return False
        first = entry.legs[0].tier.name
        spare.log.info(
            "request %d: %s on %s after %.2f s, hedging here",
            entry.handle.id,
            "no token yet" if why == "slow" else "failed",
            first,
            now - entry.submitted_at,
        )
        leg_request = replace(
            request,
            signature=f"{request.signature}|hedge",
            deadline_s=min(request.deadline_s, left),
            timeout_s=left,
        )
        self._start_leg(entry, spare, leg_request, now)
        return True

    def _probe(self, tier: Tier) -> None:
        """Send one short request to a tier whose breaker has cooled down."""
        breaker = tier.breaker
        assert breaker is not None
        last = tier.last_request
        if last is None:
            breaker.record_success()
            return
        self._probe_seq += 1
        timeout = self._probe_timeout_s
        probe = replace(
            last,
            signature=f"probe-{tier.name}-{self._probe_seq}",
            priority=Priority.PLAYER_CHAT,
            max_tokens=_PROBE_TOKENS,
            stream=True,  # its first token is the answer
            deadline_s=timeout,
            timeout_s=timeout,
        )
        lane = tier.lane()
        handle = lane.submit(probe)
        self._probes[(id(lane), handle.id)] = (tier, lane)
        tier.log.info("breaker cooled down: probe sent as leg %d", handle.id)

    def _settle_probe(self, key: tuple[int, int], event: AiEvent, now: float) -> None:
        """A token from the probe closes the breaker; a failure before one reopens it."""
        tier, lane = self._probes[key]
        breaker = tier.breaker
        assert breaker is not None
        if isinstance(event, TokenStreamed):
            del self._probes[key]
            breaker.record_success()
            lane.cancel(event.handle)
        elif isinstance(event, TERMINAL_EVENTS):
            del self._probes[key]
            if isinstance(event, LineCompleted) or (
                isinstance(event, LineFailed) and event.reason in ("garbage", "blocked")
            ):
                breaker.record_success()  # the server answered, whatever it said
            else:
                breaker.record_failure(now, _failure_reason(event) or "cancelled")

    # -- blocking wait (sync demo mode) ----------------------------------------

    def wait(self, handle: Handle, timeout_s: float) -> list[AiEvent]:
        """Block until ``handle`` finishes or ``timeout_s`` passes; see ``AiRuntime.wait``."""
        end = time.monotonic() + max(0.0, timeout_s)
        events: list[AiEvent] = []
        while True:
            events.extend(self.poll())
            if handle.id not in self._entries or time.monotonic() >= end:
                return events
            time.sleep(0.001)

    # -- status --------------------------------------------------------------

    def load_progress(self) -> LoadProgress:
        """The local model's load progress: the game's readiness follows the local tier."""
        return self._local.lanes[0].load_progress()

    @property
    def queue_depth(self) -> int:
        """Requests waiting to start, over all tiers."""
        return sum(lane.queue_depth for tier in self._tiers for lane in tier.lanes)

    @property
    def in_flight(self) -> int:
        """Requests generating right now, over all tiers."""
        return sum(lane.in_flight for tier in self._tiers for lane in tier.lanes)

    def metrics(self) -> AiMetrics:
        """The game's view: requests as routed, with the tiers' queue figures summed."""
        lanes = [lane.metrics() for tier in self._tiers for lane in tier.lanes]
        recorder = self._metrics
        recorder.preempted = sum(m.preempted for m in lanes)
        recorder.requeued = sum(m.requeued for m in lanes)
        recorder.max_queue_depth = max(m.max_queue_depth for m in lanes)
        return recorder.snapshot(self.queue_depth, self.in_flight)

    def tiers(self) -> tuple[TierStats, ...]:
        """Each tier's state and figures, local first."""
        return tuple(tier.stats() for tier in self._tiers)

    def tier(self, name: str) -> Tier | None:
        """A tier by name (for tests and tools)."""
        return self._by_name.get(name)


def _failure_reason(event: TerminalEvent) -> str | None:
    """Why a leg failed, for the tier's figures and breaker; None if it did not fail."""
    if isinstance(event, LineFailed):
        return event.reason
    if isinstance(event, RequestTimedOut):
        return "timeout"
    if isinstance(event, RequestDropped) and event.reason == "deadline":
        return "deadline"
    return None


# mypy checks here that the router offers every call the game makes.
_IS_A_LINE_RUNTIME: type[LineRuntime] = Router


def build_router(
    config: AiConfig,
    local_backend: Backend,
    fallback: FallbackSource,
    remote_backend: Callable[[], Backend] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Router:
    """The local tier, plus the remote tier when ``remote.enabled`` (not yet started).

    ``remote_backend`` makes one backend per remote lane; by default an
    :class:`~ai.openai_backend.OpenAiBackend` for ``config.remote``.
    """
    local = Tier(LOCAL, [AiRuntime(config, local_backend, fallback, clock)], config.routing)
    tiers = [local]
    if config.remote.enabled:
        if remote_backend is None:
            from ai.openai_backend import OpenAiBackend

            remote = config.remote

            def remote_backend() -> Backend:
                return OpenAiBackend(remote)

        # Only the local runtime sets the interpreter's switch interval (and restores it).
        lane_config = replace(config, runtime=RuntimeConfig(switch_interval_s=0.0))
        lanes = [
            AiRuntime(lane_config, remote_backend(), fallback, clock)
            for _ in range(config.remote.lanes)
        ]
        breaker = CircuitBreaker(config.breaker, REMOTE)
        tiers.append(Tier(REMOTE, lanes, config.routing, breaker))
    return Router(config, tiers, clock)
