"""The decision prompt, in the village model's compact style, and the answer it expects.

It lists what the villager could do now and ends where the decision is written::

    Note: Marta feels wary towards the traveller.
    Note: Marta remembers: the traveller threw a crate at them.
    Note: Marta could: follow the traveller, fetch the apple, show the way, call someone, ...
    Player: "could you bring me an apple?"
    Marta the baker (decides what to do): "turn away; unmoved"

The note names the props within reach, which change; places and villagers are the
level's and the cast's, so it says only "show the way" and "call someone". The game
scores each option's text after the open quote (the action, up to ``;``) and then each
mood after the chosen action (up to the closing quote), never free text.
"""

from __future__ import annotations

from collections.abc import Sequence

from ai import PromptSpec
from game.decisions.policy import MOODS, Event, Mood, Option
from game.sim.attitude import attitude_word
from game.sim.orders import ActionKind

#: The most recent memories a decision prompt carries, as for the village's lines.
DECISION_MEMORIES = 2
ACTION_END = ";"
_GENERIC = {ActionKind.SHOW_WAY: "show the way", ActionKind.CALL: "call someone"}
_SITUATIONS: dict[Event, str] = {
    "chat": "decides what to do",
    "hit_again": "hit by the traveller again, decides what to do",
    "errand_done": "the traveller finished the errand, decides what to do",
}


def decision_spec(
    name: str,
    label: str,
    attitude: int,
    memories: Sequence[str],
    options: Sequence[Option],
    event: Event = "chat",
    player_text: str = "",
) -> PromptSpec:
    """The prompt for one decision by ``name`` (``label``: "Marta the baker")."""
    notes: list[str] = []
    feeling = attitude_word(attitude)
    if feeling:
        notes.append(f"{name} feels {feeling} towards the traveller.")
    notes.extend(f"{name} remembers: {fact}." for fact in list(memories)[-DECISION_MEMORIES:])
    notes.append(f"{name} could: {', '.join(listed(options))}.")
    return PromptSpec(
        context="",
        speaker=label,
        situation=_SITUATIONS[event],
        notes=tuple(notes),
        player_text=player_text if event == "chat" else "",
    )


def listed(options: Sequence[Option]) -> list[str]:
    """The options as the note names them: each prop, then "show the way", "call someone"."""
    out: list[str] = []
    for option in options:
        text = _GENERIC.get(option.kind, option.text)
        if text not in out:
            out.append(text)
    return out


def action_continuations(options: Sequence[Option]) -> tuple[str, ...]:
    """What is scored for each option: its text and the end of the action."""
    return tuple(o.text + ACTION_END for o in options)


def mood_continuations() -> tuple[str, ...]:
    """What is scored after the chosen action: each mood and the closing quote."""
    return tuple(f' {mood}"' for mood in MOODS)


def answer(option: Option, mood: Mood) -> str:
    """The whole answer as the model writes it, closing quote included."""
    return f'{option.text}{ACTION_END} {mood}"'


def parse_mood(tail: str) -> Mood | None:
    """The mood in a scored tail (' pleased"'), or None."""
    word = tail.strip().strip('"').strip()
    for mood in MOODS:
        if word == mood:
            return mood
    return None
