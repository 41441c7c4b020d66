"""Keeping unfit lines off screen: a word list, then the model's own reading of a line.

- :mod:`ai.content.words`: layer 1, whole words and phrases (slurs as salted hashes),
  pure Python, any thread.
- :mod:`ai.content.labelled`: the labelled lines the filter is trained and evaluated on.
"""

from ai.content.labelled import LabelledError, LabelledLine, load_labelled
from ai.content.words import WordList, WordListError, WordMatch

__all__ = [
    "LabelledError",
    "LabelledLine",
    "WordList",
    "WordListError",
    "WordMatch",
    "load_labelled",
]
