"""Which of a villager's facts answer the player's question.

A fact matches when a word of the question is one of its ``about`` words (or starts
like one, so "apples" finds "apple"), and less strongly when its text uses the word.
"Where" and "who" count: they call for places and people. The villager's own facts
come before what the whole village knows.
"""

from __future__ import annotations

from collections.abc import Sequence

from ai.selection import mentions, words
from game.sim.cast import Fact

# Words that say nothing about what is asked.
_FILLER_TEXT = (
    "a an the is are am was were be do does did you your yours i me my we us our it "
    "its what when why how which can could would will shall should may "
    "might to of in on at for from with about and or but so if this that these those "
    "there here have has had any some tell please know"
)
_FILLER = frozenset(_FILLER_TEXT.split(" "))


def question_words(text: str) -> tuple[str, ...]:
    """The words of a question that carry its meaning, in order, without repeats."""
    return tuple(dict.fromkeys(w for w in words(text) if w not in _FILLER and len(w) > 1))


def answer_words(known: Sequence[Fact]) -> tuple[str, ...]:
    """The words that show an answer has given one of the facts asked for.

    The meaningful words of four letters or more in the facts' own text ("coppers",
    "west", "well"), not the words that call for them ("price", "where"): an answer
    gives the fact, it does not repeat the question. "Like" says nothing of the fact.
    """
    found = (w for fact in known for w in question_words(fact.text))
    return tuple(dict.fromkeys(w for w in found if len(w) >= 4 and w != "like"))


# They say what kind of answer is wanted, not what it is about: they only break ties.
_INTENT = frozenset({"where", "who"})


def _hits(fact: Fact, asked: Sequence[str]) -> int:
    """Two points for each word the fact is about, one for each its text merely uses."""
    own = set(words(fact.text))
    return sum(
        (1 if word in _INTENT else 2) if mentions(word, fact.about) else int(word in own)
        for word in asked
    )


def matching_facts(
    question: str, own: Sequence[Fact], shared: Sequence[Fact] = (), limit: int = 1
) -> tuple[Fact, ...]:
    """Up to ``limit`` facts that answer ``question``, best first; own facts win ties."""
    asked = question_words(question)
    if not asked:
        return ()
    scored = [
        (hits, -rank, fact)
        for rank, fact in enumerate((*own, *shared))
        if (hits := _hits(fact, asked)) > 0
    ]
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return tuple(fact for _, _, fact in scored[:limit])


def fact_answer(question: str, own: Sequence[Fact]) -> str | None:
    """The villager's own fact that answers ``question``, in their words, or None.

    What a chat says when no model line stands ("I have lived in Millbrook for eighty
    years; ..."), rather than a line that answers nothing.
    """
    facts = matching_facts(question, own)
    return facts[0].text if facts else None
