"""The words of a line, as the second reader of the semantic layer sees them.

Layer 2 of the filter reads a line twice: a network on the model's hidden state
(:mod:`ai.content.meaning`), and a linear model on the line's words, its pairs of words
and the runs of three to five letters inside each word. The hidden state is read near
the bottom of the model, where a line is mostly its tokens; the letter runs see through
chat spelling ("u", "ur", "wanna") and a misspelt word, and the pairs see a shape
("get u back", "knead your dough") that single tokens do not. Mixed, the two catch more
than either alone at the same rate of fit lines refused (``assets/content/README.md``).

Each feature is hashed (CRC-32) into one of :data:`BUCKETS` weights, so the model is one
array with no vocabulary to ship, and a line's features are counted once each and scaled
by one over the square root of their number: a long line weighs no more than a short one.
The same function makes the features in training (``tools/train/content_classifier.py``)
and in the game.
"""

from __future__ import annotations

import math
import re
import zlib
from typing import Any

import numpy as np

#: How many weights the features are hashed into.
BUCKETS = 1 << 18
_WORD = re.compile(r"[a-z0-9']+")
_RUNS = (3, 4, 5)

IntArray = np.ndarray[Any, np.dtype[np.int64]]


def hashed_features(text: str) -> IntArray:
    """The buckets of ``text``'s words, word pairs and letter runs, each once, sorted."""
    words = _WORD.findall(text.lower())
    names = {"w:" + word for word in words}
    names.update(f"b:{a} {b}" for a, b in zip(words, words[1:], strict=False))
    for word in words:
        padded = f"<{word}>"
        for size in _RUNS:
            names.update("c:" + padded[i : i + size] for i in range(len(padded) - size + 1))
    buckets = {zlib.crc32(name.encode("utf-8")) % BUCKETS for name in names}
    return np.array(sorted(buckets), dtype=np.int64)


def feature_scale(count: int) -> float:
    """What each of a line's ``count`` features weighs (none: nothing)."""
    return 1.0 / math.sqrt(count) if count else 0.0
