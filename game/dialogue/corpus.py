"""The village dialogue corpus: hand-written lines the village adapter is trained on.

Each record of ``assets/dialogue/corpus/*.jsonl`` is one situation and the line the
villager says in it. A record turns into the very prompt the game builds for that
situation (:func:`record_prompt`, through :func:`~game.dialogue.persona_prompt.build_prompt`
in the "village" style), so what the model is trained on is what it is asked in play.

The loader validates every record and names the file and line of any error. A fixed
share of records is held out (:func:`is_held_out`): whole situations for barks, and
whole questions for chats, so held-out figures are on combinations and phrasings the
model never saw.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ai import PromptSpec
from ai.hygiene import sentence_end
from ai.prompt import build_completion_prompt
from game.assets import ASSETS_DIR, AssetError
from game.dialogue.line_plan import VILLAGE_SENTENCE_WORDS, bark_memories
from game.dialogue.memory import PLAYER_SPEAKER, Memory
from game.dialogue.persona_prompt import ATTITUDES, ERRAND_STATES, Persona, build_prompt
from game.dialogue.recall import is_recall_question
from game.sim.cast import Cast, Fact
from game.sim.events import Trigger
from game.sim.level import Level

CORPUS_DIR = "dialogue/corpus"
PROPS = ("crate", "barrel", "apple", "ball")
MAX_LINE_CHARS = 120
#: One record in this many is held out of training.
HELD_OUT_ONE_IN = 10
_BARK_KEYS = frozenset(
    {"npc", "trigger", "listener", "prop", "errand", "memory", "attitude", "line"}
)
_CHAT_KEYS = frozenset(
    {"npc", "trigger", "question", "knows", "memory", "attitude", "history", "line"}
)
_MEMORY_PREFIXES = (
    "the traveller threw ",
    "the traveller bumped into them",
    "the traveller helped with their errand",
    "the traveller asked them about ",
)


@dataclass(frozen=True, slots=True)
class CorpusRecord:
    """One situation and the line said in it (``question`` and ``knows`` for chats)."""

    source: str
    npc: str
    trigger: Trigger
    line: str
    listener: str = "traveller"
    prop: str = ""
    errand: str = ""
    memory: tuple[str, ...] = ()
    attitude: str = ""
    question: str = ""
    knows: tuple[str, ...] = ()
    history: tuple[tuple[str, str], ...] = ()

    @property
    def situation_key(self) -> str:
        """What makes the situation itself, without the line (or the question's case)."""
        if self.trigger is Trigger.CHAT:
            return f"{self.npc}|chat|{' '.join(self.question.lower().split())}"
        fields = (self.npc, self.trigger.value, self.listener, self.prop, self.errand)
        return "|".join((*fields, ";".join(sorted(self.memory)), self.attitude))


def is_held_out(record: CorpusRecord) -> bool:
    """Whether the record belongs to the held-out split (stable across runs and machines)."""
    digest = hashlib.sha256(record.situation_key.encode()).digest()
    return digest[0] % HELD_OUT_ONE_IN == 0


def load_corpus(cast: Cast, folder: str | Path = CORPUS_DIR) -> tuple[CorpusRecord, ...]:
    """Every record in ``folder``'s ``*.jsonl`` files, validated against ``cast``.

    Raises AssetError naming the file and line of the first bad record.
    """
    path = Path(folder) if Path(folder).is_absolute() else ASSETS_DIR / folder
    files = sorted(path.glob("*.jsonl"))
    if not files:
        raise AssetError(f"{path}: no corpus files (*.jsonl)")
    checker = _Checker(cast)
    records: list[CorpusRecord] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise AssetError(f"{file}: cannot read: {exc}") from None
        for number, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            where = f"{file.name} line {number}"
            try:
                records.append(checker.record(json.loads(raw), where))
            except json.JSONDecodeError as exc:
                raise AssetError(f"{where}: not JSON: {exc.msg}") from None
            except (ValueError, TypeError) as exc:
                raise AssetError(f"{where}: {exc}") from None
    return tuple(records)


class _Checker:
    """Turns raw JSON objects into records, checking every value against the cast."""

    def __init__(self, cast: Cast) -> None:
        self._ids = {spec.id for spec in cast.npcs}
        self._facts = {fact.text for spec in cast.npcs for fact in spec.facts}
        self._facts.update(fact.text for fact in cast.facts)
        self._names = {spec.name for spec in cast.npcs}

    def record(self, raw: object, where: str) -> CorpusRecord:
        if not isinstance(raw, dict):
            raise ValueError("expected a JSON object")
        npc = _text(raw, "npc")
        if npc not in self._ids:
            raise ValueError(f"npc: unknown villager {npc!r}")
        trigger_name = _text(raw, "trigger")
        if trigger_name not in {t.value for t in Trigger}:
            raise ValueError(f"trigger: unknown {trigger_name!r}")
        trigger = Trigger(trigger_name)
        keys = _CHAT_KEYS if trigger is Trigger.CHAT else _BARK_KEYS
        if set(raw) != keys:
            raise ValueError(f"keys must be exactly {sorted(keys)}, got {sorted(raw)}")
        line = _text(raw, "line")
        if not line or len(line) > MAX_LINE_CHARS or '"' in line or "\n" in line:
            raise ValueError(f"line: 1 to {MAX_LINE_CHARS} characters, no double quotes")
        # Writers say "a apple" as often as "an apple"; the game says the latter.
        memory = tuple(f.replace(" a apple ", " an apple ") for f in _texts(raw, "memory"))
        for fact in memory:
            if not fact.startswith(_MEMORY_PREFIXES):
                raise ValueError(f"memory: unknown fact {fact!r}")
        attitude = _text(raw, "attitude")
        if attitude not in ("", *ATTITUDES):
            raise ValueError(f"attitude: unknown {attitude!r}")
        if trigger is Trigger.CHAT:
            return self._chat(raw, where, npc, line, memory, attitude)
        listener = _text(raw, "listener")
        if listener != "traveller" and (listener not in self._ids or listener == npc):
            raise ValueError(f"listener: {listener!r} is not the traveller or another villager")
        prop = _text(raw, "prop")
        if prop not in ("", *PROPS):
            raise ValueError(f"prop: unknown {prop!r}")
        errand = _text(raw, "errand")
        if errand not in ("", *ERRAND_STATES):
            raise ValueError(f"errand: unknown state {errand!r}")
        return CorpusRecord(where, npc, trigger, line, listener, prop, errand, memory, attitude)

    def _chat(
        self,
        raw: Mapping[str, object],
        where: str,
        npc: str,
        line: str,
        memory: tuple[str, ...],
        attitude: str,
    ) -> CorpusRecord:
        question = _text(raw, "question")
        if not question.strip():
            raise ValueError("question: empty")
        knows = _texts(raw, "knows")
        for fact in knows:
            if fact not in self._facts:
                raise ValueError(f"knows: not a fact of the cast: {fact!r}")
        history_raw = raw.get("history")
        if not isinstance(history_raw, list):
            raise ValueError("history: expected a list of [speaker, text] pairs")
        history: list[tuple[str, str]] = []
        for turn in history_raw:
            if (
                not isinstance(turn, list)
                or len(turn) != 2
                or not all(isinstance(part, str) and part for part in turn)
            ):
                raise ValueError("history: expected a list of [speaker, text] pairs")
            if turn[0] != PLAYER_SPEAKER and turn[0] not in self._names:
                raise ValueError(f"history: unknown speaker {turn[0]!r}")
            history.append((turn[0], turn[1]))
        return CorpusRecord(
            where,
            npc,
            Trigger.CHAT,
            line,
            memory=memory,
            attitude=attitude,
            question=question,
            knows=knows,
            history=tuple(history),
        )


def _text(raw: Mapping[str, object], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key}: expected a string")
    return value


def _texts(raw: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = raw.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{key}: expected a list of strings")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class CorpusWorld:
    """What turns records into prompts: the villagers by id and the errands' titles."""

    personas: Mapping[str, Persona]
    errand_titles: Mapping[str, str]
    facts: Mapping[str, Fact]


def corpus_world(cast: Cast, level: Level) -> CorpusWorld:
    """The personas of ``cast``, the titles of ``level``'s errands and every fact by its text."""
    personas = {
        spec.id: Persona(spec.name, spec.role, spec.persona, spec.lines, spec.openers, spec.facts)
        for spec in cast.npcs
    }
    facts = {fact.text: fact for spec in cast.npcs for fact in spec.facts}
    facts.update({fact.text: fact for fact in cast.facts})
    return CorpusWorld(personas, {e.giver: e.title for e in level.errands}, facts)


def game_asks(record: CorpusRecord) -> bool:
    """Whether the game ever builds the record's prompt.

    A bark's prompt names at most one memory, never a bump, and no earlier throw in the
    reaction to a hit or near miss (:func:`game.dialogue.line_plan.bark_memories`). A
    record written with other memories teaches a line for a prompt the game never sends,
    and its line leans on a memory the game's prompt would not carry.
    """
    if record.trigger is Trigger.CHAT:
        return True
    return bark_memories(record.memory, record.trigger) == record.memory


def training_line(record: CorpusRecord) -> str:
    """The record's line as the game would show it: a bark ends at its first sentence of
    at least :data:`~game.dialogue.line_plan.VILLAGE_SENTENCE_WORDS` words, where the
    worker stops it; a chat answer is whole."""
    if record.trigger is Trigger.CHAT:
        return record.line
    end = sentence_end(record.line, VILLAGE_SENTENCE_WORDS)
    return record.line if end is None else record.line[:end]


def record_prompt(record: CorpusRecord, world: CorpusWorld, examples: str = "") -> str:
    """The prompt the game would build for the record's situation, ending in an open quote.

    ``examples`` open it, as the lines of the corpus the game shows before a bark.
    """
    spec = record_spec(record, world, examples)
    return build_completion_prompt(spec, spec.player_text)


def record_spec(record: CorpusRecord, world: CorpusWorld, examples: str = "") -> PromptSpec:
    """The game's prompt parts for the record's situation, in the village style."""
    speaker = world.personas[record.npc]
    memory = Memory()
    for fact in record.memory:
        memory.add_fact(fact)
    for who, text in record.history:
        memory.record_shown(who, text)
    if record.question:
        memory.record_shown(PLAYER_SPEAKER, record.question)
    listener = (
        "traveller" if record.listener == "traveller" else world.personas[record.listener].label
    )
    errand = ""
    if record.trigger in (Trigger.ERRAND_OFFER, Trigger.ERRAND_DONE):
        errand = world.errand_titles.get(record.npc, "")
    addresses = [w for p in world.personas.values() for w in (p.name, p.role)]
    recall = record.trigger is Trigger.CHAT and is_recall_question(record.question, addresses)
    return build_prompt(
        "",
        speaker,
        record.trigger,
        listener,
        memory,
        subject=record.prop,
        errand=errand,
        player_text=record.question,
        known=tuple(world.facts[text] for text in record.knows),
        style="village",
        attitude=record.attitude,
        errand_state=record.errand,
        recall=recall,
        examples=examples,
    )


def split(
    records: Iterable[CorpusRecord],
) -> tuple[tuple[CorpusRecord, ...], tuple[CorpusRecord, ...]]:
    """(training, held out)."""
    train: list[CorpusRecord] = []
    held: list[CorpusRecord] = []
    for record in records:
        (held if is_held_out(record) else train).append(record)
    return tuple(train), tuple(held)


def counts(records: Sequence[CorpusRecord]) -> dict[str, dict[str, int]]:
    """Records per villager and trigger, for the corpus's README."""
    out: dict[str, dict[str, int]] = {}
    for record in records:
        row = out.setdefault(record.npc, {})
        row[record.trigger.value] = row.get(record.trigger.value, 0) + 1
    return out
