"""Hedged player chat: a second tier starts when the first is slow to speak.

When a chat line's tier has produced no token after ``hedge_delay_s`` (or fails
before its first token), the next tier the router would have chosen starts too; the
first leg to produce a token wins and the other is cancelled. Each tier counts the
hedges it won and lost. Main thread only.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from ai.legs import Leg, RoutedRequest
from ai.requests import LineRequest
from ai.tiers import Tier

logger = logging.getLogger(__name__)


class Hedges:
    """The chat requests that may still start a second leg, and when."""

    def __init__(self) -> None:
        self._armed: dict[int, RoutedRequest] = {}

    def __bool__(self) -> bool:
        return bool(self._armed)

    def arm(self, routed: RoutedRequest, spare: Tier, at: float) -> None:
        """Let ``spare`` start for ``routed`` if no token has come by ``at``."""
        routed.spare = spare
        routed.hedge_at = at
        self._armed[routed.handle.id] = routed

    def disarm(self, routed: RoutedRequest) -> None:
        """No hedge for ``routed`` any more (it was answered, or it ended)."""
        self._armed.pop(routed.handle.id, None)

    def due(self, now: float) -> list[RoutedRequest]:
        """The armed requests whose delay has run out."""
        return [r for r in self._armed.values() if r.hedge_at is not None and r.hedge_at <= now]

    def take(self, routed: RoutedRequest, now: float, why: str) -> tuple[Tier, LineRequest] | None:
        """The spare tier and the request for its leg, if a hedge should start now.

        ``why`` is "slow" (no token yet) or "failed" (the first leg failed before one).
        Either way the hedge is used up: a request is hedged at most once.
        """
        self._armed.pop(routed.handle.id, None)
        spare, routed.spare, routed.hedge_at = routed.spare, None, None
        if spare is None or routed.winner is not None or routed.closed or not spare.usable():
            return None
        request = routed.request
        left = request.timeout_s - (now - routed.submitted_at)
        if left <= 0.0:
            return None
        spare.log.info(
            "request %d: %s on %s after %.2f s, hedging here",
            routed.handle.id,
            "no token yet" if why == "slow" else "failed",
            routed.legs[0].tier.name,
            now - routed.submitted_at,
        )
        leg_request = replace(
            request,
            signature=f"{request.signature}|hedge",
            deadline_s=min(request.deadline_s, left),
            timeout_s=left,
        )
        return spare, leg_request

    def settle(self, routed: RoutedRequest, winner: Leg) -> None:
        """``winner`` produced the first token: count the hedge, cancel the losing leg."""
        self._armed.pop(routed.handle.id, None)
        if len(routed.legs) < 2:
            return
        winner.tier.hedges_won += 1
        for other in routed.live_legs():
            if other is not winner:
                other.tier.hedges_lost += 1
                other.lane.cancel(other.handle)
                other.tier.log.info(
                    "request %d: hedge lost to %s, leg %d cancelled",
                    routed.handle.id,
                    winner.tier.name,
                    other.handle.id,
                )
