"""One record per line request, from submit until its answer is settled.

Every request the model source makes lives in one table, keyed by its handle. The record
says what kind of line it is, what it answers and how far it has got; the snapshot it
was asked with travels on the request and comes back on every runtime event.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum

from ai import Handle, LineRequest
from game.dialogue.line_source import LineAsk
from game.dialogue.validation import LineSnapshot


class LineKind(Enum):
    """Why a request was made, which decides what happens to its answer."""

    REACTION = "reaction"  # a trigger fired: show the line as soon as it fits
    PREDICTION = "prediction"  # a greeting asked ahead: keep it until its trigger fires
    PARTING = "parting"  # a farewell asked when the greeting was said: kept the same way
    CHAT = "chat"  # a reply to the player: streamed into its bubble token by token


class LineState(Enum):
    """How far a request has got."""

    WAITING = "waiting"  # queued or generating, nothing shown yet
    PROMOTED = "promoted"  # a prediction whose trigger fired: its answer goes straight up
    STREAMING = "streaming"  # a chat reply with text already on screen


def snapshot_of(request: LineRequest) -> LineSnapshot:
    """The snapshot a request was made with (the runtime carries it untouched)."""
    snapshot = request.snapshot
    if not isinstance(snapshot, LineSnapshot):
        raise TypeError(f"request {request.signature!r} carries no line snapshot")
    return snapshot


@dataclass(slots=True)
class LineRecord:
    """One request in flight. ``ask`` is None while a prediction waits for its trigger.

    ``streamed`` is a chat reply's text so far: its bubble shows it, or the same text a
    few tokens short; once it is not empty, the player has started to read the reply.
    """

    kind: LineKind
    handle: Handle
    request: LineRequest
    ask: LineAsk | None
    state: LineState = LineState.WAITING
    tokens: int = 0
    streamed: str = ""

    @property
    def npc_id(self) -> int:
        """The villager who will speak the line."""
        return self.request.npc_id

    @property
    def snapshot(self) -> LineSnapshot:
        """The world as the request saw it."""
        return snapshot_of(self.request)

    def promote(self, ask: LineAsk) -> None:
        """The trigger this prediction was made for has fired: answer ``ask`` with it."""
        self.ask = ask
        self.state = LineState.PROMOTED


class LineRecords:
    """The table of requests in flight, by handle id."""

    def __init__(self) -> None:
        self._by_handle: dict[int, LineRecord] = {}

    def add(self, record: LineRecord) -> None:
        """Track a request just submitted."""
        self._by_handle[record.handle.id] = record

    def get(self, handle: Handle) -> LineRecord | None:
        """The record for a handle, if it is still in flight."""
        return self._by_handle.get(handle.id)

    def remove(self, handle: Handle) -> LineRecord | None:
        """Stop tracking a request; return its record if it was tracked."""
        return self._by_handle.pop(handle.id, None)

    def of_kind(self, kind: LineKind) -> Iterator[LineRecord]:
        """Every record of one kind (a snapshot of the table: safe to remove while looping)."""
        return iter([r for r in self._by_handle.values() if r.kind is kind])

    def prediction_for(
        self, npc_id: int, kind: LineKind = LineKind.PREDICTION
    ) -> LineRecord | None:
        """The villager's greeting (or ``kind``) request in flight, if any."""
        for record in self._by_handle.values():
            if record.kind is kind and record.npc_id == npc_id:
                return record
        return None

    def __len__(self) -> int:
        return len(self._by_handle)
