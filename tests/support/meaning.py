"""A scripted stand-in for the model's hidden states, for the content filter's semantic layer.

It returns, for each text, the features that make the given classifier score it just
as ``unfit(text)`` says: far above the threshold, or far below it, the words' part of a
mixed classifier counted in. What the semantic layer then decides is the classifier's
own arithmetic; only the model is left out. A classifier that lets plain lines pass on
their words unread would never ask for them: :func:`reading_every_line` turns that off.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ai.content import Classifier

_MARGIN = 8.0


def reading_every_line(classifier: Classifier) -> Classifier:
    """``classifier`` with no floor: every line the word list passes is read."""
    return replace(classifier, words_floor=-math.inf)


class ScriptedMeaning:
    """Hidden states whose classifier score follows ``unfit``; records what it read."""

    def __init__(self, classifier: Classifier, unfit: Callable[[str], bool]) -> None:
        self._classifier = classifier
        self._unfit = unfit
        self.read: list[str] = []
        self.closed = False

    @property
    def layer(self) -> int:
        """The layer the classifier was trained on."""
        return self._classifier.layer

    def pooled(self, text: str) -> np.ndarray[Any, np.dtype[np.float32]] | None:
        """Features that put ``text`` on the side of the threshold ``unfit`` names."""
        self.read.append(text)
        c = self._classifier
        total = _MARGIN if self._unfit(text) else -_MARGIN
        # The network's log-odds that, mixed with the words', make ``total``.
        target = (total - (1.0 - c.mix) * c.words_logit(text)) / c.mix
        if c.hidden_weights is None:
            weights = c.weights.astype(np.float64)
            # z = ((f - mean) / scale) . w + bias; choose f along w so that z is what we want.
            step = (target - c.bias) / float(weights @ weights)
            return (c.mean + c.scale * weights * step).astype(np.float32)
        return self._through_hidden(target)

    def _through_hidden(self, target: float) -> np.ndarray[Any, np.dtype[np.float32]]:
        """For a network: walk along its slope at the mean until the score is past ``target``."""
        c = self._classifier
        assert c.hidden_weights is not None
        direction = c.hidden_weights.astype(np.float64) @ c.weights.astype(np.float64)
        direction /= float(np.linalg.norm(direction))
        for power in range(14):
            for sign in (1.0, -1.0):
                features = (c.mean + c.scale * direction * sign * 2.0**power).astype(np.float32)
                logit = c.network_logit(features)
                if (logit >= target) if target > 0 else (logit <= target):
                    return features
        raise AssertionError("no features reach the score wanted")

    def close(self) -> None:
        """Nothing to free."""
        self.closed = True
