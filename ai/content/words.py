"""Layer 1 of the content filter: a list of words and phrases, matched word by word.

Pure Python and cheap (tens of microseconds a line), so any thread may call it: on a
streamed partial line, on the finished line, on what the player typed.

Every word of a line is *normalised* the same way as the list's entries: lower case,
accents dropped, leetspeak folded (0 o, 1 i, 3 e, 4 a, 5 s, 7 t, @ a, $ s, and ! between
letters i) and apostrophes removed. A word is then tried in a few spellings:

- with a common ending taken off (s, es, ed, ing, in, er, ers, y, ies) as long as
  three letters are left ("bitches", "shitty", "fuckin'");
- with each run of one repeated letter, in what is left, as one or as two of it
  ("fuuuck" is "fuck", "asss" is "ass"); a letter is never added, so "as" is not "ass".

Only whole words match: "Scunthorpe", "assassin", "class" and "bass" contain no
listed word. Letters spelled apart ("f u c k", "f-u-c-k") are joined back into one
word, and a word with stars in it ("f*ck") matches a listed word with letters where
the stars are.

Slurs are never spelled out in the repository: the list holds them as
``sha256:<hex>`` of :data:`SALT` plus the normalised word, and each spelling of each
word of a line is hashed to look them up. The salt only keeps the hashes from being
looked up in public tables; it is not a secret. ``python -m ai.content WORD`` prints
the entry for a word.

Phrases are several words on one entry line ("as an ai", "language model"); a colon
counts as a word of its own, so "note:" matches "Note: Marta remembers" but not "a
note for Marta". An entry starting with ``!`` is a word never to refuse, for the few
innocent words whose spellings reach a listed one ("spicy").
"""

from __future__ import annotations

import hashlib
import logging
import re
import sys
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path

logger = logging.getLogger(__name__)

SALT = "zerostall-words-v1:"
HASH_PREFIX = "sha256:"
_HEX = frozenset("0123456789abcdef")
_LEET = str.maketrans(
    {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"}
)
# A word: letters, digits, the leetspeak symbols, apostrophes and masking stars (and "!"
# between them, as in "$h!t"); or a colon.
_TOKEN = re.compile(r"[\w@$*'\u2019]+(?:![\w@$*'\u2019]+)*|:")
_RUN = re.compile(r"(.)\1+")
_SUFFIXES = ("ies", "ers", "ing", "es", "ed", "in", "er", "s", "y")
_MIN_STEM = 3
# Beyond this many runs of a repeated letter a word is tried squeezed and as written only.
_MAX_RUNS = 4
_MAX_STARS_LETTERS = 3
_MEMO_SIZE = 4096


class WordListError(ValueError):
    """The word list file is malformed; the message names the file and line."""


def normalise(word: str) -> str:
    """One word as the list compares it: folded, lower case, without apostrophes."""
    text = unicodedata.normalize("NFKD", word.lower())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return text.translate(_LEET).replace("'", "").replace("\u2019", "")


def entry_hash(word: str) -> str:
    """The ``sha256:`` entry for ``word`` (normalised first)."""
    digest = hashlib.sha256((SALT + normalise(word)).encode("utf-8")).hexdigest()
    return HASH_PREFIX + digest


def _run_spellings(word: str) -> list[str]:
    """``word`` with each run of a repeated letter as one or as two of it."""
    pieces = _RUN.split(word)
    runs = [m.group(0) for m in _RUN.finditer(word)]
    if not runs:
        return [word]
    if len(runs) > _MAX_RUNS:
        return list(dict.fromkeys((word, _RUN.sub(r"\1", word), _RUN.sub(r"\1\1", word))))
    # _RUN.split alternates text and the captured letter: text, letter, text, ...
    texts = pieces[0::2]
    options = [(run[0], run[:2]) for run in runs]
    out: list[str] = []
    for choice in product(*options):
        parts = [texts[0]]
        for run, text in zip(choice, texts[1:], strict=True):
            parts.append(run)
            parts.append(text)
        out.append("".join(parts))
    if word not in out:
        out.append(word)
    return out


def spellings(word: str) -> list[str]:
    """Every spelling of a normalised word that the list is checked against.

    Endings come off the word as written, then runs of letters are squeezed in what is
    left: squeezing first would make "assess" end in "asses" and lose its ending to "ass".
    """
    stems = [word]
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            stem = word[: -len(suffix)]
            stems.append(stem + "y" if suffix == "ies" else stem)
    out: list[str] = []
    for stem in stems:
        out.extend(_run_spellings(stem))
    return list(dict.fromkeys(out))


def words_of(text: str) -> list[str]:
    """The normalised words of ``text``, letters spelled apart joined back together."""
    raw = [normalise(token) for token in _TOKEN.findall(text)]
    out: list[str] = []
    single: list[str] = []
    for word in raw:
        if len(word) == 1 and word.isalpha():
            single.append(word)
            continue
        if len(single) >= 3:
            out.append("".join(single))
        else:
            out.extend(single)
        single = []
        if word:
            out.append(word)
    out.extend(["".join(single)] if len(single) >= 3 else single)
    return out


@dataclass(frozen=True, slots=True)
class WordMatch:
    """Which entry of the list a line matched: its line number, and hashed or not.

    Never carries the matched word itself, so it can be logged at any level.
    """

    entry_line: int
    hashed: bool


class WordList:
    """Words, phrases and hashed words that keep a line off screen.

    Safe to share between threads: the only state that changes is a cache of words
    already looked up, and a lost or repeated entry there costs only time.
    """

    def __init__(
        self,
        words: dict[str, int],
        hashes: dict[str, int],
        phrases: Sequence[tuple[tuple[str, ...], int]],
        source: str = "<memory>",
        allowed: frozenset[str] = frozenset(),
    ) -> None:
        self.words = dict(words)
        self.hashes = dict(hashes)
        self.phrases = tuple(phrases)
        self.source = source
        self.allowed = allowed
        self._by_first: dict[str, list[tuple[tuple[str, ...], int]]] = {}
        for parts, number in self.phrases:
            self._by_first.setdefault(parts[0], []).append((parts, number))
        self._memo: dict[str, WordMatch | None] = {}

    @classmethod
    def from_entries(cls, entries: Sequence[str], source: str = "<memory>") -> WordList:
        """Build a list from entry lines (the file's syntax, without comments)."""
        words: dict[str, int] = {}
        hashes: dict[str, int] = {}
        phrases: list[tuple[tuple[str, ...], int]] = []
        allowed: set[str] = set()
        for number, line in enumerate(entries, start=1):
            entry = line.strip()
            if not entry:
                continue
            where = f"{source}:{number}"
            if entry.startswith("!"):
                parts = tuple(words_of(entry[1:]))
                if len(parts) != 1 or "*" in parts[0]:
                    raise WordListError(f"{where}: '!' takes one word")
                allowed.add(parts[0])
                continue
            if entry.startswith(HASH_PREFIX):
                digest = entry[len(HASH_PREFIX) :].lower()
                if len(digest) != 64 or not set(digest) <= _HEX:
                    raise WordListError(f"{where}: a hashed entry is sha256: and 64 hex digits")
                hashes.setdefault(digest, number)
                continue
            parts = tuple(words_of(entry))
            if not parts:
                raise WordListError(f"{where}: no word in entry")
            if any("*" in part for part in parts):
                raise WordListError(f"{where}: an entry cannot contain '*'")
            if len(parts) == 1:
                words.setdefault(parts[0], number)
            else:
                phrases.append((parts, number))
        return cls(words, hashes, tuple(phrases), source, frozenset(allowed))

    @classmethod
    def load(cls, path: Path) -> WordList:
        """Read a list file: one entry a line, ``#`` starts a comment."""
        return cls.from_entries(read_entries(path, "word list"), str(path))

    def __len__(self) -> int:
        return len(self.words) + len(self.hashes) + len(self.phrases)

    def find(self, text: str) -> WordMatch | None:
        """The first entry ``text`` matches, or None."""
        seen = words_of(text)
        memo = self._memo
        for word in seen:
            if word in memo:
                found = memo[word]
            else:
                found = self._find_word(word)
                if len(memo) >= _MEMO_SIZE:
                    memo.clear()
                memo[word] = found
            if found is not None:
                return found
        for i, word in enumerate(seen):
            for parts, number in self._by_first.get(word, ()):
                if tuple(seen[i : i + len(parts)]) == parts:
                    return WordMatch(number, hashed=False)
        return None

    def _find_word(self, word: str) -> WordMatch | None:
        if word in self.allowed:
            return None
        for spelled in spellings(word):
            if "*" in spelled:
                found = self._find_masked(spelled)
                if found is not None:
                    return found
                continue
            number = self.words.get(spelled)
            if number is not None:
                return WordMatch(number, hashed=False)
            if self.hashes:
                digest = hashlib.sha256((SALT + spelled).encode("utf-8")).hexdigest()
                number = self.hashes.get(digest)
                if number is not None:
                    return WordMatch(number, hashed=True)
        return None

    def _find_masked(self, word: str) -> WordMatch | None:
        """A word with stars: each run of stars stands for one to three letters."""
        letters = word.replace("*", "")
        if len(letters) < 1 or len(letters) * 2 < len(word) - len(letters):
            return None  # mostly stars: nothing left to recognise
        pattern = re.compile(
            "".join(
                f"[a-z]{{1,{_MAX_STARS_LETTERS}}}" if piece.startswith("*") else re.escape(piece)
                for piece in re.findall(r"\*+|[^*]+", word)
            )
        )
        for entry, number in self.words.items():
            if pattern.fullmatch(entry):
                return WordMatch(number, hashed=False)
        return None


def read_entries(path: Path, what: str) -> list[str]:
    """The lines of a list file with their ``#`` comments cut off; a file that cannot be
    read is a :class:`WordListError` naming ``what`` and the path."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise WordListError(f"cannot read {what} {path}: {exc}") from exc
    return [line.split("#", 1)[0] for line in lines]


def _entries_for(argv: Sequence[str]) -> Iterator[str]:
    for word in argv:
        yield entry_hash(word)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the hashed entry for each word given, one a line."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stderr.write("usage: python -m ai.content WORD...\n")
        return 2
    for line in _entries_for(args):
        sys.stdout.write(line + "\n")
    return 0
