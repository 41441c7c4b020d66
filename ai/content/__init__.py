"""Keeping unfit lines off screen: a word list, then the model's own reading of a line.

- :mod:`ai.content.words`: layer 1, whole words and phrases (slurs as salted hashes),
  pure Python, any thread.
- :mod:`ai.content.hidden` and :mod:`ai.content.meaning`: layer 2, a small network
  on the line's hidden state part-way up the loaded model, on the worker thread.
- :mod:`ai.content.filter`: :class:`ContentFilter`, both layers behind one small API.
- :mod:`ai.content.labelled`: the labelled lines the filter is trained and evaluated on.
"""

from ai.content.filter import ContentFilter, ContentVerdict, Layer
from ai.content.hidden import HiddenStates, LlamaHiddenStates
from ai.content.labelled import LabelledError, LabelledLine, load_labelled
from ai.content.meaning import Classifier, ClassifierError
from ai.content.words import WordList, WordListError, WordMatch

__all__ = [
    "Classifier",
    "ClassifierError",
    "ContentFilter",
    "ContentVerdict",
    "HiddenStates",
    "LabelledError",
    "LabelledLine",
    "Layer",
    "LlamaHiddenStates",
    "WordList",
    "WordListError",
    "WordMatch",
    "load_labelled",
]
