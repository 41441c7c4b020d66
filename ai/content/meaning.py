"""Layer 2 of the content filter: a small network on the model's own hidden states.

The classifier is data (``assets/content/classifier.npz``), trained by
``tools/train/content_classifier.py`` on the labelled lines of
``assets/content/exemplars.jsonl`` and never on the evaluation set. It holds the layer it
reads and how a line's tokens are pooled there (``mean``, or ``mean+last``: the mean and
the last token's state side by side), the standardisation of those features, the weights
(one hidden layer of rectified units, or none: a logistic regression), and the sha256 of
the model it was trained on: the hidden states of any other model mean nothing to it, so
:meth:`Classifier.fits_model` says whether to use it.
"""

from __future__ import annotations

import logging
import math
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

FORMAT = 2
# Format 1: a logistic regression on the mean state; format 2 adds pooling and a hidden layer.
_FORMATS = (1, 2)
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

    @property
    def size(self) -> int:
        """Features per line (the model's hidden size, twice over for ``mean+last``)."""
        return int(self.mean.shape[0])

    def fits_model(self, model_sha256: str) -> bool:
        """True when the classifier was trained on the hidden states of this model."""
        return model_sha256.lower() == self.model_sha256.lower()

    def probability(self, features: FloatArray) -> float:
        """The chance, by this classifier, that the line these features come from is unfit."""
        if features.shape != self.mean.shape:
            raise ValueError(f"expected {self.size} features, got {features.shape}")
        return _sigmoid(self.logit(features))

    def logit(self, features: FloatArray) -> float:
        """The log-odds behind :meth:`probability`."""
        x = (features - self.mean) / self.scale
        if self.hidden_weights is not None and self.hidden_bias is not None:
            x = np.maximum(x @ self.hidden_weights + self.hidden_bias, 0.0)
        return float(x @ self.weights) + self.bias

    def save(self, path: Path) -> None:
        """Write the classifier as a small ``.npz`` (no pickles)."""
        # Any: the arrays are spread as keywords, which numpy's stubs type one by one.
        hidden: dict[str, Any] = {}
        if self.hidden_weights is not None and self.hidden_bias is not None:
            hidden["hidden_weights"] = self.hidden_weights.astype(np.float32)
            hidden["hidden_bias"] = self.hidden_bias.astype(np.float32)
        np.savez(
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
                )
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            if isinstance(exc, ClassifierError):
                raise
            raise ClassifierError(f"cannot read classifier {path}: {exc}") from exc


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z > -60.0 else 0.0
