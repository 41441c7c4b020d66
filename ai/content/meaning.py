"""Layer 2 of the content filter: a small network on the model's own hidden states.

The classifier is data (``assets/content/classifier.npz``), trained by
``tools/train/content_classifier.py`` on the labelled lines of
``assets/content/exemplars.jsonl`` and never on the evaluation set. It holds the layer it
reads and how a line's tokens are pooled there (``mean``, or ``mean+last``: the mean and
the last token's state side by side), the standardisation of those features, the weights
(one hidden layer of rectified units, or none: a logistic regression), and the sha256 of
the model it was trained on: the hidden states of any other model mean nothing to it, so
:meth:`Classifier.fits_model` says whether to use it.

Format 3 adds a second reader: a linear model on the line's hashed words and letter runs
(:mod:`ai.content.lexical`). The two log-odds are mixed, ``mix`` of the network's and the
rest of the words', and a line whose words alone score below ``words_floor`` passes
without the model being read: in cross-validation no unfit line that the mix would have
caught scored so low on its words, and most of the village's own lines do.
"""

from __future__ import annotations

import logging
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ai.content.lexical import BUCKETS, feature_scale, hashed_features

logger = logging.getLogger(__name__)

FORMAT = 3
# Format 1: a logistic regression on the mean state; format 2 adds pooling and a hidden
# layer; format 3 the words' linear model beside it.
_FORMATS = (1, 2, 3)
_KEYS = ("format", "layer", "model_sha256", "mean", "scale", "weights", "bias", "threshold")
POOLINGS = ("mean", "mean+last")


class ClassifierError(ValueError):
    """The classifier file is missing, malformed or from another format."""


FloatArray = np.ndarray[Any, np.dtype[np.float32]]


@dataclass(frozen=True)
class Classifier:
    """Weights that turn a line's pooled hidden state into the chance it is unfit."""

    layer: int
    model_sha256: str
    mean: FloatArray
    scale: FloatArray
    weights: FloatArray
    bias: float
    threshold: float
    source: str = "<memory>"
    pooling: str = "mean"
    #: The hidden layer (features x units) and its biases; None for a logistic regression.
    hidden_weights: FloatArray | None = None
    hidden_bias: FloatArray | None = None
    #: The words' linear model (one weight per bucket of :mod:`ai.content.lexical`) and
    #: its bias; None when the network reads alone.
    words_weights: FloatArray | None = None
    words_bias: float = 0.0
    #: The network's share of the mixed log-odds; the words' is the rest.
    mix: float = 1.0
    #: Below this log-odds of the words alone a line passes unread by the model.
    words_floor: float = -math.inf

    def __post_init__(self) -> None:
        size = self.mean.shape
        if len(size) != 1 or self.scale.shape != size:
            raise ClassifierError(f"{self.source}: mean and scale must be one size")
        if (self.hidden_weights is None) != (self.hidden_bias is None):
            raise ClassifierError(f"{self.source}: a hidden layer needs weights and biases")
        if self.hidden_weights is None:
            if self.weights.shape != size:
                raise ClassifierError(f"{self.source}: mean, scale and weights must be one size")
        else:
            units = self.weights.shape
            hidden_bias = self.hidden_bias
            if (
                len(units) != 1
                or self.hidden_weights.shape != (size[0], units[0])
                or hidden_bias is None
                or hidden_bias.shape != units
            ):
                raise ClassifierError(f"{self.source}: the hidden layer's shapes do not agree")
            if not np.all(np.isfinite(self.hidden_weights)):
                raise ClassifierError(f"{self.source}: weights must be finite")
        if not np.all(np.isfinite(self.weights)) or not np.all(self.scale > 0):
            raise ClassifierError(f"{self.source}: weights must be finite and scales positive")
        if self.pooling not in POOLINGS:
            raise ClassifierError(f"{self.source}: pooling {self.pooling!r} is not in {POOLINGS}")
        if not 0 <= self.layer < 1024:
            raise ClassifierError(f"{self.source}: layer {self.layer} out of range")
        if not 0.0 < self.threshold < 1.0:
            raise ClassifierError(f"{self.source}: threshold must be in (0, 1)")
        if self.words_weights is None:
            if self.mix != 1.0:
                raise ClassifierError(f"{self.source}: a mix needs the words' weights")
        else:
            if self.words_weights.shape != (BUCKETS,):
                raise ClassifierError(f"{self.source}: the words need {BUCKETS} weights")
            if not np.all(np.isfinite(self.words_weights)):
                raise ClassifierError(f"{self.source}: weights must be finite")
            if not 0.0 < self.mix <= 1.0:
                raise ClassifierError(f"{self.source}: mix must be in (0, 1]")

    @property
    def size(self) -> int:
        """Features per line (the model's hidden size, twice over for ``mean+last``)."""
        return int(self.mean.shape[0])

    def fits_model(self, model_sha256: str) -> bool:
        """True when the classifier was trained on the hidden states of this model."""
        return model_sha256.lower() == self.model_sha256.lower()

    @property
    def reads_words(self) -> bool:
        """True when the line's words are weighed beside its hidden state."""
        return self.words_weights is not None

    def probability(
        self, features: FloatArray, text: str = "", by_words: float | None = None
    ) -> float:
        """The chance, by this classifier, that ``text``, read as ``features``, is unfit.

        ``text`` is the line as the model read it (:func:`ai.content.filter.read_form`);
        only a classifier that :attr:`reads_words` looks at it, and not even then when
        ``by_words``, its :meth:`words_logit`, is already known.
        """
        if features.shape != self.mean.shape:
            raise ValueError(f"expected {self.size} features, got {features.shape}")
        return _sigmoid(self.logit(features, text, by_words))

    def logit(self, features: FloatArray, text: str = "", by_words: float | None = None) -> float:
        """The log-odds behind :meth:`probability`: the network's, mixed with the words'."""
        network = self.network_logit(features)
        if self.words_weights is None:
            return network
        if by_words is None:
            if not text:
                raise ValueError("this classifier weighs the line's words: give the line")
            by_words = self.words_logit(text)
        return self.mix * network + (1.0 - self.mix) * by_words

    def network_logit(self, features: FloatArray) -> float:
        """The log-odds of the network on the hidden state alone."""
        x = (features - self.mean) / self.scale
        if self.hidden_weights is not None and self.hidden_bias is not None:
            x = np.maximum(x @ self.hidden_weights + self.hidden_bias, 0.0)
        return float(x @ self.weights) + self.bias

    def words_logit(self, text: str) -> float:
        """The log-odds of the words' linear model on ``text`` alone (0 without one)."""
        if self.words_weights is None:
            return 0.0
        buckets = hashed_features(text)
        total = float(self.words_weights[buckets].sum(dtype=np.float64))
        return total * feature_scale(len(buckets)) + self.words_bias

    def passes_on_words(self, text: str) -> bool:
        """True when ``text``'s words alone score so low that the model need not read it."""
        return self.below_floor(self.words_logit(text))

    def below_floor(self, by_words: float) -> bool:
        """True when a line's :meth:`words_logit` lets it pass without the model's read."""
        return self.words_weights is not None and by_words < self.words_floor

    def save(self, path: Path) -> None:
        """Write the classifier as a small ``.npz`` (no pickles)."""
        # Any: the arrays are spread as keywords, which numpy's stubs type one by one.
        hidden: dict[str, Any] = {}
        if self.hidden_weights is not None and self.hidden_bias is not None:
            hidden["hidden_weights"] = self.hidden_weights.astype(np.float32)
            hidden["hidden_bias"] = self.hidden_bias.astype(np.float32)
        if self.words_weights is not None:
            hidden["words_weights"] = self.words_weights.astype(np.float32)
            hidden["words_bias"] = np.array(self.words_bias)
            hidden["mix"] = np.array(self.mix)
            hidden["words_floor"] = np.array(self.words_floor)
        np.savez_compressed(
            path,
            format=np.array(FORMAT),
            pooling=np.array(self.pooling),
            layer=np.array(self.layer),
            model_sha256=np.array(self.model_sha256),
            mean=self.mean.astype(np.float32),
            scale=self.scale.astype(np.float32),
            weights=self.weights.astype(np.float32),
            bias=np.array(self.bias),
            threshold=np.array(self.threshold),
            **hidden,
        )

    @classmethod
    def load(cls, path: Path) -> Classifier:
        """Read a classifier written by :meth:`save`; raise ClassifierError naming the file."""
        try:
            with np.load(path, allow_pickle=False) as data:
                missing = [key for key in _KEYS if key not in data.files]
                if missing:
                    raise ClassifierError(f"{path}: missing {', '.join(missing)}")
                if int(data["format"]) not in _FORMATS:
                    raise ClassifierError(f"{path}: format {int(data['format'])}, not {FORMAT}")
                hidden = "hidden_weights" in data.files
                words = "words_weights" in data.files
                return cls(
                    layer=int(data["layer"]),
                    model_sha256=str(data["model_sha256"]),
                    mean=np.asarray(data["mean"], dtype=np.float32),
                    scale=np.asarray(data["scale"], dtype=np.float32),
                    weights=np.asarray(data["weights"], dtype=np.float32),
                    bias=float(data["bias"]),
                    threshold=float(data["threshold"]),
                    source=str(path),
                    pooling=str(data["pooling"]) if "pooling" in data.files else "mean",
                    hidden_weights=(
                        np.asarray(data["hidden_weights"], dtype=np.float32) if hidden else None
                    ),
                    hidden_bias=(
                        np.asarray(data["hidden_bias"], dtype=np.float32)
                        if "hidden_bias" in data.files
                        else None
                    ),
                    words_weights=(
                        np.asarray(data["words_weights"], dtype=np.float32) if words else None
                    ),
                    words_bias=float(data["words_bias"]) if words else 0.0,
                    mix=float(data["mix"]) if words else 1.0,
                    words_floor=float(data["words_floor"]) if words else -math.inf,
                )
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            if isinstance(exc, ClassifierError):
                raise
            raise ClassifierError(f"cannot read classifier {path}: {exc}") from exc


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z > -60.0 else 0.0
