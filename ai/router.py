"""The front the game talks to: route each request over the tiers, hedge chat, probe.

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

Player chat is hedged over a second tier (:mod:`ai.hedging`), and a tier whose breaker
has cooled down is probed before it gets work again (:mod:`ai.probes`).

Main thread only, like the runtime.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial

from ai.config import AiConfig, ModelConfig
from ai.events import (
    TERMINAL_EVENTS,
    AiEvent,
    FallbackUsed,
    LineCompleted,
    LoadProgress,
    RequestCancelled,
    RequestStarted,
    SwapEvent,
    SwapProgress,
    TerminalEvent,
    TokenStreamed,
    needs_fallback,
)
from ai.hedging import Hedges
from ai.legs import LaneKey, Leg, RoutedRequest
from ai.line_runtime import ConfigurableRuntime, SwappableRuntime, poll_until
from ai.load_checks import Probe
from ai.metrics import AiMetrics, MetricsRecorder, TierStats
from ai.probes import BreakerProbes
from ai.requests import Handle, LineRequest, Priority
from ai.runtime import AiRuntime
from ai.swap import Swaps
from ai.tiers import LOCAL, Tier, order_tiers

logger = logging.getLogger(__name__)


class Router:
    """Routes line requests over tiers, and swaps the local model (``swaps``); a LineRuntime."""

    def __init__(
        self,
        config: AiConfig,
        tiers: list[Tier],
        swaps: Swaps,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if not tiers or tiers[0].name != LOCAL:
            raise ValueError("the first tier must be the local one")
        self._routing = config.routing
        self._tiers = tiers
        self._by_name = {tier.name: tier for tier in tiers}
        self._local = tiers[0]
        self._clock = clock
        self._metrics = MetricsRecorder()
        self._routed: dict[int, RoutedRequest] = {}
        self._by_signature: dict[str, RoutedRequest] = {}
        self._legs: dict[LaneKey, tuple[RoutedRequest, Leg]] = {}
        self._hedges = Hedges()
        # The router's own requests: their events never reach the game.
        self._breaker_probes = BreakerProbes(config.breaker.probe_timeout_s)
        self._sticky: dict[int, str] = {}
        self._pending: list[AiEvent] = []
        self._next_id = 1
        self._swaps = swaps

    # -- lifecycle -----------------------------------------------------------

    def start(self, probes: Sequence[Probe] = ()) -> None:
        """Start every tier's threads; the local model checks ``probes`` once it has loaded.

        See :meth:`AiRuntime.start`: a probe that leaves no room for a line marks the local
        tier degraded, naming its label.
        """
        self._swaps.probes = tuple(probes)
        for tier in self._tiers:
            tier.start(probes if tier is self._local else ())

    def shutdown(self) -> None:
        """Stop every tier within about a second each; the next poll reports what ended."""
        self._swaps.shutdown()
        for tier in reversed(self._tiers):
            tier.shutdown()

    def swap_model(
        self, model: ModelConfig, warm_ups: Mapping[str, LineRequest] | None = None
    ) -> None:
        """Bring ``model`` up beside the local one to take over (:mod:`ai.swap`); never blocks.

        ``warm_ups``: the warm-up for each prompt style the new model may report.
        """
        self._swaps.begin(model, warm_ups or {})

    def swap_events(self) -> list[SwapEvent]:
        """How the swaps ended since the last call, in order; call it after :meth:`poll`."""
        return self._swaps.events()

    def swap_progress(self) -> SwapProgress:
        """How far a model swap has got ("idle" when none runs), for the HUD."""
        return self._swaps.progress()

    def reconfigure(self, config: AiConfig) -> None:
        """Use ``config``'s live settings from now on; never blocks.

        Routing (tiers per class, hedging, latency window) and the breaker apply to the
        next request; every lane, and a model a swap brings up later, takes the
        sampling, hygiene, filter and rate limit (see :meth:`AiRuntime.reconfigure`), and
        each server lane the server's address, model, key and timeouts. Which tiers
        exist, and how many lanes the server has, stay as they started.
        """
        self._routing = config.routing
        self._breaker_probes.use_timeout(config.breaker.probe_timeout_s)
        for tier in self._tiers:
            tier.use_routing(config.routing)
            if tier.breaker is not None:
                tier.breaker.use_config(config.breaker)
            for lane in tier.lanes:
                lane.reconfigure(config)
        self._swaps.reconfigure(config)

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
        routed = RoutedRequest(handle, request, now)
        self._metrics.record_submit(request.priority)
        self._routed[handle.id] = routed
        self._by_signature[request.signature] = routed
        sticky = self._sticky.get(request.npc_id, "")
        order = order_tiers(self._tiers, self._by_name, self._routing, request, sticky, now)
        self._start_leg(routed, order[0], request, now)
        if request.priority is Priority.PLAYER_CHAT and len(order) > 1:
            self._hedges.arm(routed, order[1], now + self._routing.hedge_delay_s)
        return handle

    def _start_leg(
        self, routed: RoutedRequest, tier: Tier, request: LineRequest, now: float
    ) -> None:
        lane = tier.lane()
        handle = lane.submit(request)
        leg = Leg(tier, lane, handle, now)
        routed.legs.append(leg)
        self._legs[(id(lane), handle.id)] = (routed, leg)
        tier.requests += 1
        tier.last_request = request
        tier.log.debug(
            "request %d: %s line for npc %d, leg %d",
            routed.handle.id,
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

    def promote(self, handle: Handle, priority: Priority, value: float) -> bool:
        """Raise every live leg of a request (see :meth:`AiRuntime.promote`); True if the
        request was still live."""
        routed = self._routed.get(handle.id)
        if routed is None or routed.closed:
            return False
        for leg in routed.live_legs():
            leg.lane.promote(leg.handle, priority, value)
        return True

    def cancel(self, handle: Handle) -> bool:
        """Cancel every leg of a request; True if it was still live.

        As with the runtime, the caller gets ``RequestCancelled("cancelled")`` from
        the next poll and no fallback.
        """
        begin = time.perf_counter()
        try:
            routed = self._routed.get(handle.id)
            if routed is None or routed.closed:
                return False
            for leg in routed.live_legs():
                leg.lane.cancel(leg.handle)
            self._close(routed, None)
            event = RequestCancelled(handle, routed.request, "cancelled")
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
            for routed in self._hedges.due(now):
                self._hedge(routed, now, "slow")
        self._breaker_probes.send_due(self._tiers, now)
        if self._swaps:
            route = partial(self._route, self._local, now=now, out=out)
            self._swaps.advance(self._local, self._legs, route)
        return out

    def _hedge(self, routed: RoutedRequest, now: float, why: str) -> bool:
        """Start the spare tier for a chat line that has no token yet; True if started."""
        hedge = self._hedges.take(routed, now, why)
        if hedge is None:
            return False
        spare, request = hedge
        self._start_leg(routed, spare, request, now)
        return True

    def _route(
        self, tier: Tier, lane: AiRuntime, event: AiEvent, now: float, out: list[AiEvent]
    ) -> None:
        key = (id(lane), event.handle.id)
        if self._breaker_probes.settle(key, event, now):
            return
        pair = self._legs.get(key)
        if pair is None:
            return
        routed, leg = pair
        if isinstance(event, TokenStreamed):
            self._token(routed, leg, event, now, out)
        elif isinstance(event, RequestStarted):
            # A start again after a preemption is passed on too: it tells the lost run.
            again = event.preempted_s > 0.0
            if not routed.closed and (
                routed.winner is leg
                or (routed.winner is None and (again or not routed.started_sent))
            ):
                routed.started_sent = True
                self._metrics.started += 1
                out.append(replace(event, handle=routed.handle, request=routed.request))
        elif isinstance(event, FallbackUsed):
            del self._legs[key]
            if routed.answered_by is leg:
                out.append(replace(event, handle=routed.handle, request=routed.request))
        elif isinstance(event, TERMINAL_EVENTS):
            leg.done = True
            if not needs_fallback(event):
                del self._legs[key]
            leg.record_end(event, now)
            if not routed.closed:
                self._answer(routed, leg, event, now, out)

    def _token(
        self, routed: RoutedRequest, leg: Leg, event: TokenStreamed, now: float, out: list[AiEvent]
    ) -> None:
        leg.record_token(now)
        if routed.closed:
            return
        if routed.winner is None:
            self._win(routed, leg)
        if routed.winner is leg:
            out.append(replace(event, handle=routed.handle, request=routed.request))

    def _win(self, routed: RoutedRequest, leg: Leg) -> None:
        """``leg`` produced the first token: it answers, and any other leg is cancelled."""
        routed.winner = leg
        if routed.request.priority is Priority.PLAYER_CHAT:
            self._sticky[routed.request.npc_id] = leg.tier.name
        self._hedges.settle(routed, leg)

    def _answer(
        self, routed: RoutedRequest, leg: Leg, event: TerminalEvent, now: float, out: list[AiEvent]
    ) -> None:
        """Forward a leg's end as the request's end, unless another leg may still answer."""
        if routed.winner is not None and routed.winner is not leg:
            return  # a hedge that lost: the winner answers
        if routed.winner is None and not isinstance(event, LineCompleted):
            if any(other is not leg for other in routed.live_legs()):
                return
            if self._hedge(routed, now, "failed"):
                return
        if routed.winner is None:
            self._win(routed, leg)
        forwarded: TerminalEvent
        if isinstance(event, LineCompleted):
            leg.tier.record_completed(event.stats)
            forwarded = replace(
                event, handle=routed.handle, request=routed.request, tier=leg.tier.name
            )
        else:
            forwarded = replace(event, handle=routed.handle, request=routed.request)
        self._close(routed, leg)
        self._metrics.record_outcome(forwarded)
        out.append(forwarded)
        leg.tier.log.debug("request %d: answered by leg %d", routed.handle.id, leg.handle.id)

    def _close(self, routed: RoutedRequest, answered_by: Leg | None) -> None:
        routed.closed = True
        routed.answered_by = answered_by
        self._routed.pop(routed.handle.id, None)
        self._hedges.disarm(routed)
        if self._by_signature.get(routed.request.signature) is routed:
            del self._by_signature[routed.request.signature]

    # -- blocking wait (sync demo mode) ----------------------------------------

    def wait(self, handle: Handle, timeout_s: float) -> list[AiEvent]:
        """Block until ``handle`` finishes or ``timeout_s`` passes; see ``AiRuntime.wait``."""
        return poll_until(self.poll, lambda: handle.id not in self._routed, timeout_s)

    # -- status --------------------------------------------------------------

    def load_progress(self) -> LoadProgress:
        """The local model's load progress (during a swap, the old one's until ModelSwapped)."""
        return self._swaps.serving(self._local).load_progress()

    @property
    def queue_depth(self) -> int:
        """Requests waiting to start, over all tiers."""
        return sum(lane.queue_depth for tier in self._tiers for lane in tier.lanes)

    @property
    def in_flight(self) -> int:
        """Requests generating right now, over all tiers (and an old model finishing one)."""
        lanes = sum(lane.in_flight for tier in self._tiers for lane in tier.lanes)
        return lanes + self._swaps.in_flight

    def metrics(self) -> AiMetrics:
        """The game's view: requests as routed, with the tiers' queue figures summed."""
        lanes = [lane.metrics() for tier in self._tiers for lane in tier.lanes]
        lanes += self._swaps.retired
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


# mypy checks here that the router offers every call the game makes, swaps included.
_IS_A_SWAPPABLE_RUNTIME: type[SwappableRuntime] = Router
_IS_CONFIGURABLE: type[ConfigurableRuntime] = Router
