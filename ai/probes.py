"""Breaker probes: one short request that asks a cooled-down tier whether it is back.

When a tier's breaker has cooled down it lets one probe through: the tier's last
request, cut to a couple of streamed tokens. A token closes the breaker; a failure
before one opens it again. A probe's events never reach the game. Main thread only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace

from ai.events import (
    PLAYER_TEXT_UNFIT,
    TERMINAL_EVENTS,
    AiEvent,
    LineCompleted,
    LineFailed,
    TokenStreamed,
    failure_reason,
)
from ai.legs import LaneKey
from ai.requests import Priority
from ai.runtime import AiRuntime
from ai.tiers import Tier

logger = logging.getLogger(__name__)

_PROBE_TOKENS = 2


class BreakerProbes:
    """The probes in flight, by the lane and handle they run under."""

    def __init__(self, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self._sent: dict[LaneKey, tuple[Tier, AiRuntime]] = {}
        self._seq = 0

    def use_timeout(self, timeout_s: float) -> None:
        """Give the probes sent from now on ``timeout_s``."""
        self._timeout_s = timeout_s

    def send_due(self, tiers: Iterable[Tier], now: float) -> None:
        """Probe each tier whose breaker asks for one now."""
        for tier in tiers:
            if tier.breaker is not None and tier.breaker.probe_due(now):
                self._send(tier)

    def _send(self, tier: Tier) -> None:
        """Send one short request to a tier whose breaker has cooled down."""
        breaker = tier.breaker
        assert breaker is not None
        last = tier.last_request
        if last is None:
            breaker.record_success()
            return
        self._seq += 1
        timeout = self._timeout_s
        probe = replace(
            last,
            signature=f"probe-{tier.name}-{self._seq}",
            priority=Priority.PLAYER_CHAT,
            max_tokens=_PROBE_TOKENS,
            stream=True,  # its first token is the answer
            deadline_s=timeout,
            timeout_s=timeout,
        )
        lane = tier.lane()
        handle = lane.submit(probe)
        self._sent[(id(lane), handle.id)] = (tier, lane)
        tier.log.info("breaker cooled down: probe sent as leg %d", handle.id)

    def settle(self, key: LaneKey, event: AiEvent, now: float) -> bool:
        """Take ``event`` if it is a probe's; True if it was.

        A token from the probe closes the breaker; a failure before one reopens it.
        """
        sent = self._sent.get(key)
        if sent is None:
            return False
        tier, lane = sent
        breaker = tier.breaker
        assert breaker is not None
        if isinstance(event, TokenStreamed):
            del self._sent[key]
            breaker.record_success()
            lane.cancel(event.handle)
        elif isinstance(event, TERMINAL_EVENTS):
            del self._sent[key]
            if isinstance(event, LineCompleted) or (
                isinstance(event, LineFailed)
                and event.reason in ("garbage", "unfit", PLAYER_TEXT_UNFIT)
            ):
                breaker.record_success()  # the server answered, whatever it said
            else:
                breaker.record_failure(now, failure_reason(event) or "cancelled")
        return True
