"""The content filter: a word list on any thread, then the model's reading on the worker.

:meth:`ContentFilter.check_words` is pure Python and cheap, for every thread and for
streamed text: the word list, then the patterns (:mod:`ai.content.patterns`) that catch
threats, taunts and attempts to take a villager out of the game in ordinary words.
:meth:`ContentFilter.check_meaning` reads the line's hidden state from the loaded model
and must run on the worker thread, the only one that may touch the model; the reader it
takes comes from :meth:`ContentFilter.meaning_reader`, opened on the worker once the
model is loaded.

A :class:`ContentVerdict` names the layer that decided and why, in words that are safe
to log: it never carries the text it judged.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ai.config import FilterConfig
from ai.content.hidden import HiddenStates, LlamaHiddenStates
from ai.content.meaning import Classifier
from ai.content.patterns import PatternList
from ai.content.words import WordList

logger = logging.getLogger(__name__)

Layer = Literal["words", "meaning"]
# The end of a streamed text that may be the start of a longer word ("ass" of "assassin").
_OPEN_WORD = re.compile(r"[\w@$*'\u2019!]+$")


@dataclass(frozen=True, slots=True)
class ContentVerdict:
    """Whether a text may be shown (or used), which layer decided, and why.

    ``layer`` is the layer that refused the text, or for a text that passed, the last
    layer that looked at it (None when the filter is off). ``reason`` never quotes the
    text. ``score`` is the semantic layer's probability that the text is unfit.
    """

    ok: bool
    layer: Layer | None
    reason: str
    score: float | None = None


_OFF = ContentVerdict(True, None, "filter off")
#: Why a line passed the semantic layer without the model reading it.
PASSED_ON_WORDS = "its words alone are below the floor"


class ContentFilter:
    """Layered content checks for model lines and player text."""

    def __init__(
        self,
        config: FilterConfig,
        words: WordList,
        classifier: Classifier | None = None,
        shipped: WordList | None = None,
        patterns: PatternList | None = None,
    ) -> None:
        self.config = config
        self.words = words
        self.patterns = patterns
        self.classifier = classifier
        #: The shipped list alone, without the config's own entries (``words`` has both).
        self.shipped = shipped

    def reconfigured(self, config: FilterConfig, extra_words: Sequence[str]) -> ContentFilter:
        """This filter under settings changed while the game runs: the same shipped list
        and classifier, the config's new switches and its new word entries."""
        extra = WordList.from_entries(list(extra_words), "hygiene.blocklist")
        words = extra if self.shipped is None else _merged(self.shipped, extra)
        return ContentFilter(config, words, self.classifier, self.shipped, self.patterns)

    @classmethod
    def load(
        cls,
        config: FilterConfig,
        words_path: Path,
        classifier_path: Path | None = None,
        extra_words: Sequence[str] = (),
        patterns_path: Path | None = None,
    ) -> ContentFilter:
        """The filter from its data files; ``extra_words`` are the config's own entries.

        Raises :class:`~ai.content.words.WordListError` (for the word list or the
        patterns) or
        :class:`~ai.content.meaning.ClassifierError` naming the file at fault.
        """
        shipped = WordList.load(words_path)
        words = shipped
        if extra_words:
            words = _merged(shipped, WordList.from_entries(list(extra_words), "hygiene.blocklist"))
        classifier = None
        if classifier_path is not None and config.meaning:
            classifier = Classifier.load(classifier_path)
        patterns = None if patterns_path is None else PatternList.load(patterns_path)
        return cls(config, words, classifier, shipped, patterns)

    def check_words(self, text: str) -> ContentVerdict:
        """Layer 1 on a finished text (any thread): the word list, then the patterns."""
        if not self.config.enabled:
            return _OFF
        match = self.words.find(text)
        if match is not None:
            kind = "hashed entry" if match.hashed else "entry"
            return ContentVerdict(False, "words", f"word list {kind} on line {match.entry_line}")
        shape = None if self.patterns is None else self.patterns.find(text)
        if shape is not None:
            reason = f"{shape.kind} pattern on line {shape.entry_line}"
            return ContentVerdict(False, "words", reason)
        return ContentVerdict(True, "words", "no listed word")

    def check_partial(self, text: str) -> ContentVerdict:
        """Layer 1 on streamed text: a word still being written is left for later."""
        return self.check_words(_OPEN_WORD.sub("", text))

    def meaning_reader(self, llm: Any, model_sha256: str) -> HiddenStates | None:
        """Open the semantic layer's reader on the loaded ``Llama`` (worker thread only).

        None when the layer is off, there is no classifier, or the classifier was trained
        on another model (one warning): the word list still applies.
        """
        classifier = self.classifier
        if not (self.config.enabled and self.config.meaning) or classifier is None:
            return None
        if not classifier.fits_model(model_sha256):
            logger.warning(
                "content filter: the classifier was trained on another model (%s...);"
                " only the word list applies",
                classifier.model_sha256[:12],
            )
            return None
        try:
            return LlamaHiddenStates(llm, classifier.layer, pooling=classifier.pooling)
        except RuntimeError as exc:
            logger.warning("content filter: no semantic layer: %s", exc)
            return None

    def check_meaning(self, text: str, states: HiddenStates | None) -> ContentVerdict:
        """Layer 2: the classifier on the text's hidden state. Worker thread only.

        A reader that fails refuses the text (the game then shows a template line or an
        in-character refusal); no reader at all lets it through to the word list alone.
        The text is read in its written form (:func:`read_form`), as the classifier learnt
        it: typed words in lower case without a stop, or in chat shorthand, read as unfit
        far more often ("tell me about the forge" scored 0.91, "Tell me about the forge."
        0.17; "gn everyone see u tmrw" 1.00). A classifier that weighs the words as well
        lets a line whose words alone score below its floor pass unread.
        """
        if not (self.config.enabled and self.config.meaning):
            return ContentVerdict(True, "words", "semantic layer off")
        classifier = self.classifier
        if classifier is None or states is None:
            return ContentVerdict(True, "words", "semantic layer unavailable")
        form = read_form(text)
        by_words = classifier.words_logit(form)  # hashed once, for the floor and the mix
        if classifier.below_floor(by_words):
            # So plain that no line the mix would refuse scored as low in training.
            return ContentVerdict(True, "meaning", PASSED_ON_WORDS)
        try:
            features = states.pooled(form)
        except (RuntimeError, ValueError) as exc:
            logger.warning("content filter: semantic check failed: %s", exc)
            return ContentVerdict(False, "meaning", "semantic check failed")
        if features is None:
            return ContentVerdict(True, "meaning", "no tokens")
        score = classifier.probability(features, form, by_words)
        threshold = self.config.threshold
        if score >= threshold:
            return ContentVerdict(False, "meaning", f"score {score:.2f} >= {threshold:.2f}", score)
        return ContentVerdict(True, "meaning", f"score {score:.2f} < {threshold:.2f}", score)

    def check(self, text: str, states: HiddenStates | None) -> ContentVerdict:
        """Both layers, the word list first (worker thread, for the semantic layer)."""
        verdict = self.check_words(text)
        if not verdict.ok or verdict.layer is None:
            return verdict
        return self.check_meaning(text, states)


def _merged(words: WordList, extra: WordList) -> WordList:
    """One list of ``words`` and ``extra``'s entries (``words`` names the source)."""
    return WordList(
        extra.words | words.words,
        extra.hashes | words.hashes,
        (*words.phrases, *extra.phrases),
        words.source,
        words.allowed | extra.allowed,
    )


_LONE_I = re.compile(r"\bi\b")
_CLAUSE_TAIL = re.compile(r"\s*[,;\u2013\u2014-]+$")


def as_sentence(text: str) -> str:
    """``text`` as a written sentence: a capital first letter, "I" for a lone "i", and a
    full stop if it ends in a letter or a digit, or in a clause's comma or dash.

    A reply is screened clause by clause as it streams, and the classifier learnt from
    whole lines: read with its comma, a plain clause scored as unfit ("Charcoal," 1.00,
    "Run to the well," 0.92), and read as a sentence it did not ("Charcoal." 0.95 alone,
    but "Rye bread." 0.04, "Run to the well." 0.03). A colon stays: a leaked prompt ends
    in one ("Mood: cross. Line:").
    """
    text = _CLAUSE_TAIL.sub("", _LONE_I.sub("I", text.strip()))
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text + "." if text[-1].isalnum() else text


# Chat shorthand and the words it stands for. Only forms that are not themselves words
# are listed ("wont", "cant" and "ill" are, but rarely in chat; "ill" only as a line's
# first word, where it means "I'll"). Laughter says nothing about a line's meaning and
# is dropped. The word list keeps its own entries for rude shorthand ("kys", "wtf").
_SHORTHAND = {
    "u": "you",
    "ya": "you",
    "ur": "your",
    "r": "are",
    "y": "why",
    "im": "I'm",
    "ive": "I've",
    "ill": "I'll",
    "id": "I'd",
    "dont": "don't",
    "cant": "can't",
    "wont": "won't",
    "didnt": "didn't",
    "doesnt": "doesn't",
    "isnt": "isn't",
    "wasnt": "wasn't",
    "thats": "that's",
    "whats": "what's",
    "hows": "how's",
    "wheres": "where's",
    "whos": "who's",
    "hes": "he's",
    "shes": "she's",
    "gonna": "going to",
    "wanna": "want to",
    "gotta": "got to",
    "kinda": "kind of",
    "tmrw": "tomorrow",
    "tmr": "tomorrow",
    "2day": "today",
    "2nite": "tonight",
    "b4": "before",
    "rn": "right now",
    "gn": "good night",
    "gm": "good morning",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "ty": "thank you",
    "np": "no problem",
    "sry": "sorry",
    "idk": "I don't know",
    "brb": "be right back",
    "btw": "by the way",
    "nvm": "never mind",
    "tho": "though",
    "cuz": "because",
    "bc": "because",
    "ppl": "people",
    "omg": "oh my",
    "kms": "kill myself",
    "kys": "kill yourself",
}
_FIRST_WORD_ONLY = frozenset({"ill", "id"})
# "ur" is "your" before a noun and "you're" before these: "ur dead", "ur the best",
# "ur so slow", "ur kidding".
_YOU_ARE_BEFORE = frozenset(
    {
        *("a", "an", "the", "so", "such", "too", "very", "really", "just", "not"),
        *("never", "always", "still", "gonna", "going", "dead", "welcome", "right"),
        *("wrong", "done", "late", "here", "there", "kidding", "joking", "lying"),
        *("being", "getting", "acting"),
    }
)
_LAUGHTER = re.compile(r"\s*\b(?:lol|lmao|rofl|lel|xd)\b[\s!.]*", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9']+")
_SPACES = re.compile(r"\s{2,}")


def plain_words(text: str) -> str:
    """``text`` with chat shorthand written out: "see u tmrw lol" reads "see you tomorrow"."""
    text = _LAUGHTER.sub(" ", text).strip()
    words = list(_WORD.finditer(text))
    out, last = [], 0
    for i, match in enumerate(words):
        word = match.group(0)
        lower = word.lower()
        full = _SHORTHAND.get(lower)
        if full is None or (lower in _FIRST_WORD_ONLY and i > 0):
            continue
        if (
            lower == "ur"
            and i + 1 < len(words)
            and words[i + 1].group(0).lower() in _YOU_ARE_BEFORE
        ):
            full = "you're"
        out += [
            text[last : match.start()],
            full[0].upper() + full[1:] if word[0].isupper() else full,
        ]
        last = match.end()
    out.append(text[last:])
    return _SPACES.sub(" ", "".join(out))


def read_form(text: str) -> str:
    """What the semantic layer reads of ``text``: shorthand written out, as a sentence.

    The game and the classifier's training both read lines so.
    """
    return as_sentence(plain_words(text))
