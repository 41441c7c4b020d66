"""Keeping unfit lines off screen: a word list, then the model's own reading of a line.

- :mod:`ai.content.labelled`: the labelled lines the filter is trained and evaluated on.
"""

from ai.content.labelled import LabelledError, LabelledLine, load_labelled

__all__ = ["LabelledError", "LabelledLine", "load_labelled"]
