"""What villagers remember: only lines that were shown, and a few facts about the player.

Conversation memory is a bounded window: the last few shown exchanges verbatim, and one
short line that sums up the ones before them. A prompt therefore stays the same size
however long the player talks, and so does the time to the reply's first word.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from ai import Exchange
from ai.selection import words
from game.sim.attitude import clamp_attitude

_SUMMARY_TOPICS = 6
# Lines a new line must not repeat: more than the window, so a bark does not come back
# as soon as it has scrolled out of the conversation.
_RECENT = 12

#: How many shown lines and facts each villager keeps (the prompt's tail grows with them).
# How the player's own lines are labelled in a villager's memory and in prompts.
PLAYER_SPEAKER = "Player"
MEMORY_WINDOW = 4
MEMORY_FACTS = 4

# The facts the dialogue records about the traveller, in these words (the corpus too).
ERRAND_FACT = "the traveller helped with their errand"
BUMPED_FACT = "the traveller bumped into them"
THREW_FACT = "the traveller threw "
ASKED_FACT = "the traveller asked them about "
# How much each kind of fact tells of the traveller: a finished errand most, a bump least.
_TELLING = ((ERRAND_FACT, 3), (THREW_FACT, 2), (ASKED_FACT, 1), (BUMPED_FACT, 0))


def telling(fact: str) -> int:
    """How much a remembered fact tells of the traveller, from 3 (an errand done) to 0."""
    return next((rank for start, rank in _TELLING if fact.startswith(start)), 1)


def telling_first(facts: Iterable[str]) -> tuple[str, ...]:
    """``facts`` (oldest first) with the most telling first, the newer first among equals."""
    newest_first = list(facts)[::-1]
    return tuple(sorted(newest_first, key=telling, reverse=True))


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """What one villager remembers, as plain data for a save: the (speaker, text) lines in
    the window, the facts, the summary's parts (how many older lines, their topics), how
    they feel about the traveller (attitude, -2 to +2) and whether they have met."""

    lines: tuple[tuple[str, str], ...] = ()
    facts: tuple[str, ...] = ()
    older: int = 0
    topics: tuple[str, ...] = ()
    attitude: int = 0
    met: bool = False


@dataclass(frozen=True, slots=True)
class Recollection:
    """What a line's checks read of the speaker's memory, fixed when the line is asked.

    It crosses to the worker with the request, which gathers the checks' word lists from
    it (``game.dialogue.line_plan``): the memory itself goes on changing on the main thread.
    """

    facts: tuple[str, ...] = ()
    recent_lines: tuple[str, ...] = ()
    met: bool = False


class Memory:
    """One villager's memory: a window of shown exchanges, a summary of older ones, facts.

    Lines enter only through ``record_shown``, which the dialogue calls at the moment a
    bubble appears, so a line that was dropped as stale can never be remembered. A plain
    data holder: ``exchanges``, ``facts`` and ``summary`` are all there is to save.
    """

    def __init__(self, window: int = MEMORY_WINDOW, max_facts: int = MEMORY_FACTS) -> None:
        self._exchanges: deque[Exchange] = deque(maxlen=window)
        self._facts: deque[str] = deque(maxlen=max_facts)
        self._topics: deque[str] = deque(maxlen=_SUMMARY_TOPICS)
        self._recent: deque[str] = deque(maxlen=_RECENT)
        self._older = 0
        self.attitude = 0
        """How the villager feels about the traveller, from -2 (cross) to +2."""
        self.met = False
        """Whether the villager has met the traveller: said a line to them, or heard one.
        Lines to other villagers do not count: in a crowd most villagers have chatted
        long before the traveller walks up."""

    def record_shown(self, speaker: str, text: str) -> None:
        """Remember a line that was on screen; the oldest line leaves the window for the summary."""
        window = self._exchanges
        if window.maxlen is not None and len(window) == window.maxlen:
            self._fold(window[0])
        window.append(Exchange(speaker, text))
        self._recent.append(text)

    def forget(self, speaker: str, text: str) -> None:
        """Take back the newest ``speaker`` line ``text``: words the filter refused late."""
        window = self._exchanges
        for i in range(len(window) - 1, -1, -1):
            if window[i].speaker == speaker and window[i].text == text:
                del window[i]
                break
        recent = self._recent
        for i in range(len(recent) - 1, -1, -1):
            if recent[i] == text:
                del recent[i]
                break

    def with_line(self, speaker: str, text: str) -> Memory:
        """A copy of this memory with one more line shown; this one is left as it was.

        What the memory will hold once the player has said ``text``: a reply's prompt can
        be built from it while they are still typing.
        """
        copy = self._copy(self._facts)
        copy.record_shown(speaker, text)
        return copy

    def with_facts(self, facts: Iterable[str]) -> Memory:
        """A copy of this memory that holds only ``facts``; this one is left as it was."""
        return self._copy(facts)

    def _copy(self, facts: Iterable[str]) -> Memory:
        copy = Memory(self._exchanges.maxlen or MEMORY_WINDOW, self._facts.maxlen or MEMORY_FACTS)
        copy._exchanges.extend(self._exchanges)
        copy._facts.extend(facts)
        copy._topics.extend(self._topics)
        copy._recent.extend(self._recent)
        copy._older = self._older
        copy.attitude = self.attitude
        copy.met = self.met
        return copy

    def _fold(self, old: Exchange) -> None:
        self._older += 1
        for word in words(old.text):
            if len(word) > 4 and word not in self._topics:
                self._topics.append(word)

    def add_fact(self, fact: str) -> None:
        """Remember a fact; repeating one moves it to the most recent place.

        When the memory is full, the oldest of the least telling facts makes room (not
        simply the oldest), so four questions do not wipe out an errand done.
        """
        facts = self._facts
        if fact in facts:
            facts.remove(fact)
        elif facts.maxlen is not None and len(facts) == facts.maxlen and facts:
            least = min(telling(old) for old in facts)
            facts.remove(next(old for old in facts if telling(old) == least))
        facts.append(fact)

    def restore(
        self,
        exchanges: tuple[Exchange, ...],
        facts: tuple[str, ...],
        older: int = 0,
        topics: tuple[str, ...] = (),
    ) -> None:
        """Put back a saved memory: the window, the facts and the summary's parts."""
        self._exchanges.clear()
        self._exchanges.extend(exchanges)
        self._recent.clear()
        self._recent.extend(turn.text for turn in exchanges)
        self._facts.clear()
        self._facts.extend(facts)
        self._older = max(0, older)
        self._topics.clear()
        self._topics.extend(topics)

    @property
    def older(self) -> int:
        """How many lines have left the window for the summary."""
        return self._older

    @property
    def topics(self) -> tuple[str, ...]:
        """The longer words of those older lines, most recent last."""
        return tuple(self._topics)

    @property
    def exchanges(self) -> tuple[Exchange, ...]:
        """The remembered exchanges, oldest first."""
        return tuple(self._exchanges)

    @property
    def recent_lines(self) -> tuple[str, ...]:
        """The last dozen lines shown, the window's included, oldest first."""
        return tuple(self._recent)

    @property
    def facts(self) -> tuple[str, ...]:
        """The remembered facts, oldest first."""
        return tuple(self._facts)

    @property
    def summary(self) -> str:
        """One short line on the exchanges older than the window, or "" if there are none."""
        if not self._older:
            return ""
        line = f"Earlier {self._older} lines were exchanged"
        if self._topics:
            line += " about " + ", ".join(self._topics)
        return line + "."

    def recollection(self) -> Recollection:
        """The facts and lines a line's checks read, as they are now."""
        return Recollection(tuple(self._facts), tuple(self._recent), self.met)

    def to_record(self) -> MemoryRecord:
        """Everything this memory holds, for a save."""
        return MemoryRecord(
            tuple((e.speaker, e.text) for e in self._exchanges),
            tuple(self._facts),
            self._older,
            tuple(self._topics),
            self.attitude,
            self.met,
        )

    def restore_record(self, record: MemoryRecord) -> None:
        """Replace what this memory holds with a saved record (trimmed to its window)."""
        self.restore(
            tuple(Exchange(speaker, text) for speaker, text in record.lines),
            record.facts,
            record.older,
            record.topics,
        )
        self.attitude = clamp_attitude(int(record.attitude))
        self.met = bool(record.met)


class Memories:
    """Every villager's memory, created on first use."""

    def __init__(self, window: int = MEMORY_WINDOW, max_facts: int = MEMORY_FACTS) -> None:
        self._window = window
        self._max_facts = max_facts
        self._by_npc: dict[int, Memory] = {}

    def of(self, npc_id: int) -> Memory:
        """The memory of one villager."""
        memory = self._by_npc.get(npc_id)
        if memory is None:
            memory = self._by_npc[npc_id] = Memory(self._window, self._max_facts)
        return memory

    def records(self) -> dict[int, MemoryRecord]:
        """Every villager's memory as a record, for a save."""
        return {npc_id: memory.to_record() for npc_id, memory in self._by_npc.items()}

    def lines_remembered(self) -> int:
        """How many lines all villagers remember together."""
        return sum(len(m.exchanges) for m in self._by_npc.values())
