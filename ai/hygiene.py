"""Pure functions that turn raw model output into a speakable line.

Small models wander: they read stage directions aloud, prefix lines with a
speaker label, run on for paragraphs or emit punctuation soup. Everything here
is a pure function of its input, so it is cheap to test exhaustively.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections.abc import Callable

from ai.config import HygieneConfig

logger = logging.getLogger(__name__)

# Control, format, surrogate and private-use characters never belong in a bubble.
_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co"})
_DOUBLE_QUOTES = '"\u201c\u201d\u201e\u201f\u00ab\u00bb\u301d\u301e\uff02'
_QUOTE_TABLE = str.maketrans("", "", _DOUBLE_QUOTES)
_BRACKETS_TABLE = str.maketrans("", "", "*()[]{}<>")

_STAGE_DIRECTION = re.compile(r"\*[^*]*\*|\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}|<[^<>]*>")
# "Bess:", "Bess the baker:", "Old Tom (angry):" at the very start of a line.
_SPEAKER_LABEL = re.compile(r"^[A-Z][\w'\u2019.-]*(?: [\w'\u2019.-]+){0,3} ?:(?: |$)")
_LEADING_JUNK = re.compile(r"^[\s,;:\-\u2013\u2014_~|/\\.]+")
_TRAILING_JUNK = re.compile(r"[\s,;:\-\u2013\u2014_~|/\\(]+$")
_SENTENCE_END = re.compile(r"[.!?\u2026]+(?= |$)")
_ELLIPSIS = "\u2026"
_WORDS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_MAX_PASSES = 8
# A fragment of 2-12 characters said three or more times in a row ("DukeDukeDuke", "NANNAN").
_REPEATED_FRAGMENT = re.compile(r"(.{2,12}?)\1{2,}", re.DOTALL)
# Terminal escape sequences: CSI ("ESC [ ... m"), OSC ("ESC ] ... BEL"), and two-byte ones.
_ANSI_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]"
)
_MAX_COMBINING = 2


def _strip_controls(text: str) -> str:
    """Replace control characters by spaces and drop invisible format characters."""
    if text.isascii():
        if text.isprintable():
            return text
        return "".join(ch if ch.isprintable() else " " for ch in text)
    out: list[str] = []
    for ch in text:
        category = unicodedata.category(ch)
        if category in _DROPPED_CATEGORIES:
            # Format characters (zero-width, bidi overrides) vanish; real controls split words.
            if category == "Cc":
                out.append(" ")
        elif category in ("Zl", "Zp"):
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)


def _limit_combining(text: str) -> str:
    """Keep at most ``_MAX_COMBINING`` combining marks after each character (no "Zalgo")."""
    if text.isascii():
        return text
    out: list[str] = []
    run = 0
    for ch in text:
        if unicodedata.combining(ch):
            run += 1
            if run > _MAX_COMBINING:
                continue
        else:
            run = 0
        out.append(ch)
    return "".join(out)


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line
    return ""


def _cap(text: str, max_chars: int) -> str:
    """Cut at a word boundary within ``max_chars``, marking the cut with an ellipsis."""
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1]
    space = cut.rfind(" ")
    if space >= max_chars // 2:
        cut = cut[:space]
    cut = _TRAILING_JUNK.sub("", cut)
    if cut.endswith((".", "!", "?", _ELLIPSIS)):
        return cut
    return cut + _ELLIPSIS


def _limit_sentences(text: str, max_sentences: int) -> str:
    end = sentences_end(text, max_sentences)
    return text if end is None else text[:end]


def sentences_end(text: str, count: int) -> int | None:
    """Where the ``count``-th sentence of ``text`` ends; None while fewer have closed."""
    for seen, match in enumerate(_SENTENCE_END.finditer(text), start=1):
        if seen == count:
            return match.end()
    return None


def _clean_once(text: str, config: HygieneConfig) -> str:
    text = _strip_controls(_first_line(text))
    previous = None
    while previous != text:
        previous = text
        text = _STAGE_DIRECTION.sub(" ", text)
    text = _collapse(text.translate(_QUOTE_TABLE).translate(_BRACKETS_TABLE))
    while True:
        stripped = _SPEAKER_LABEL.sub("", text, count=1)
        if stripped == text or not stripped.strip():
            break
        text = stripped
    text = _LEADING_JUNK.sub("", text)
    if len(text) > 1 and text[0] in "'\u2018\u2019" and text[-1] in "'\u2018\u2019":
        text = text[1:-1].strip()
    text = _limit_sentences(text, config.max_sentences)
    text = _TRAILING_JUNK.sub("", text)
    return _cap(text, config.max_chars)


def clean_line(raw: str, config: HygieneConfig) -> str:
    """Return the first line of ``raw`` as one clean, capped, speakable line.

    Strips stage directions (``*waves*``, ``(laughs)``, ``[sighs]``), double
    quotes, speaker labels such as ``Bess:``, control characters and extra
    whitespace; keeps at most ``config.max_sentences`` sentences and
    ``config.max_chars`` characters. Idempotent: cleaning twice changes nothing.
    """
    text = raw
    for _ in range(_MAX_PASSES):
        cleaned = _clean_once(text, config)
        if cleaned == text:
            break
        text = cleaned
    return text


def clean_partial(raw: str, max_chars: int) -> str:
    """Cheap cleaning for streamed, unfinished text shown in a bubble.

    Runs once per token on the worker thread, so it only does what a reader
    would notice: first line, no stage directions, quotes or controls.
    """
    newline = raw.find("\n")
    if newline >= 0:
        raw = raw[:newline]
    text = _STAGE_DIRECTION.sub(" ", _strip_controls(raw))
    text = _collapse(text.translate(_QUOTE_TABLE).translate(_BRACKETS_TABLE))
    return text[:max_chars]


def end_after(text: str, start: int) -> str:
    """``text`` up to the end of the first sentence that ends past ``start``.

    A line that begins from an opener keeps the opener and one sentence of the model's
    own words: the sentence a small model adds after that is where it wanders.
    """
    for match in _SENTENCE_END.finditer(text, start):
        return text[: match.end()]
    return text


def sentence_end(
    text: str, min_words: int, enough: Callable[[str], bool] | None = None
) -> int | None:
    """Where the first sentence of ``text`` that closes at least ``min_words`` words ends.

    None while no sentence has closed that late: "Ow!" is not yet a line, "Ow! An apple!"
    is. The worker stops a candidate there, so a short line is not followed by the
    second sentence a small model wanders off in. With ``enough``, the text up to the
    end must also satisfy it (an answer ends once it has named what was asked).
    """
    for match in _SENTENCE_END.finditer(text):
        if len(_WORDS.findall(text[: match.start()])) >= min_words and (
            enough is None or enough(text[: match.end()])
        ):
            return match.end()
    return None


def is_garbage(text: str, min_letters: int = 2) -> bool:
    """True when ``text`` is too short on letters, mostly symbols, or mostly a stutter.

    A stutter is a short fragment repeated three or more times in a row, covering more
    than half of the line ignoring spaces: what a damaged model file writes
    ("DukeDukeDuke...", "NANNANNAN..."). A replacement character (U+FFFD) anywhere means
    bytes that were not text reached it: never a bubble.
    """
    if "\ufffd" in text:
        return True
    letters = sum(1 for ch in text if ch.isalpha())
    if letters < max(1, min_letters):
        return True
    visible = sum(1 for ch in text if not ch.isspace())
    # Mostly punctuation or symbols ("@@@ ### ok") reads as noise, not speech.
    if letters * 2 < visible:
        return True
    return _mostly_repeats(text)


def _mostly_repeats(text: str) -> bool:
    squeezed = "".join(text.split())
    if len(squeezed) < 6:
        return False
    covered = sum(match.end() - match.start() for match in _REPEATED_FRAGMENT.finditer(squeezed))
    return covered * 2 > len(squeezed)


@functools.lru_cache(maxsize=16)
def _blocklist_pattern(blocklist: tuple[str, ...]) -> re.Pattern[str] | None:
    words = [re.escape(word.strip()) for word in blocklist if word.strip()]
    if not words:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(words) + r")(?!\w)", re.IGNORECASE)


def find_blocked(text: str, blocklist: tuple[str, ...]) -> str | None:
    """Return the first blocklisted word in ``text`` (whole word, any case), or None."""
    pattern = _blocklist_pattern(blocklist)
    if pattern is None:
        return None
    match = pattern.search(text)
    return None if match is None else match.group(0)


def sanitize_player_text(text: str, max_chars: int) -> str:
    """Make typed player text safe to splice into a prompt, once, where it enters the game.

    Removes terminal escape sequences, control characters (NUL, ESC, ...), invisible
    format characters (zero-width spaces and joiners, bidi overrides and isolates such
    as U+202E) and double quotes (they would end the quoted line in a completion
    prompt); keeps at most two combining marks per letter; collapses every kind of
    whitespace to single spaces and caps the length at a word boundary when one is
    near. Idempotent.
    """
    text = _ANSI_ESCAPE.sub(" ", text)
    text = _collapse(_limit_combining(_strip_controls(text)).translate(_QUOTE_TABLE))
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = cut.rfind(" ")
    if space >= max_chars // 2:
        cut = cut[:space]
    return cut.strip()
