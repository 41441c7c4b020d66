"""The closed set of things a villager can decide, and the policy every label follows.

A decision is an action, written as its option text ("fetch the apple"), and a mood that
moves the villager's attitude towards the traveller by one step. The same wording is
what the prompt lists, what the village model was trained to write, and what the rules
produce, so all three meet in one vocabulary (``assets/dialogue/decisions/README.md``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from game.sim.attitude import ATTITUDE_MIN
from game.sim.orders import ActionKind

Mood = Literal["pleased", "unmoved", "offended"]
MOODS: dict[Mood, int] = {"pleased": 1, "unmoved": 0, "offended": -1}

Intent = Literal[
    "fetch", "put", "follow", "show_way", "call", "insult", "threat", "apology", "thanks", "other"
]
INTENTS: tuple[Intent, ...] = (
    "fetch",
    "put",
    "follow",
    "show_way",
    "call",
    "insult",
    "threat",
    "apology",
    "thanks",
    "other",
)
Event = Literal["chat", "hit_again", "errand_done"]
EVENTS: tuple[Event, ...] = ("chat", "hit_again", "errand_done")
FETCHABLE = ("apple", "ball", "crate")
"""Prop kinds a villager can carry to the traveller."""
BASKET_PLACE = "baker's basket"


@dataclass(frozen=True, slots=True)
class Option:
    """One action open to a villager now: its kind, its text, and what it is about.

    ``target`` is a prop kind for fetch and put, a place name for show the way, a cast
    id for call, and "" otherwise.
    """

    kind: ActionKind
    text: str
    target: str = ""


FOLLOW = Option(ActionKind.FOLLOW, "follow the traveller")
TURN_AWAY = Option(ActionKind.TURN_AWAY, "turn away")
RUN_AWAY = Option(ActionKind.RUN_AWAY, "run away")
CARRY_ON = Option(ActionKind.CARRY_ON, "carry on")


def fetch_option(prop: str) -> Option:
    """Bring a prop of this kind to the traveller."""
    return Option(ActionKind.FETCH, f"fetch the {prop}", prop)


def put_option(prop: str) -> Option:
    """Put a prop of this kind in the baker's basket."""
    return Option(ActionKind.PUT, f"put the {prop} in the basket", prop)


def way_option(place: str) -> Option:
    """Walk the traveller to a place."""
    return Option(ActionKind.SHOW_WAY, f"show the way to the {place}", place)


def call_option(cast_id: str, label: str) -> Option:
    """Call another villager ("Sela the guard") over to the traveller."""
    return Option(ActionKind.CALL, f"call {label}", cast_id)


def options_for(
    props: tuple[str, ...],
    places: tuple[str, ...],
    villagers: tuple[tuple[str, str], ...],
) -> tuple[Option, ...]:
    """Every option, in the one order prompts list them.

    ``props`` are the fetchable kinds within reach, ``places`` the place names, and
    ``villagers`` the (cast id, label) of those who can be called.
    """
    kinds = [p for p in FETCHABLE if p in props]
    out = [FOLLOW, *(fetch_option(p) for p in kinds)]
    if "apple" in kinds and BASKET_PLACE in places:
        out.append(put_option("apple"))
    out.extend(way_option(p) for p in places)
    out.extend(call_option(cast_id, label) for cast_id, label in villagers)
    out.extend((TURN_AWAY, RUN_AWAY, CARRY_ON))
    return tuple(out)


def absent_options(
    possible: tuple[Option, ...],
    places: tuple[str, ...],
    villagers: tuple[tuple[str, str], ...],
) -> tuple[Option, ...]:
    """The asks a villager knows of but cannot carry out now, for the model to recognise.

    Scoring only the possible options makes the model pick a neighbour when the traveller
    asks for something that is not here (the way to a place not among them, a villager
    who is down, a prop out of reach). So these are scored too, and :func:`resolve` turns
    a choice among them into carrying on, as the policy does. ``places`` and
    ``villagers`` are everything the villager knows of, present or not.
    """
    known = options_for(FETCHABLE, places, villagers)
    texts = {o.text for o in possible}
    return tuple(o for o in known if o.text not in texts)


def resolve(chosen: Option, possible: tuple[Option, ...]) -> Option:
    """What a chosen option comes to: itself if possible now, else carrying on."""
    return chosen if chosen in possible else CARRY_ON


def decide(
    intent: Intent | None,
    target: str,
    attitude: int,
    options: tuple[Option, ...],
    event: Event = "chat",
    kind_words: bool = False,
) -> tuple[Option, Mood]:
    """The policy: what a villager with this attitude does about what the traveller meant.

    ``kind_words`` says the ask also thanked or apologised (a pleased mood). This is the
    rule the labelled situations follow and the rules baseline applies.
    """
    if event == "hit_again":
        return RUN_AWAY, "offended"
    if event == "errand_done":
        return CARRY_ON, "pleased"
    mood: Mood = "pleased" if kind_words else "unmoved"
    match intent:
        case "insult":
            return TURN_AWAY, "offended"
        case "threat":
            return RUN_AWAY, "offended"
        case "apology" | "thanks":
            return CARRY_ON, "pleased"
        case "fetch" | "put" | "follow" | "show_way" | "call":
            kind = ActionKind(intent)
            if kind is ActionKind.FOLLOW:
                chosen: Option | None = FOLLOW
            else:
                chosen = next((o for o in options if o.kind is kind and o.target == target), None)
            if chosen is None:
                return CARRY_ON, mood
            refuses = attitude < 0 if kind in _FAVOURS else attitude <= ATTITUDE_MIN
            return (TURN_AWAY if refuses else chosen), mood
        case _:
            return CARRY_ON, mood


_FAVOURS = frozenset({ActionKind.FETCH, ActionKind.PUT, ActionKind.FOLLOW})
"""Asks a wary villager refuses; showing the way or calling someone only a cross one does."""


_KIND_WORDS = re.compile(r"\b(thank|thx|ta\b|cheers|sorry|apolog|forgive)")


def kind_words(text: str) -> bool:
    """Whether an ask also thanks or apologises (which pleases whoever is asked)."""
    return _KIND_WORDS.search(text.lower()) is not None


def place_name(label: str) -> str:
    """A level label as decisions name the place: "Baker's basket" -> "baker's basket"."""
    return " ".join(label.lower().split())
