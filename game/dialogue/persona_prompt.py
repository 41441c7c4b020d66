"""Prompts grounded in the world: who speaks, what just happened, what they remember.

The long part of every prompt (the village, its people, a few example lines) is one
text shared by every request, so llama.cpp keeps it in its KV cache and only the short
tail of each prompt costs time to read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ai import Exchange, HygieneConfig, PromptSpec
from game.dialogue.memory import (
    MEMORY_FACTS,
    MEMORY_WINDOW,
    PLAYER_SPEAKER,
    Memory,
    telling_first,
)
from game.dialogue.recall import RECALL_QUESTION
from game.dialogue.templates import fill
from game.sim.cast import Fact
from game.sim.events import Trigger

#: "fewshot" prompts any base model with the shared context and example lines;
#: "village" is the compact prompt the village adapter was trained on: no shared context,
#: the situation and what the villager knows as short notes.
PromptStyle = Literal["fewshot", "village"]

#: The most recent memories a village-style prompt carries (as many as the corpus has).
VILLAGE_MEMORIES = 2
#: How a villager may feel about the listener (the corpus uses the same words).
ATTITUDES = ("friendly", "wary", "cross")
#: Where a villager's own errand stands, as prompts name it ("" before it is asked).
ERRAND_STATES = ("asked", "done")

_PROP_TRIGGERS = frozenset({Trigger.HIT, Trigger.NEAR_MISS})

_PREAMBLE = (
    "Lines spoken by villagers in Millbrook, a small farming village. "
    "Each line is one short spoken sentence, in character, about what just happened."
)

# Each villager's own template lines double as few-shot examples, in the exact format
# of a request, so the model sees their voice and the shape of the answer.
_EXAMPLE_TRIGGERS = (
    Trigger.HIT,
    Trigger.FAREWELL,
    Trigger.TOPPLED,
    Trigger.NEAR_MISS,
    Trigger.BUMPED,
    Trigger.ERRAND_DONE,
    Trigger.AMBIENT,
)


# Two answers that use what the villager knows, in the exact shape of a chat request: a
# base model learns from them that a "knows" note is what the answer should say.
_CHAT_DEMO = (
    'Odo the farmer (knows): "My goat keeps getting out of her pen."',
    'Player: "How is your goat?"',
    'Odo the farmer (replying to the traveller): "Out of her pen again, the rascal."',
    'Sela the guard (knows): "The east gate is shut at dusk."',
    'Player: "When does the gate close?"',
    'Sela the guard (replying to the traveller): "At dusk, citizen. Not a minute later."',
)


@dataclass(frozen=True, slots=True)
class Persona:
    """What the prompt needs to know about one villager."""

    name: str
    role: str
    persona: str
    lines: Mapping[Trigger, tuple[str, ...]] = field(default_factory=dict)
    openers: Mapping[Trigger, tuple[str, ...]] = field(default_factory=dict)
    facts: tuple[Fact, ...] = ()
    recall_openers: tuple[str, ...] = ()
    """First words of an answer to "do you remember me?" from a villager who does."""
    stranger_openers: tuple[str, ...] = ()
    """First words of that answer from one who remembers nothing of the traveller."""

    @property
    def label(self) -> str:
        """How the villager is named in prompts: "Marta the baker"."""
        return f"{self.name} the {self.role}"


@dataclass(frozen=True, slots=True)
class Moment:
    """A bark's situation as the bank matches it: labels as prompts name people."""

    speaker: str
    trigger: Trigger
    listener: str = "traveller"
    prop: str = ""
    errand: str = ""
    memory: tuple[str, ...] = ()
    attitude: str = ""

    @property
    def key(self) -> tuple[object, ...]:
        """What makes the situation itself (a corpus record's ``situation_key``)."""
        prop = self.prop if self.trigger in _PROP_TRIGGERS else ""
        return (self.listener, prop, self.errand, frozenset(self.memory), self.attitude)


def shared_context(cast: Sequence[Persona]) -> str:
    """The stable prefix: the village, its people (each role once) and example lines."""
    people: list[Persona] = []
    for person in cast:
        if person.role not in {p.role for p in people}:
            people.append(person)
    bios = [f"- {p.label}: {p.persona}" for p in people]
    examples = []
    for i, person in enumerate(people):
        picks = (Trigger.GREET, _EXAMPLE_TRIGGERS[i % 7], _EXAMPLE_TRIGGERS[(i + 3) % 7])
        for trigger in picks:
            options = person.lines.get(trigger, ())
            if options:
                text = fill(options[0], name=person.name, listener="traveller")
                examples.append(f'{person.label} ({situation(trigger, "traveller")}): "{text}"')
    return "\n".join([_PREAMBLE, "", "The villagers:", *bios, "", *examples, *_CHAT_DEMO])


def situation(trigger: Trigger, listener: str, subject: str = "", errand: str = "") -> str:
    """A few words on what just happened, for the line's ``Name (situation):`` slot.

    ``listener`` is "traveller" or a villager's label ("Odo the farmer").
    """
    errand = errand[:1].lower() + errand[1:]
    who = _who(listener)
    match trigger:
        case Trigger.GREET:
            return f"{who} walks up"
        case Trigger.FAREWELL:
            return f"{who} walks away"
        case Trigger.HIT:
            return f"hit by a {subject or 'flying object'}"
        case Trigger.NEAR_MISS:
            return f"a {subject or 'barrel'} lands close by"
        case Trigger.BUMPED:
            return f"bumped by {who}"
        case Trigger.TOPPLED:
            return "the crate stack topples over"
        case Trigger.ERRAND_OFFER:
            return f"asking {who} to {errand or 'help out'}"
        case Trigger.ERRAND_DONE:
            return f"{who} finished the errand: {errand or 'the job'}"
        case Trigger.ERRAND_HINT:
            return f"telling {who} how to {errand or 'get up there'}"
        case Trigger.AMBIENT:
            return f"chatting with {who}"
        case Trigger.CHAT:
            return f"replying to {who}"


def _who(listener: str) -> str:
    return "the traveller" if listener == "traveller" else listener


def _known_lines(speaker: Persona, known: Sequence[Fact]) -> tuple[Exchange, ...]:
    """Facts as the villager's own words, just before the question, as the example shows."""
    return tuple(Exchange(f"{speaker.label} (knows)", fact.text) for fact in known)


def build_prompt(
    context: str,
    speaker: Persona,
    trigger: Trigger,
    listener: str,
    memory: Memory,
    subject: str = "",
    errand: str = "",
    player_text: str = "",
    known: Sequence[Fact] = (),
    style: PromptStyle = "fewshot",
    attitude: str = "",
    errand_state: str = "",
    recall: bool = False,
    examples: str = "",
) -> PromptSpec:
    """One request's prompt. Only CHAT carries the conversation, to keep barks short.

    ``known`` are the facts that answer the player's question; a chat also carries the
    summary of exchanges older than the memory's window. The "village" style drops the
    shared context and says the villager's attitude, errand and facts as notes.

    ``examples``: lines of the village corpus that open a village-style prompt
    (``game.dialogue.examples``).

    ``recall``: the player asked whether the villager remembers them (see
    ``game.dialogue.recall``). The question goes in its canonical words, and every
    remembered fact goes in, the most telling first.
    """
    chat = trigger is Trigger.CHAT
    facts = telling_first(memory.facts) if recall else memory.facts
    notes = [f"{speaker.name} remembers: {fact}." for fact in facts]
    if chat and memory.summary:
        notes.append(memory.summary)
    history = memory.exchanges if chat else ()
    if recall:
        history = _without_last_ask(history, player_text)
        player_text = RECALL_QUESTION
    if style == "village":
        # The adapter was trained on at most two memories a line; more confuse it. The
        # answer to "do you remember me?" is the one place it needs them all.
        if not recall:
            del notes[: max(0, len(memory.facts) - VILLAGE_MEMORIES)]
        notes[:0] = _village_notes(speaker, listener, attitude, errand_state)
        notes.extend(f"{speaker.name} knows: {fact.text}" for fact in known)
        return PromptSpec(
            context=examples,
            speaker=speaker.label,
            situation=situation(trigger, listener, subject, errand),
            notes=tuple(notes),
            history=history,
            player_text=player_text,
            conversation=chat,
        )
    return PromptSpec(
        context=context,
        speaker=speaker.label,
        situation=situation(trigger, listener, subject, errand),
        notes=tuple(notes),
        history=(*history, *_known_lines(speaker, known)) if chat else (),
        player_text=player_text,
        conversation=chat,
    )


def _without_last_ask(history: tuple[Exchange, ...], asked: str) -> tuple[Exchange, ...]:
    """The history without the player's newest line when it is ``asked`` (it goes in as the
    question, in other words)."""
    for i in range(len(history) - 1, -1, -1):
        if history[i].speaker == PLAYER_SPEAKER:
            if history[i].text == asked:
                return history[:i] + history[i + 1 :]
            break
    return history


def _village_notes(speaker: Persona, listener: str, attitude: str, errand_state: str) -> list[str]:
    """How the villager feels and where their errand stands, for the village style."""
    notes = []
    if attitude:
        notes.append(f"{speaker.name} feels {attitude} towards {_who(listener)}.")
    if errand_state == "asked":
        notes.append(f"{speaker.name} has asked the traveller for help; it is not done yet.")
    elif errand_state == "done":
        notes.append(f"The traveller already did {speaker.name}'s errand.")
    return notes


def largest_prompts(
    context: str, personas: Iterable[Persona], hygiene: HygieneConfig
) -> list[tuple[str, PromptSpec]]:
    """Each villager's longest possible prompt, longest persona first, for the load check.

    The shared prefix plus a full memory (every remembered line and fact at its longest)
    and a player's line at its cap.
    """
    longest = sorted(personas, key=lambda p: len(p.persona), reverse=True)
    line = ("word " * hygiene.max_chars)[: hygiene.max_chars]
    history = tuple(Exchange("Player", line) for _ in range(MEMORY_WINDOW))
    notes = tuple(line for _ in range(MEMORY_FACTS + 1))  # the facts and the summary
    player = ("word " * hygiene.player_text_max_chars)[: hygiene.player_text_max_chars]
    return [
        (
            f"{p.name} the {p.role} (persona of {len(p.persona)} characters)",
            PromptSpec(context, p.label, "is spoken to", notes, history, player),
        )
        for p in longest
    ]
