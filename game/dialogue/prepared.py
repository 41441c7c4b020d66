"""Lines asked for before they are needed, and what became of them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ai import Handle
from game.dialogue.validation import LineSnapshot


@dataclass(frozen=True, slots=True)
class PreparedLine:
    """A finished predictive line waiting for its trigger, until ``expires_tick``."""

    text: str
    snapshot: LineSnapshot
    expires_tick: int


class PreparedLines:
    """Per villager: at most one predictive request in flight or one line ready.

    Every prediction ends one way, and each way is counted: ``used`` (its trigger
    fired and the line was shown), ``expired`` (never needed within its time to live),
    ``cancelled`` (the prediction failed while the request was still queued or running),
    ``stale`` (it no longer fit the world when its trigger fired) or ``failed`` (the
    model gave no usable line).
    """

    def __init__(self) -> None:
        self.in_flight: dict[int, Handle] = {}
        self.ready: dict[int, PreparedLine] = {}
        self.outcomes: Counter[str] = Counter()
        self.issued = 0

    def wants(self, npc_id: int) -> bool:
        """Whether a villager has neither a request in flight nor a line ready."""
        return npc_id not in self.in_flight and npc_id not in self.ready

    def issue(self, npc_id: int, handle: Handle) -> None:
        """Record a predictive request just submitted."""
        self.in_flight[npc_id] = handle
        self.issued += 1

    def store(self, npc_id: int, line: PreparedLine) -> None:
        """A predictive request finished; keep its line for the trigger."""
        self.in_flight.pop(npc_id, None)
        self.ready[npc_id] = line

    def take(self, npc_id: int) -> PreparedLine | None:
        """Hand out a villager's ready line, if any, removing it."""
        return self.ready.pop(npc_id, None)

    def settle(self, npc_id: int, outcome: str) -> None:
        """Close a villager's prediction with ``outcome``."""
        self.in_flight.pop(npc_id, None)
        self.outcomes[outcome] += 1

    def expire(self, tick: int) -> list[int]:
        """Drop ready lines past their time to live; return whose they were."""
        gone = [npc_id for npc_id, line in self.ready.items() if tick > line.expires_tick]
        for npc_id in gone:
            del self.ready[npc_id]
            self.outcomes["expired"] += 1
        return gone

    def report(self) -> dict[str, int]:
        """Counts for the headless report."""
        return {
            "issued": self.issued,
            "used": self.outcomes["used"],
            "expired": self.outcomes["expired"],
            "cancelled": self.outcomes["cancelled"],
            "stale": self.outcomes["stale"],
            "failed": self.outcomes["failed"],
            "in_flight": len(self.in_flight),
            "ready": len(self.ready),
        }
