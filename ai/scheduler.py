"""The bounded priority queue between ``submit`` and the worker.

Not thread-safe by itself: the runtime guards every call with one lock, held
only for these few dictionary and deque operations. One FIFO per priority
keeps ordering, eviction and removal O(1) or O(capacity) with tiny constants.
"""

from __future__ import annotations

import logging
from collections import deque
from enum import Enum

from ai.requests import Handle, LineRequest, Priority

logger = logging.getLogger(__name__)


class TicketState(Enum):
    """Where a request is in its life, as the worker sees it."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class Ticket:
    """Mutable bookkeeping for one request, shared by the main and worker threads.

    ``state`` and ``cancel_reason`` change only under the runtime's lock; the
    worker reads ``cancel_reason`` without it, once per token, which is safe
    because rebinding an attribute is atomic. ``closed`` belongs to the main
    thread: once the caller has seen a terminal event, later events are dropped.
    """

    __slots__ = (
        "cancel_reason",
        "closed",
        "deadline_at",
        "ending_draw",
        "handle",
        "preempted_s",
        "priority",
        "request",
        "run_started_at",
        "seq",
        "state",
        "submitted_at",
        "timeout_at",
    )

    def __init__(self, handle: Handle, request: LineRequest, seq: int, now: float) -> None:
        self.handle = handle
        self.request = request
        self.priority = request.priority
        self.seq = seq
        self.submitted_at = now
        self.deadline_at = now + request.deadline_s
        self.timeout_at = now + request.timeout_s
        self.state = TicketState.QUEUED
        self.cancel_reason: str | None = None
        self.closed = False
        # The worker's: when its current run began, and how long a run stopped by a
        # preemption had taken (told with the next start).
        self.run_started_at = 0.0
        self.preempted_s = 0.0
        # Set by the worker, under the lock, while it decodes a candidate that a
        # preemption lets end its line (see ai.candidates); the runtime then does not
        # abort the decode.
        self.ending_draw = False

    def should_stop(self) -> bool:
        """Polled by the backend once per token."""
        return self.cancel_reason is not None


def preempts(incoming: Priority, running: Priority) -> bool:
    """Whether a request just queued stops the one running (which is queued again).

    A chat reply stops anything prepared ahead or ambient; a reaction or a greeting
    prepared ahead stops ambient work (chatter, lines written while the worker was
    idle), which can wait. A reaction is never stopped: its moment is now.
    """
    if incoming is Priority.PLAYER_CHAT:
        return running in (Priority.PREDICTIVE, Priority.AMBIENT)
    return incoming in (Priority.PREDICTIVE, Priority.REACTIVE) and running is Priority.AMBIENT


class Scheduler:
    """Priority queue with duplicate lookup and lowest-priority eviction.

    Within one priority, the request of the highest ``value`` runs first, and of
    equal values the oldest. When the queue is full, the least valuable (then the
    oldest) request of the lowest queued priority is evicted to make room; an
    incoming request of strictly lower priority than everything queued is the one
    turned away. So a submit at the highest queued priority or above always gets in.
    Queues hold tens of requests, so a scan per pop costs microseconds.
    """

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._queues: tuple[deque[Ticket], ...] = tuple(deque() for _ in Priority)
        self._by_signature: dict[str, Ticket] = {}
        self._depth = 0

    @property
    def depth(self) -> int:
        """Number of queued (not running) requests."""
        return self._depth

    def earliest_deadline_at_or_above(self, priority: Priority) -> float | None:
        """The soonest start deadline among queued requests of ``priority`` or higher."""
        deadlines = [t.deadline_at for p in Priority if p >= priority for t in self._queues[p]]
        return min(deadlines) if deadlines else None

    def find(self, signature: str) -> Ticket | None:
        """The queued or running request with this signature, if any."""
        return self._by_signature.get(signature)

    def push(self, ticket: Ticket) -> Ticket | None:
        """Queue ``ticket``; return the evicted ticket (possibly ``ticket``) if full."""
        evicted: Ticket | None = None
        if self._depth >= self._capacity:
            lowest = self._lowest_priority()
            if lowest is None or ticket.priority < lowest:
                return ticket
            queue = self._queues[lowest]
            evicted = min(queue, key=lambda t: t.request.value)  # the oldest of a tie
            queue.remove(evicted)
            self._depth -= 1
            self.release(evicted)
        self._queues[ticket.priority].append(ticket)
        self._depth += 1
        self._by_signature[ticket.request.signature] = ticket
        return evicted

    def requeue_front(self, ticket: Ticket) -> None:
        """Put a preempted ticket back at the head of its priority class."""
        self._queues[ticket.priority].appendleft(ticket)
        self._depth += 1
        self._by_signature[ticket.request.signature] = ticket

    def pop(self) -> Ticket | None:
        """Take the most valuable (then oldest) request of the highest non-empty priority."""
        for queue in reversed(self._queues):
            if queue:
                self._depth -= 1
                best = queue[0]
                for ticket in queue:
                    if ticket.request.value > best.request.value:
                        best = ticket
                if best is queue[0]:
                    return queue.popleft()
                queue.remove(best)
                return best
        return None

    def remove(self, ticket: Ticket) -> bool:
        """Take ``ticket`` out of the queue; False if it was not queued."""
        try:
            self._queues[ticket.priority].remove(ticket)
        except ValueError:
            return False
        self._depth -= 1
        self.release(ticket)
        return True

    def promote(self, ticket: Ticket, priority: Priority) -> None:
        """Raise a ticket to ``priority`` (a merged duplicate, or a caller, asked for more).

        A queued ticket moves to that priority's queue; a running one keeps running, and
        :func:`preempts` judges it by its new priority from now on.
        """
        if priority <= ticket.priority:
            return
        if ticket.state is TicketState.QUEUED:
            try:
                self._queues[ticket.priority].remove(ticket)
            except ValueError:
                return
            self._queues[priority].append(ticket)
        ticket.priority = priority

    def release(self, ticket: Ticket) -> None:
        """Forget the signature of a finished ticket, so it can be requested again."""
        signature = ticket.request.signature
        if self._by_signature.get(signature) is ticket:
            del self._by_signature[signature]

    def drain(self) -> list[Ticket]:
        """Remove and return every queued ticket, highest priority first."""
        drained: list[Ticket] = []
        while (ticket := self.pop()) is not None:
            self.release(ticket)
            drained.append(ticket)
        return drained

    def _lowest_priority(self) -> Priority | None:
        for priority in Priority:
            if self._queues[priority]:
                return priority
        return None


class RateLimit:
    """When each villager last asked at each priority: one sooner than ``seconds`` after waits.

    Player chat and closed choices (decisions) are never limited: decisions are few, and
    follow a line of the same villager's by design. Main thread only.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        """The gap; may change while the game runs (a settings reload)."""
        self._last: dict[tuple[int, Priority], float] = {}

    def allows(self, request: LineRequest, now: float) -> bool:
        """Whether ``request`` may be queued now; if so, it counts as the latest ask."""
        if request.priority >= Priority.PLAYER_CHAT or request.choice is not None:
            return True
        key = (request.npc_id, request.priority)
        last = self._last.get(key)
        if last is not None and now - last < self.seconds:
            return False
        self._last[key] = now
        return True
