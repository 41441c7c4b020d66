"""When each live request must have started, and when it must have ended.

A request has a deadline to start generating and a timeout to end by; the runtime
looks at both on every poll. Two heaps keep that cheap: a poll with nothing due
looks at the top of each and no further. Main thread only.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Iterator

from ai.scheduler import Ticket

logger = logging.getLogger(__name__)

_Heap = list[tuple[float, int, Ticket]]


class Expiry:
    """The runtime's tickets by deadline and by timeout, earliest first."""

    def __init__(self) -> None:
        self._deadlines: _Heap = []
        self._timeouts: _Heap = []

    def track(self, ticket: Ticket) -> None:
        """Watch ``ticket`` until both its times have passed."""
        heapq.heappush(self._deadlines, (ticket.deadline_at, ticket.seq, ticket))
        heapq.heappush(self._timeouts, (ticket.timeout_at, ticket.seq, ticket))

    def due(self, now: float) -> bool:
        """Whether a deadline or a timeout may have passed (a closed ticket's among them)."""
        deadlines, timeouts = self._deadlines, self._timeouts
        return bool(deadlines and deadlines[0][0] <= now or timeouts and timeouts[0][0] <= now)

    def past_deadline(self, now: float) -> Iterator[Ticket]:
        """The tickets not yet closed whose deadline is past, each once, earliest first."""
        return _pop_due(self._deadlines, now)

    def past_timeout(self, now: float) -> Iterator[Ticket]:
        """The tickets not yet closed whose timeout is past, each once, earliest first."""
        return _pop_due(self._timeouts, now)


def _pop_due(heap: _Heap, now: float) -> Iterator[Ticket]:
    # Popped one at a time, so a ticket the caller closes meanwhile is skipped.
    while heap and heap[0][0] <= now:
        ticket = heapq.heappop(heap)[2]
        if not ticket.closed:
            yield ticket
