"""Decision situations written down: the village model's training records and the
evaluation's labelled items share one shape (``assets/dialogue/decisions/README.md``).

Each line of a ``.jsonl`` file is one situation: who decides, their attitude and
memories, what happened (a chat line or an event), what was within reach, and the
labelled answer. Loading checks every field and names the file and line of an error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ai import PromptSpec
from ai.prompt import build_completion_prompt
from game.decisions.policy import (
    EVENTS,
    FETCHABLE,
    INTENTS,
    MOODS,
    Event,
    Mood,
    Option,
    absent_options,
    options_for,
)
from game.decisions.prompt import answer, decision_spec
from game.sim.attitude import ATTITUDE_MAX, ATTITUDE_MIN
from game.sim.cast import Cast

_KEYS = frozenset(
    {
        "id",
        "npc",
        "attitude",
        "memory",
        "event",
        "text",
        "props",
        "places",
        "villagers",
        "intent",
        "target",
        "action",
        "mood",
    }
)
HELD_OUT_ONE_IN = 10


@dataclass(frozen=True, slots=True)
class Situation:
    """One labelled decision situation."""

    source: str
    id: str
    npc: str
    attitude: int
    memory: tuple[str, ...]
    event: Event
    text: str
    props: tuple[str, ...]
    places: tuple[str, ...]
    villagers: tuple[str, ...]
    intent: str
    target: str
    action: str
    mood: Mood

    @property
    def held_out(self) -> bool:
        """Whether the record is kept out of training (stable across machines)."""
        key = f"{self.npc}|{self.event}|{' '.join(self.text.lower().split())}|{self.attitude}"
        return hashlib.sha256(key.encode()).digest()[0] % HELD_OUT_ONE_IN == 0


@dataclass(frozen=True, slots=True)
class SituationWorld:
    """What turns situations into prompts: each villager's name and label by cast id."""

    names: Mapping[str, str]
    labels: Mapping[str, str]
    places: tuple[str, ...] = ()
    """Every place of the level, present in a situation or not."""

    @classmethod
    def of(cls, cast: Cast, places: Sequence[str] = ()) -> SituationWorld:
        """The names and labels of ``cast``, and the level's ``places``."""
        return cls(
            {s.id: s.name for s in cast.npcs},
            {s.id: f"{s.name} the {s.role}" for s in cast.npcs},
            tuple(places),
        )

    def options(self, situation: Situation) -> tuple[Option, ...]:
        """The options open in the situation, in prompt order."""
        villagers = tuple((v, self.labels[v]) for v in situation.villagers)
        return options_for(situation.props, situation.places, villagers)

    def absent(self, situation: Situation) -> tuple[Option, ...]:
        """What the villager knows of but cannot do in the situation (see ``absent_options``)."""
        others = tuple((v, label) for v, label in self.labels.items() if v != situation.npc)
        return absent_options(self.options(situation), self.places, others)

    def spec(self, situation: Situation) -> PromptSpec:
        """The prompt the game builds for the situation."""
        return decision_spec(
            self.names[situation.npc],
            self.labels[situation.npc],
            situation.attitude,
            situation.memory,
            self.options(situation),
            situation.event,
            situation.text,
        )

    def prompt(self, situation: Situation) -> str:
        """The prompt as the model reads it, ending in the open quote."""
        spec = self.spec(situation)
        return build_completion_prompt(spec, spec.player_text)

    def answer(self, situation: Situation) -> str:
        """The labelled answer as the model should write it."""
        option = next(o for o in self.options(situation) if o.text == situation.action)
        return answer(option, situation.mood)


def load_situations(path: Path, cast: Cast, places: Sequence[str]) -> tuple[Situation, ...]:
    """Every situation in a ``.jsonl`` file, checked against the cast and the places."""
    ids = {s.id for s in cast.npcs}
    world = SituationWorld.of(cast)
    out: list[Situation] = []
    with path.open(encoding="utf-8") as f:
        for number, raw_line in enumerate(f, 1):
            if not raw_line.strip():
                continue
            where = f"{path.name}:{number}"
            try:
                raw = json.loads(raw_line)
                situation = _parse(raw, where, ids, set(places))
                if situation.action not in {o.text for o in world.options(situation)}:
                    raise ValueError(f"action {situation.action!r} is not among the options")
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{where}: {exc}") from exc
            out.append(situation)
    return tuple(out)


def _parse(raw: object, where: str, ids: set[str], places: set[str]) -> Situation:
    if not isinstance(raw, dict):
        raise ValueError("expected an object")
    unknown = set(raw) - _KEYS
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}")
    npc = _str(raw, "npc")
    if npc not in ids:
        raise ValueError(f"npc: unknown {npc!r}")
    attitude = raw.get("attitude", 0)
    if not isinstance(attitude, int) or not ATTITUDE_MIN <= attitude <= ATTITUDE_MAX:
        raise ValueError("attitude: expected an integer from -2 to 2")
    event = _str(raw, "event")
    if event not in EVENTS:
        raise ValueError(f"event: unknown {event!r}")
    props = _strs(raw, "props")
    if not set(props) <= set(FETCHABLE):
        raise ValueError(f"props: unknown {sorted(set(props) - set(FETCHABLE))}")
    found_places = _strs(raw, "places")
    if not set(found_places) <= places:
        raise ValueError(f"places: unknown {sorted(set(found_places) - places)}")
    villagers = _strs(raw, "villagers")
    if not set(villagers) <= ids or npc in villagers:
        raise ValueError("villagers: unknown ids or the villager themself")
    intent = _str(raw, "intent")
    if intent not in (*INTENTS, "event"):
        raise ValueError(f"intent: unknown {intent!r}")
    mood = _str(raw, "mood")
    if mood not in MOODS:
        raise ValueError(f"mood: unknown {mood!r}")
    return Situation(
        where,
        str(raw.get("id", where)),
        npc,
        attitude,
        _strs(raw, "memory"),
        event,
        _str(raw, "text") if event == "chat" else "",
        props,
        found_places,
        tuple(v for v in sorted(ids) if v in villagers),
        intent,
        _str(raw, "target"),
        _str(raw, "action"),
        mood,
    )


def _str(raw: Mapping[str, object], key: str) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str):
        raise ValueError(f"{key}: expected a string")
    return value


def _strs(raw: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key}: expected a list of strings")
    return tuple(value)
