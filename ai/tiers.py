"""A tier: one way of writing lines, with its own threads, queue, breaker and figures.

The ``local`` tier is the in-process llama.cpp model behind one runtime (one worker
thread, one scheduler). A ``remote`` tier is an OpenAI-compatible server behind one
or more runtimes ("lanes"), each with its own worker thread and its own HTTP client,
so the local worker's code is the same whether or not a server is configured.
The router in front of the tiers decides where each request goes.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ai.backend import Backend
from ai.breaker import CircuitBreaker
from ai.config import AiConfig, RoutingConfig, RuntimeConfig
from ai.content.filter import ContentFilter
from ai.events import PLAYER_TEXT_UNFIT, RequestStats
from ai.fallback import FallbackSource
from ai.load_checks import Probe
from ai.metrics import TierStats, percentile, summarize
from ai.requests import LineRequest, Priority
from ai.runtime import AiRuntime

logger = logging.getLogger(__name__)

LOCAL = "local"
REMOTE = "remote"

_SAMPLES = 512
# The p95 used for routing is recomputed at most this often (and when a sample arrives).
_P95_REFRESH_S = 0.5


class Tier:
    """The lanes of one tier and what the router knows about them. Main thread only."""

    def __init__(
        self,
        name: str,
        lanes: list[AiRuntime],
        routing: RoutingConfig,
        breaker: CircuitBreaker | None = None,
    ) -> None:
        if not lanes:
            raise ValueError("a tier needs at least one lane")
        self.name = name
        self.lanes = lanes
        self.breaker = breaker
        self.log = logging.getLogger(f"ai.tier.{name}")
        self._routing = routing
        self._ttft: deque[tuple[float, float]] = deque(maxlen=_SAMPLES)
        self._tokens_per_s: deque[float] = deque(maxlen=_SAMPLES)
        self._p95: float | None = None
        self._p95_at = float("-inf")
        self.last_request: LineRequest | None = None
        self.requests = 0
        self.completed = 0
        self.failures: Counter[str] = Counter()
        self.hedges_won = 0
        self.hedges_lost = 0

    # -- lifecycle -----------------------------------------------------------

    def start(self, probes: Sequence[Probe] = ()) -> None:
        """Start every lane's worker thread (``probes``: see :meth:`AiRuntime.start`)."""
        for lane in self.lanes:
            lane.start(probes)

    def shutdown(self) -> None:
        """Stop every lane; each joins within about a second."""
        for lane in reversed(self.lanes):
            lane.shutdown()

    def use_routing(self, routing: RoutingConfig) -> None:
        """Judge latency by ``routing``'s window and sample count from now on."""
        self._routing = routing
        self._p95_at = float("-inf")  # recomputed with the new window at the next look

    # -- routing -------------------------------------------------------------

    def ready(self) -> bool:
        """Whether at least one lane has loaded."""
        return any(lane.load_progress().state == "ready" for lane in self.lanes)

    def usable(self) -> bool:
        """Ready, and its breaker (if it has one) lets ordinary requests through."""
        return (self.breaker is None or self.breaker.closed) and self.ready()

    def lane(self) -> AiRuntime:
        """The least busy ready lane (the first lane if none is ready)."""
        best = self.lanes[0]
        if len(self.lanes) == 1:
            return best
        load = None
        for lane in self.lanes:
            if lane.load_progress().state != "ready":
                continue
            busy = lane.queue_depth + lane.in_flight
            if load is None or busy < load:
                best, load = lane, busy
        return best

    def p95_ttft(self, now: float) -> float | None:
        """p95 time to first token over the recent window; None with too few samples."""
        if now - self._p95_at >= _P95_REFRESH_S:
            self._p95_at = now
            oldest = now - self._routing.latency_window_s
            recent = sorted(s for at, s in self._ttft if at >= oldest)
            enough = len(recent) >= self._routing.min_samples
            self._p95 = percentile(recent, 95.0) if enough else None
        return self._p95

    def fits(self, deadline_s: float, now: float) -> bool:
        """Whether this tier's recent p95 time to first token is within ``deadline_s``."""
        p95 = self.p95_ttft(now)
        return p95 is None or p95 <= deadline_s

    # -- recording -----------------------------------------------------------

    def record_ttft(self, now: float, seconds: float) -> None:
        """A first token arrived ``seconds`` after submit (or a request gave up that late)."""
        self._ttft.append((now, seconds))
        self._p95_at = now - _P95_REFRESH_S

    def record_completed(self, stats: RequestStats) -> None:
        """A line this tier wrote was handed to the game."""
        self.completed += 1
        if stats.tokens > 1:
            self._tokens_per_s.append(stats.tokens_per_s)

    def record_failure(self, now: float, reason: str, retry_after_s: float = 0.0) -> None:
        """A request failed here; availability failures feed the breaker, and a server
        that asks to be left alone (``retry_after_s``) opens it for that long."""
        self.failures[reason] += 1
        if self.breaker is None or reason in ("garbage", "unfit", PLAYER_TEXT_UNFIT):
            return
        if retry_after_s > 0.0:
            self.breaker.hold_off(now, retry_after_s)
        else:
            self.breaker.record_failure(now, reason)

    # -- status --------------------------------------------------------------

    def state(self) -> str:
        """What the HUD shows: the breaker's state, or why the tier is not up."""
        states = {lane.load_progress().state for lane in self.lanes}
        if "ready" not in states:
            return "loading" if "loading" in states else "down"
        return "healthy" if self.breaker is None else self.breaker.state.value

    def stats(self) -> TierStats:
        """An immutable snapshot of this tier's figures."""
        return TierStats(
            name=self.name,
            state=self.state(),
            requests=self.requests,
            completed=self.completed,
            failed=sum(self.failures.values()),
            failures=dict(self.failures),
            hedges_won=self.hedges_won,
            hedges_lost=self.hedges_lost,
            breaker_opened=0 if self.breaker is None else self.breaker.times_opened,
            queue_depth=sum(lane.queue_depth for lane in self.lanes),
            in_flight=sum(lane.in_flight for lane in self.lanes),
            ttft_s=summarize(s for _, s in self._ttft),
            tokens_per_s=summarize(self._tokens_per_s),
        )


def order_tiers(
    tiers: Sequence[Tier],
    by_name: Mapping[str, Tier],
    routing: RoutingConfig,
    request: LineRequest,
    sticky: str,
    now: float,
) -> list[Tier]:
    """The tiers that may serve ``request`` now, best first; never empty.

    ``tiers`` starts with the local one, which answers when nothing listed can;
    ``sticky`` names the tier the villager's conversation is on ("" for none).
    """
    local = tiers[0]
    if len(tiers) == 1 or request.choice is not None:
        # A closed choice is scored from the model's own logits: only the local tier can.
        return [local]
    usable = [
        tier
        for name in routing.tiers_for(request.priority)
        if (tier := by_name.get(name)) is not None and tier.usable()
    ]
    if len(usable) > 1:
        fitting = [tier for tier in usable if tier.fits(request.deadline_s, now)]
        usable = fitting + [tier for tier in usable if tier not in fitting]
    if request.priority is Priority.PLAYER_CHAT:
        kept = by_name.get(sticky)
        if kept is not None and kept in usable:
            usable.remove(kept)
            usable.insert(0, kept)
    if not usable:
        usable = [local]
    return usable


def build_tiers(
    config: AiConfig,
    local_backend: Backend,
    fallback: FallbackSource,
    remote_backend: Callable[[], Backend] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    content: ContentFilter | None = None,
) -> list[Tier]:
    """The local tier, plus the remote tier when ``remote.enabled`` (not yet started).

    ``remote_backend`` makes one backend per remote lane; by default an
    :class:`~ai.openai_backend.OpenAiBackend` for ``config.remote``. ``content`` is the
    content filter every lane applies (None: ``hygiene.blocklist`` alone).
    """
    local_lane = AiRuntime(config, local_backend, fallback, clock, content=content)
    local = Tier(LOCAL, [local_lane], config.routing)
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
            AiRuntime(lane_config, remote_backend(), fallback, clock, content=content)
            for _ in range(config.remote.lanes)
        ]
        breaker = CircuitBreaker(config.breaker, REMOTE)
        tiers.append(Tier(REMOTE, lanes, config.routing, breaker))
    return tiers
