"""What villagers remember: only lines that were shown, and a few facts about the player."""

from __future__ import annotations

from collections import deque

from ai import Exchange


class Memory:
    """One villager's memory: a sliding window of shown exchanges and a few facts.

    Lines enter only through ``record_shown``, which the dialogue calls at the moment a
    bubble appears, so a line that was dropped as stale can never be remembered.
    """

    def __init__(self, window: int = 6, max_facts: int = 4) -> None:
        self._exchanges: deque[Exchange] = deque(maxlen=window)
        self._facts: deque[str] = deque(maxlen=max_facts)

    def record_shown(self, speaker: str, text: str) -> None:
        """Remember a line that was on screen."""
        self._exchanges.append(Exchange(speaker, text))

    def add_fact(self, fact: str) -> None:
        """Remember a fact; repeating one moves it to the most recent place."""
        if fact in self._facts:
            self._facts.remove(fact)
        self._facts.append(fact)

    @property
    def exchanges(self) -> tuple[Exchange, ...]:
        """The remembered exchanges, oldest first."""
        return tuple(self._exchanges)

    @property
    def facts(self) -> tuple[str, ...]:
        """The remembered facts, oldest first."""
        return tuple(self._facts)


class Memories:
    """Every villager's memory, created on first use."""

    def __init__(self, window: int = 6, max_facts: int = 4) -> None:
        self._window = window
        self._max_facts = max_facts
        self._by_npc: dict[int, Memory] = {}

    def of(self, npc_id: int) -> Memory:
        """The memory of one villager."""
        memory = self._by_npc.get(npc_id)
        if memory is None:
            memory = self._by_npc[npc_id] = Memory(self._window, self._max_facts)
        return memory

    def lines_remembered(self) -> int:
        """How many lines all villagers remember together."""
        return sum(len(m.exchanges) for m in self._by_npc.values())
