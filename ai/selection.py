"""Judging candidate lines: is this line fit to show, and which of several is best.

Everything here is a pure function of text the request carries (trigger keywords, names,
example lines, remembered lines, the player's words) plus, optionally, the model's own
contrastive score. It never looks at the game: the game packs what it knows into
:class:`LineCriteria` when it builds the request.

A candidate with a *fault* is never shown: it copies an example line, echoes the player
or a remembered line, names its own speaker (unless, greeting a stranger, the speaker says
who they are: "I'm Pip!") or a villager who is not there, names a thing
the scene does not hold (an apple when a crate flew), says the speaker did what the
listener did ("I bumped you" after being bumped), misses what it must mention (an answer
to "do you remember me?" that names nothing remembered), carries a speaker label, or is
empty.
Among the rest, a line that mentions what just happened and that the situation made more
likely (positive contrast) ranks first.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

logger = logging.getLogger(__name__)

ECHO_JACCARD = 0.7
# A keyword this long also matches longer words it starts ("crate" in "crates").
_STEM_MIN = 4
_STEM_SLACK = 3
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_LABEL = re.compile(r"(?:^|[.!?] )[A-Z][\w']*(?: the [a-z]+)?:")
_NARRATION = re.compile(r"[*()\[\]]")
# Clipped so one very surprising token cannot outweigh everything else.
_CONTRAST_CLIP = 2.0
_CONTRAST_WEIGHT = 0.5
_SHORT_WORDS = 2
_LONG_WORDS = 20
# "I" or "we" within two words of a verb: "I bumped", "I'm gonna throw". Not through
# "you" ("I saw you throw it") nor a passive ("I got bumped", "I was thrown").
_SPEAKER_DOES = (
    r"\b(?:i|we)(?:'m|'ve|'ll|'d)?"
    r"(?:\s+(?!you\b|got\b|get\b|getting\b|was\b|were\b|been\b|be\b|being\b|am\b)[a-z']+){{0,2}}"
    r"\s+(?:{verbs})[a-z]*\b"
)
# A speaker saying who they are, before the name or trade: "I'm", "my name's", "call me".
_INTRODUCES = r"(?:\bI['\u2019]m|\bI am|\bname is|\bname['\u2019]s|\bcall me)\s+(?:(?:the|an?)\s+)?"
# The speaker saying they are a thing: "I'm the ball!", "I am a crate.", and after the
# article one word more ("I'm a big apple!"), where the thing ends the clause; not "I'm
# selling apples", "I'm one apple short" nor "I'm the apple seller". Matched on the line
# in lower case.
_IS_THING = (
    r"\b(?:i'm|i am)\s+(?:(?:the|a|an|your|my|this|that)\s+(?:[a-z']+\s+)?)?"
    r"(?:{things})s?(?=\s*(?:[.!?,;:]|$))"
)
# A place or thing of the speaker's trade ("the guard's post", "the baker's bench"): said
# by that villager it is where they stand, not a name taken for someone else's. Not "the
# baker's here", which is "the baker is", of herself.
_TRADE_OWNS = (
    r"\bthe\s+(?:{names})['\u2019]s\s+"
    r"(?!(?:here|there|not|gone|back|coming|going|been|got|in|out|at|on|off|up|a|an|the|"
    r"just|always|never|still|very|so|too|busy|open|closed|away|home)\b)(?=[a-z])"
)


@dataclass(frozen=True, slots=True)
class LineCriteria:
    """What a fitting line for one request looks like, as plain text.

    ``keywords`` say the line is about the trigger (words or short phrases, lower case).
    ``speaker_names`` would be the speaker naming themself; ``absent_names`` are
    villagers who are not in the scene. ``examples`` are lines the prompt shows and the
    line must not copy. ``remembered`` are lines already shown (the speaker's own and
    the conversation's) that it must not echo or repeat. ``foreign_words`` name things
    that are not in the scene. ``listener_acts`` are stems of what the listener did to
    the speaker ("bump", "throw"): the speaker must not say they did it. When
    ``must_mention`` is given, the line must use one of its words or phrases, within
    its first ``mention_within`` words when that is above 0. With ``introduces`` the
    speaker may say who they are ("I'm Pip", "I'm Marta, the baker"): a greeting to a
    traveller they have not spoken with. ``things`` name objects no speaker is: a line
    in which the speaker says they are one ("I'm the ball!") means nothing.
    ``past_only`` are words that belong to what happened before, not to this moment: a
    line may use them only beside one of ``now_words``, which say what happens now or
    set the past apart ("First a crate, now elbows."); else it tells the past as
    happening ("Throwing a ball at me?"). ``written`` are lines written by hand (as
    :func:`normalized` gives them) that the line must not be word for word.
    """

    keywords: tuple[str, ...] = ()
    speaker_names: tuple[str, ...] = ()
    absent_names: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    remembered: tuple[str, ...] = ()
    player_text: str = ""
    foreign_words: tuple[str, ...] = ()
    listener_acts: tuple[str, ...] = ()
    must_mention: tuple[str, ...] = ()
    mention_within: int = 0
    introduces: bool = False
    things: tuple[str, ...] = ()
    past_only: tuple[str, ...] = ()
    now_words: tuple[str, ...] = ()
    written: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Verdict:
    """One candidate, judged: its faults (empty means showable) and its rank score."""

    text: str
    faults: tuple[str, ...]
    on_topic: bool
    contrast: float | None
    score: float

    @property
    def passes(self) -> bool:
        """True when nothing rules the line out."""
        return not self.faults

    @property
    def good(self) -> bool:
        """Showable, about the trigger, and not less likely for it than without it."""
        return self.passes and self.on_topic and (self.contrast is None or self.contrast >= 0.0)


def words(text: str) -> list[str]:
    """Lower-case words of ``text``, apostrophes kept inside words."""
    return _WORD.findall(text.lower().replace("\u2019", "'"))


@functools.lru_cache(maxsize=4096)
def normalized(text: str) -> str:
    """The words of ``text`` joined by single spaces: compares lines ignoring punctuation.

    Kept for the lines met again and again (each villager's examples, checked against
    every candidate) so that the worker does not redo them with the GIL held.
    """
    return " ".join(words(text))


def jaccard(a: str, b: str) -> float:
    """Word-set Jaccard similarity of two lines (0 when either has no words)."""
    left, right = set(words(a)), set(words(b))
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


def mentions(text: str, keywords: Iterable[str]) -> bool:
    """True when ``text`` uses one of ``keywords`` (phrases as a whole, long words by stem)."""
    found = words(text)
    joined = " " + " ".join(found) + " "
    present = set(found)
    for keyword in keywords:
        key = keyword.lower().strip()
        if not key:
            continue
        if " " in key:
            if f" {normalized(key)} " in joined:
                return True
        elif (
            key in present
            or len(key) >= _STEM_MIN
            and any(w.startswith(key) and len(w) - len(key) <= _STEM_SLACK for w in found)
        ):
            return True
    return False


def names_in(text: str, names: Iterable[str]) -> tuple[str, ...]:
    """The names from ``names`` that ``text`` uses as whole words (case as written)."""
    return tuple(name for name in names if name and _whole_word(name).search(text))


@functools.lru_cache(maxsize=4096)
def _whole_word(name: str) -> re.Pattern[str]:
    """``name`` as a whole word, compiled once: the same few hundred names and terms are
    looked for in every line the worker judges and every prompt the game builds."""
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


def without_introductions(text: str, names: Sequence[str]) -> str:
    """``text`` with each place the speaker says who they are, by one of ``names`` (their
    name or trade), taken out: "Hello! I'm Pip." keeps "Hello! ." and "I'm Marta, the
    baker" keeps nothing of either. A name said any other way stays ("Ah, the baker!")."""
    alternatives = _any_of(names)
    if not alternatives:
        return text
    pattern = (
        rf"{_INTRODUCES}(?:{alternatives})(?!\w)(?:,?\s+(?:the|a|your)\s+(?:{alternatives})(?!\w))?"
    )
    return re.sub(pattern, "", text, flags=re.IGNORECASE)


#: The listener called by a name at a sentence's end: "Morning, blacksmith.", ", my Pip!".
_CALLED = r",\s+(?:(?:my|old|dear|young)\s+)?(?:{names})(?!\w)(?=\s*[.!?])"


def without_self_address(text: str, names: Sequence[str]) -> str:
    """``text`` without the places it calls the listener by one of ``names`` (the
    speaker's own name or trade) at a sentence's end: "Morning, blacksmith." from Brann
    keeps "Morning.", "Welcome to the lake, old Wen." from Old Wen "Welcome to the lake.".
    The small model often greets the traveller by the one name in its prompt, its
    speaker's; what comes before the name is a greeting of its own."""
    alternatives = _any_of(names)
    if not alternatives:
        return text
    return re.sub(_CALLED.format(names=alternatives), "", text, flags=re.IGNORECASE)


def names_self(text: str, criteria: LineCriteria) -> bool:
    """Whether ``text`` names its own speaker, other than in an introduction ``criteria``
    allows or as the owner of a place of their trade ("Welcome to the guard's post")."""
    names = criteria.speaker_names
    alternatives = _any_of(names)
    if not alternatives:
        return False
    named = without_introductions(text, names) if criteria.introduces else text
    named = re.sub(_TRADE_OWNS.format(names=alternatives), "", named, flags=re.IGNORECASE)
    return bool(names_in(named, names))


def _any_of(names: Sequence[str]) -> str:
    """A regex alternation of the non-empty ``names``, longest first ("" when none)."""
    said = sorted((name for name in names if name), key=len, reverse=True)
    return "|".join(re.escape(name) for name in said)


def copies(text: str, examples: Iterable[str]) -> bool:
    """True when ``text`` is an example line, or holds one of four words or more, verbatim."""
    line = normalized(text)
    if not line:
        return False
    for example in examples:
        other = normalized(example)
        if other and (other == line or (other.count(" ") >= 3 and f" {other} " in f" {line} ")):
            return True
    return False


def echoes(text: str, others: Iterable[str]) -> bool:
    """True when ``text`` shares at least 70% of its word set with one of ``others``."""
    return any(jaccard(text, other) >= ECHO_JACCARD for other in others if other.strip())


def has_label(text: str) -> bool:
    """A speaker label ("Marta:") or leftover narration marks in a cleaned line."""
    return bool(_LABEL.search(text) or _NARRATION.search(text))


def faults(text: str, criteria: LineCriteria) -> tuple[str, ...]:
    """Every reason ``text`` must not be shown, in a fixed order; empty when it may."""
    if len(words(text)) == 0:
        return ("empty",)
    found: list[str] = []
    if copies(text, criteria.examples) or normalized(text) in criteria.written:
        found.append("copy")
    if echoes(text, (criteria.player_text, *criteria.remembered)):
        found.append("echo")
    if names_self(text, criteria):
        found.append("self_name")
    if names_in(text, criteria.absent_names):
        found.append("absent_name")
    if criteria.foreign_words and names_in(text.lower(), criteria.foreign_words):
        found.append("foreign_word")
    if criteria.listener_acts and swaps_roles(text, criteria.listener_acts):
        found.append("role_swap")
    if criteria.things and claims_to_be(text, criteria.things):
        found.append("is_thing")
    if criteria.past_only and tells_past_as_now(text, criteria.past_only, criteria.now_words):
        found.append("past_as_now")
    if criteria.must_mention and not _mentions_early(text, criteria):
        found.append("unmentioned")
    if has_label(text):
        found.append("label")
    return tuple(found)


def _mentions_early(text: str, criteria: LineCriteria) -> bool:
    """Whether ``text`` uses a word of ``must_mention`` (within its first words, if set)."""
    within = criteria.mention_within
    head = " ".join(words(text)[:within]) if within > 0 else text
    return mentions(head, criteria.must_mention)


def swaps_roles(text: str, acts: Iterable[str]) -> bool:
    """True when the speaker says they did one of ``acts`` ("I'm bumping you")."""
    verbs = "|".join(re.escape(act.lower()) for act in acts if act)
    if not verbs:
        return False
    line = " ".join(words(text))
    return re.search(_SPEAKER_DOES.format(verbs=verbs), line) is not None


def claims_to_be(text: str, things: Iterable[str]) -> bool:
    """True when the speaker says they are one of ``things`` ("I'm the ball!")."""
    nouns = "|".join(re.escape(thing.lower()) for thing in things if thing)
    if not nouns:
        return False
    line = text.lower().replace("\u2019", "'")
    return re.search(_IS_THING.format(things=nouns), line) is not None


def tells_past_as_now(text: str, past: Sequence[str], now: Sequence[str]) -> bool:
    """True when ``text`` uses a word of ``past`` and none of ``now``."""
    line = text.lower()
    return bool(names_in(line, past)) and not names_in(line, now)


def judge(text: str, criteria: LineCriteria, contrast: float | None = None) -> Verdict:
    """Judge one candidate; ``contrast`` is the model's mean log-likelihood lift, if measured."""
    line_faults = faults(text, criteria)
    # With nothing to mention, every line is on topic.
    on_topic = mentions(text, criteria.keywords) if criteria.keywords else True
    score = 1.0 if on_topic else 0.0
    if contrast is not None:
        score += _CONTRAST_WEIGHT * max(-_CONTRAST_CLIP, min(_CONTRAST_CLIP, contrast))
    count = len(words(text))
    if count <= _SHORT_WORDS or count > _LONG_WORDS:
        score -= 0.3
    if text.endswith("\u2026"):
        score -= 0.3  # cut off mid-sentence
    return Verdict(text, line_faults, on_topic, contrast, score)


def pick(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The best showable candidate (the earliest among equals), or None if none passes."""
    best: Verdict | None = None
    for verdict in verdicts:
        if verdict.passes and (best is None or verdict.score > best.score):
            best = verdict
    return best
