"""Prompts grounded in the world: who speaks, what just happened, what they remember.

The long part of every prompt (the village, its people, a few example lines) is one
text shared by every request, so llama.cpp keeps it in its KV cache and only the short
tail of each prompt costs time to read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ai import PromptSpec
from game.dialogue.memory import Memory
from game.sim.events import Trigger

_PREAMBLE = (
    "Lines spoken by villagers in Millbrook, a small village in a physics game. "
    "Each line is one short sentence, in character, reacting to what just happened."
)

_EXAMPLES = (
    'Guard (a ball bounces off his helmet): "Oi! Who threw that?"',
    'Farmer (a stranger walks up to him): "Morning! Mind the chickens."',
    'Baker (the traveller drops apples in her basket): "Lovely, that\'s the pie sorted!"',
    'Smith (a barrel lands next to him): "Careful! That nearly took my foot off."',
)


@dataclass(frozen=True, slots=True)
class Persona:
    """What the prompt needs to know about one villager."""

    name: str
    role: str
    persona: str


def shared_context(cast: Sequence[Persona]) -> str:
    """The stable prefix: the village, its people (each role once) and example lines."""
    seen: set[str] = set()
    people = []
    for person in cast:
        if person.role not in seen:
            seen.add(person.role)
            people.append(f"- {person.name}, the {person.role}: {person.persona}")
    return "\n".join([_PREAMBLE, "", "The villagers:", *people, "", *_EXAMPLES])


def situation(
    trigger: Trigger, listener: str, subject: str = "", errand: str = "", pronoun: str = "them"
) -> str:
    """A few words on what just happened, for the line's ``Name (situation):`` slot."""
    match trigger:
        case Trigger.GREET:
            return f"the {listener} walks up to {pronoun}"
        case Trigger.FAREWELL:
            return f"the {listener} walks away"
        case Trigger.HIT:
            return f"a {subject or 'flying object'} just hit {pronoun}"
        case Trigger.NEAR_MISS:
            return f"a {subject or 'barrel'} just landed right next to {pronoun}"
        case Trigger.BUMPED:
            return f"the {listener} bumps into {pronoun}"
        case Trigger.TOPPLED:
            return "the crate stack just toppled over"
        case Trigger.ERRAND_OFFER:
            return f"asking the {listener} to {errand or 'help out'}"
        case Trigger.ERRAND_DONE:
            return f"the {listener} just finished the errand: {errand or 'the job'}"
        case Trigger.AMBIENT:
            return f"chatting with {listener}"
        case Trigger.CHAT:
            return f"the {listener} says something"


def build_prompt(
    context: str,
    speaker: Persona,
    trigger: Trigger,
    listener: str,
    memory: Memory,
    subject: str = "",
    errand: str = "",
    perceived: Sequence[str] = (),
    player_text: str = "",
) -> PromptSpec:
    """One request's prompt. Only CHAT carries the conversation, to keep barks short."""
    notes = [f"{speaker.name} remembers: {fact}." for fact in memory.facts]
    if perceived:
        notes.append(f"Nearby: {', '.join(perceived)}.")
    return PromptSpec(
        context=context,
        speaker=f"{speaker.name} the {speaker.role}",
        situation=situation(trigger, listener, subject, errand),
        notes=tuple(notes),
        history=memory.exchanges if trigger is Trigger.CHAT else (),
        player_text=player_text,
    )
