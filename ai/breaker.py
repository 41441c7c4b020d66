"""A circuit breaker for one tier: stop sending work to a tier that keeps failing.

Closed, it lets every request through and counts failures. ``failures`` of them
within ``window_s`` open it: the tier gets no work. After ``cooldown_s`` it asks
for one probe (half-open, shown as "probing"); the probe's success closes it, its
failure opens it again for another cool-down. The clock is passed in, so tests
drive it by hand.
"""

from __future__ import annotations

import logging
from collections import deque
from enum import Enum

from ai.config import BreakerConfig

logger = logging.getLogger(__name__)


class BreakerState(Enum):
    """Where the breaker stands; the values are what the HUD shows."""

    CLOSED = "healthy"
    OPEN = "open"
    HALF_OPEN = "probing"


class CircuitBreaker:
    """Failure counting, cool-down and a single probe. Main thread only."""

    def __init__(self, config: BreakerConfig, name: str = "tier") -> None:
        self._config = config
        self._name = name
        self._failures: deque[float] = deque()
        self._opened_at = 0.0
        self._hold_until = 0.0
        self.state = BreakerState.CLOSED
        self.times_opened = 0

    def use_config(self, config: BreakerConfig) -> None:
        """Count failures and cool down by ``config`` from now on; the state is kept."""
        self._config = config

    @property
    def closed(self) -> bool:
        """Whether ordinary requests may go to the tier."""
        return self.state is BreakerState.CLOSED

    def record_success(self) -> None:
        """A request (or the probe) succeeded."""
        if self.state is BreakerState.HALF_OPEN:
            logger.info("%s tier: probe succeeded, breaker closed", self._name)
            self.state = BreakerState.CLOSED
            self._failures.clear()

    def record_failure(self, now: float, reason: str) -> None:
        """A request failed or timed out; opens the breaker at the threshold."""
        if self.state is BreakerState.HALF_OPEN:
            logger.warning("%s tier: probe failed (%s), breaker open again", self._name, reason)
            self._open(now)
            return
        if self.state is BreakerState.OPEN:
            return
        failures = self._failures
        failures.append(now)
        while failures and failures[0] < now - self._config.window_s:
            failures.popleft()
        if len(failures) >= self._config.failures:
            logger.warning(
                "%s tier: %d failures in %.0f s (last: %s), breaker open",
                self._name,
                len(failures),
                self._config.window_s,
                reason,
            )
            self.times_opened += 1
            self._open(now)

    def hold_off(self, now: float, seconds: float) -> None:
        """The server asked to be left alone for ``seconds`` (HTTP 429 ``Retry-After``):
        open now, and send no probe before that time is up."""
        if self.state is not BreakerState.OPEN:
            logger.warning(
                "%s tier: asked to retry after %.0f s, breaker open", self._name, seconds
            )
            self.times_opened += 1
        self._open(now)
        self._hold_until = now + seconds

    def probe_due(self, now: float) -> bool:
        """True once per cool-down: the caller must now send exactly one probe."""
        if now < self._hold_until:
            return False
        if self.state is BreakerState.OPEN and now - self._opened_at >= self._config.cooldown_s:
            self.state = BreakerState.HALF_OPEN
            return True
        return False

    def _open(self, now: float) -> None:
        self.state = BreakerState.OPEN
        self._opened_at = now
        self._failures.clear()
