"""Template lines from the persona data: the fallback that always has an answer, and the
runtime's fallback that hands them out."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from ai import LineRequest
from game.dialogue.validation import LineSnapshot
from game.sim.events import Trigger

Templates = Mapping[Trigger, tuple[str, ...]]

TEMPLATE_ONLY = frozenset({Trigger.ERRAND_HINT})
"""Triggers whose lines are always the persona's templates, never the model's: the way up
to the roof ball is a fact of the level the model is never told, and a line of its own
could send the traveller the wrong way."""

_GENERIC: dict[Trigger, tuple[str, ...]] = {
    Trigger.GREET: ("Hello there.",),
    Trigger.FAREWELL: ("Safe travels.",),
    Trigger.HIT: ("Ow! Watch it!",),
    Trigger.NEAR_MISS: ("Careful, that nearly got me!",),
    Trigger.BUMPED: ("Mind where you walk.",),
    Trigger.TOPPLED: ("Oh no, the stack!",),
    Trigger.ERRAND_OFFER: ("Could you help me with something?",),
    Trigger.ERRAND_DONE: ("Thank you, that's done!",),
    Trigger.ERRAND_HINT: ("You could climb up there, you know.",),
    Trigger.AMBIENT: ("Fine weather today.",),
    Trigger.CHAT: ("Hm. Is that so?",),
}


class TemplateLines:
    """Picks persona template lines without repeating one until its set is used up.

    Each (speaker, trigger) pair walks its own shuffled deck, so a fallback that fires
    again and again still varies: players notice the same line twice in a row at once.
    A villager wary of the traveller (``attitude_of`` below zero) greets and says
    goodbye from their ``cold`` lines, where they have them. ``answers`` may have a
    chat reply of its own for the player's words (an answer to "do you remember me?"
    built from memory); otherwise a chat gets the villager's chat lines.
    """

    def __init__(
        self,
        templates: Mapping[int, Templates],
        names: Mapping[int, str],
        seed: int,
        cold: Mapping[int, Templates] | None = None,
        attitude_of: Callable[[int], int] | None = None,
        answers: Callable[[int, str], str | None] | None = None,
    ):
        self._templates = templates
        self._answers = answers
        self._cold = cold or {}
        self._attitude_of = attitude_of
        self._names = names
        self._rng = random.Random(seed)
        self._decks: dict[tuple[int, Trigger, bool], list[str]] = {}
        self._last: dict[tuple[int, Trigger, bool], str] = {}

    def line(
        self, npc_id: int, trigger: Trigger, listener: str = "friend", player_text: str = ""
    ) -> str:
        """Return the next template line for ``npc_id`` reacting to ``trigger``
        (for a chat, to the player's ``player_text``)."""
        if trigger is Trigger.CHAT and player_text and self._answers is not None:
            answer = self._answers(npc_id, player_text)
            if answer:
                return answer
        cold_lines = self._cold.get(npc_id, {}).get(trigger)
        wary = bool(cold_lines) and self._attitude_of is not None and self._attitude_of(npc_id) < 0
        key = (npc_id, trigger, wary)
        deck = self._decks.get(key)
        if not deck:
            if wary and cold_lines:
                options = cold_lines
            else:
                options = self._templates.get(npc_id, {}).get(trigger) or _GENERIC[trigger]
            deck = list(options)
            self._rng.shuffle(deck)
            if len(deck) > 1 and deck[-1] == self._last.get(key):
                deck[0], deck[-1] = deck[-1], deck[0]
            self._decks[key] = deck
        text = deck.pop()
        self._last[key] = text
        return fill(text, name=self._names.get(npc_id, "me"), listener=listener)


def fill(text: str, name: str, listener: str) -> str:
    """Put the speaker's and listener's names into a template line.

    Plain replacement rather than ``str.format``: template data may be hand-edited, and
    a stray brace must not crash a bark.
    """
    return text.replace("{name}", name).replace("{player}", listener)


class TemplateFallback:
    """The runtime's fallback: the speaker's template line for the request's trigger."""

    def __init__(self, templates: TemplateLines) -> None:
        self._templates = templates

    def fallback_line(self, request: LineRequest) -> str:
        """A template line for the villager and trigger the request was for."""
        snapshot = request.snapshot
        trigger = snapshot.trigger if isinstance(snapshot, LineSnapshot) else Trigger.CHAT
        player_text = request.prompt.player_text
        return self._templates.line(request.npc_id, trigger, "traveller", player_text)
