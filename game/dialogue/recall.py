""" "Do you remember me?": knowing the question, and answering it from what is remembered.

The question is known by its words alone, deterministically: a whole line that is one of
a few ways of asking it ("remember me?", "have we met?", "do you know who I am?"), with
at most a greeting, a name or "still" around it. "Remember to buy bread" or "do you
remember when the hall was built?" are other questions and go on as any chat.

A recognised question reaches the model in one set of words (:data:`RECALL_QUESTION`),
with every fact the villager remembers of the traveller, the most telling first, and
the answer must name one of them, or, when there is none, say the traveller is new
(:func:`recall_words`). An answer that does not is never shown: the villager's own
template answer, built from the same memory (:class:`RecallLines`), stands in.
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Iterable, Mapping, Sequence

from ai.selection import words
from game.dialogue.facts import question_words
from game.dialogue.memory import (
    ASKED_FACT,
    BUMPED_FACT,
    ERRAND_FACT,
    THREW_FACT,
    Memories,
    telling_first,
)
from game.dialogue.templates import fill
from game.sim.cast import RECALL_KINDS

#: The words a recognised question is asked of the model in.
RECALL_QUESTION = "Do you remember me?"

_YOU = r"(?:you|ya|u)"
_CORE = re.compile(
    "^(?:"
    + "|".join(
        (
            rf"(?:(?:do|did|can|could|would|will|don't|dont|can't|cant) )?(?:{_YOU} )?"
            r"(?:still )?(?:remember|recall|recognise|recognize) (?:me|us)",
            rf"what (?:do|did|can) {_YOU} (?:remember|recall|know) (?:about|of) me",
            rf"(?:have|haven't|did|didn't) {_YOU} (?:forgotten|forgot|forget) (?:me|us)",
            rf"{_YOU} (?:forgot|forgotten) (?:me|us)",
            r"(?:have|haven't|did|didn't) we (?:ever )?(?:met|meet)(?: before)?",
            r"we(?:'ve| have)? met(?: before)?",
            rf"(?:(?:do|don't|dont) )?{_YOU} know (?:me|who i am|my name)",
            rf"(?:(?:do|don't|dont) )?{_YOU} remember (?:who i am|my name)",
            rf"(?:have|haven't|did) {_YOU} (?:ever )?(?:seen|see|met|meet) me(?: before)?",
            r"(?:do|don't) i look familiar",
            r"am i familiar(?: to you)?",
            r"who am i",
        )
    )
    + ")$"
)
# Words that may stand around the question without changing what it asks.
_ASIDE_TEXT = (
    "hey hi hello oh so well um uh say and then now still yet again before ever right "
    "really actually please dear friend sir madam ma'am mister miss at all by any chance "
    "the way"
)
_ASIDE = frozenset(_ASIDE_TEXT.split(" "))
_ASIDE_WORDS = 3
# A word every way of asking it has, and the most words a line asking it may have.
_KEYS = frozenset(
    ("remember", "recall", "recognise", "recognize", "forgotten", "forgot", "forget")
    + ("met", "meet", "know", "familiar", "who")
)
_MAX_WORDS = 14

# What an answer may say of each kind of fact, besides the fact's own thing.
_THREW_WORDS = ("threw", "throw", "thrown", "toss", "chuck", "flung", "fling", "hit")
# A greeting that names a throw: the traveller as the thrower, or hoping for none.
_THROWN_BY_YOU = (
    "you threw",
    "you've thrown",
    "you have thrown",
    "you hurled",
    "you flung",
    "you tossed",
    "you chucked",
    "you pelted",
    "thrower",
    "one who threw",  # "You're the one who threw a ball at me."
    "one that threw",
)
_BUMPED_WORDS = ("bump", "knock", "walked into", "ran into", "shove", "elbow")
# Saying the traveller is new to them.
_NEW_WORDS = (
    "don't",
    "dont",
    "not",
    "never",
    "no",
    "nope",
    "stranger",
    "new",
    "can't",
    "cannot",
    "haven't",
    "first time",
    "afraid",
)
# An answer with nothing to remember must not make up a deed, nor say it knows them.
_DEEDS = ("threw", "thrown", "bumped", "errand", "helped", "brought")
_KNOWN = ("not a stranger", "of course", "yes", "aye")
#: Within how many words the answer must say what it remembers, or that it does not:
#: "I remember you. I've watched the village since, and never failed." says neither.
RECALL_WITHIN = 12
_NEW_WITHIN = 6
#: What the traveller did, as a villager answering would say it of themself ("I asked
#: about the goat"): the roles the wrong way round.
TRAVELLER_DEEDS = ("ask", "threw", "throw", "bump", "brought", "fill", "stack", "fetch")


def is_recall_question(text: str, names: Iterable[str] = ()) -> bool:
    """Whether ``text`` asks, and only asks, if the villager remembers the traveller.

    ``names`` are the villagers' names and trades: "Marta, do you remember me?" asks it too.
    """
    found = words(text)
    # Cheap first: the main thread asks this of every line the player types.
    if not found or len(found) > _MAX_WORDS or _KEYS.isdisjoint(found):
        return False
    aside = _asides(tuple(names))
    for start in range(min(len(found), _ASIDE_WORDS + 1)):
        if any(w not in aside for w in found[:start]):
            break
        for end in range(len(found), start, -1):
            if len(found) - end + start > _ASIDE_WORDS:
                break
            if all(w in aside for w in found[end:]) and _CORE.match(" ".join(found[start:end])):
                return True
    return False


@functools.lru_cache(maxsize=8)
def _asides(names: tuple[str, ...]) -> frozenset[str]:
    """The words that may stand around the question, with these names' words."""
    return _ASIDE | {w for name in names for w in words(name)}


def fact_kind(fact: str) -> str:
    """Which of ``RECALL_KINDS`` a remembered fact is ("" for one of no kind)."""
    if fact == ERRAND_FACT:
        return "errand"
    if fact.startswith(THREW_FACT):
        return "threw"
    if fact.startswith(ASKED_FACT):
        return "asked"
    return "bumped" if fact == BUMPED_FACT else ""


def _thing(fact: str) -> str:
    """ "a crate" from "the traveller threw a crate at them"."""
    return fact[len(THREW_FACT) :].removesuffix(" at them")


def _topic(fact: str) -> str:
    return fact[len(ASKED_FACT) :]


def _with_singular(found: Iterable[str]) -> tuple[str, ...]:
    out: list[str] = []
    for word in found:
        out.append(word)
        if len(word) > 4 and word.endswith("s"):
            out.append(word[:-1])
    return tuple(dict.fromkeys(out))


def fact_words(fact: str, errand: str = "") -> tuple[str, ...]:
    """Words an answer that recalls ``fact`` would use; ``errand`` is the errand's title."""
    kind = fact_kind(fact)
    if kind == "errand":
        title = _with_singular(w for w in question_words(errand) if len(w) > 3)
        return ("errand", "help", *title)
    if kind == "threw":
        return (*_with_singular(question_words(_thing(fact))), *_THREW_WORDS)
    if kind == "asked":
        return _with_singular(question_words(_topic(fact)))
    if kind == "bumped":
        return _BUMPED_WORDS
    return ()


def greeting_words(fact: str, errand: str = "") -> tuple[str, ...]:
    """Words with which a greeting may name ``fact`` instead of greeting in so many words.

    "Back about the silk, are we?" and "You threw a crate! Hmph." meet the traveller as
    well as "Hello" does. A throw is named with the traveller throwing it ("the crate
    thrower") or hoping for none ("No apples today?"): the prop alone is not enough,
    as in "Your balls." or "This ball's mine.".
    """
    if fact_kind(fact) != "threw":
        return fact_words(fact, errand)
    things = _with_singular(question_words(_thing(fact)))
    return (*_THROWN_BY_YOU, *(f"no {word}" for thing in things for word in (thing, thing + "s")))


def recall_words(facts: Sequence[str], errand: str = "") -> tuple[str, ...]:
    """Words of which an answer to the question must use one: a remembered fact's, or,
    with nothing remembered, words that say the traveller is new."""
    if not facts:
        return _NEW_WORDS
    return tuple(dict.fromkeys(w for fact in facts for w in fact_words(fact, errand)))


def recall_within(facts: Sequence[str]) -> int:
    """Within how many words the answer must use a word of :func:`recall_words`."""
    return RECALL_WITHIN if facts else _NEW_WITHIN


def made_up_deeds(facts: Sequence[str]) -> tuple[str, ...]:
    """Words an answer must not use: with nothing remembered, any deed of the traveller's,
    or a claim to know them."""
    return () if facts else (*_DEEDS, *_KNOWN)


RecallTable = Mapping[str, tuple[str, ...]]

_GENERIC: dict[str, tuple[str, ...]] = {
    "errand": ("You're the one who helped me with my errand!",),
    "threw": ("You threw {thing} at me. I remember that.",),
    "asked": ("You asked me about {topic}, didn't you?",),
    "bumped": ("You bumped into me, I think.",),
    "stranger": ("Can't say I do, stranger.",),
}


class RecallLines:
    """Each villager's template answers to the question, from what they remember.

    The most telling fact picks the kind of line ("errand" before "threw" before "asked"
    before "bumped"; "stranger" with none); each (villager, kind) walks its own shuffled
    deck, as other template lines do.
    """

    def __init__(
        self,
        lines: Mapping[int, RecallTable],
        memories: Memories,
        names: Mapping[int, str],
        seed: int,
        addresses: Iterable[str] = (),
    ) -> None:
        self._lines = lines
        self._memories = memories
        self._names = names
        self._addresses = tuple(addresses)
        self._rng = random.Random(seed)
        self._decks: dict[tuple[int, str], list[str]] = {}

    def asks(self, player_text: str) -> bool:
        """Whether ``player_text`` asks it; the ``addresses`` (names, trades) may stand around."""
        return is_recall_question(player_text, self._addresses)

    def reply(self, npc_id: int, player_text: str) -> str | None:
        """The answer when ``player_text`` asks whether they remember the traveller, else None."""
        return self.answer(npc_id) if self.asks(player_text) else None

    def answer(self, npc_id: int) -> str:
        """What the villager says when asked whether they remember the traveller."""
        facts = telling_first(
            f for f in self._memories.of(npc_id).facts if fact_kind(f) in RECALL_KINDS
        )
        fact = facts[0] if facts else ""
        kind = fact_kind(fact) if fact else "stranger"
        key = (npc_id, kind)
        deck = self._decks.get(key)
        if not deck:
            deck = list(self._lines.get(npc_id, {}).get(kind) or _GENERIC[kind])
            self._rng.shuffle(deck)
            self._decks[key] = deck
        text = deck.pop()
        if kind == "threw":
            text = text.replace("{thing}", _thing(fact))
        elif kind == "asked":
            text = text.replace("{topic}", _topic(fact))
        return fill(text, name=self._names.get(npc_id, "me"), listener="traveller")
