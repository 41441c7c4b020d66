"""What the router keeps per request: the request itself, and its legs on the tiers.

A routed request has a handle of the router's own. Behind it run one or two legs, each
a request on one tier's lane with that lane's handle; a leg's first token and its end
are what the tier's figures and breaker learn from. Main thread only.
"""

from __future__ import annotations

import logging
from typing import TypeAlias

from ai.events import LineCompleted, LineFailed, TerminalEvent, failure_reason
from ai.requests import Handle, LineRequest
from ai.runtime import AiRuntime
from ai.tiers import Tier

logger = logging.getLogger(__name__)

#: A request on one lane: the lane's ``id()`` and the handle the lane gave it.
LaneKey: TypeAlias = tuple[int, int]


class Leg:
    """One request on one tier's lane, serving a routed request."""

    __slots__ = ("done", "first_token_at", "handle", "lane", "submitted_at", "tier")

    def __init__(self, tier: Tier, lane: AiRuntime, handle: Handle, now: float) -> None:
        self.tier = tier
        self.lane = lane
        self.handle = handle
        self.submitted_at = now
        self.first_token_at: float | None = None
        self.done = False

    def record_token(self, now: float) -> None:
        """A token arrived; the first one tells the tier how long it took."""
        if self.first_token_at is None:
            self.first_token_at = now
            self.tier.record_ttft(now, now - self.submitted_at)

    def record_end(self, event: TerminalEvent, now: float) -> None:
        """The tier's figures, breaker and log for this leg's end."""
        tier = self.tier
        if isinstance(event, LineCompleted):
            if self.first_token_at is None:
                # A line that does not stream sends no token events: its stats say when.
                stats = event.stats
                self.first_token_at = self.submitted_at + stats.queue_wait_s + stats.ttft_s
                tier.record_ttft(now, stats.queue_wait_s + stats.ttft_s)
            if tier.breaker is not None:
                tier.breaker.record_success()
            tier.log.debug("request %d: leg %d completed", self.handle.id, event.handle.id)
            return
        reason = failure_reason(event)
        if reason is None:
            return
        if self.first_token_at is None:
            # A request that gave up waiting says the tier is at least this slow.
            tier.record_ttft(now, now - self.submitted_at)
        retry = event.retry_after_s if isinstance(event, LineFailed) else 0.0
        tier.record_failure(now, reason, retry)
        tier.log.info("leg %d failed on %s: %s", event.handle.id, tier.name, reason)


class RoutedRequest:
    """A request the game made of the router: its legs, the winner, a hedge yet to start."""

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
        self.legs: list[Leg] = []
        self.winner: Leg | None = None
        self.answered_by: Leg | None = None
        self.spare: Tier | None = None
        self.hedge_at: float | None = None
        self.started_sent = False
        self.closed = False

    def live_legs(self) -> list[Leg]:
        """The legs that have not ended yet."""
        return [leg for leg in self.legs if not leg.done]
