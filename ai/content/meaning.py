"""Layer 2 of the content filter: a logistic regression on the model's own hidden states.

The classifier is data (``assets/content/classifier.npz``), trained by
``tools/train/content_classifier.py`` on the labelled lines of
``assets/content/exemplars.jsonl`` and never on the evaluation set. It holds the layer it
reads, the standardisation of that layer's features, the weights, and the sha256 of the
model it was trained on: the hidden states of any other model mean nothing to it, so
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

FORMAT = 1
_KEYS = ("format", "layer", "model_sha256", "mean", "scale", "weights", "bias", "threshold")


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

    def __post_init__(self) -> None:
        size = self.weights.shape
        if len(size) != 1 or self.mean.shape != size or self.scale.shape != size:
            raise ClassifierError(f"{self.source}: mean, scale and weights must be one size")
        if not np.all(np.isfinite(self.weights)) or not np.all(self.scale > 0):
            raise ClassifierError(f"{self.source}: weights must be finite and scales positive")
        if not 0 <= self.layer < 1024:
            raise ClassifierError(f"{self.source}: layer {self.layer} out of range")
        if not 0.0 < self.threshold < 1.0:
            raise ClassifierError(f"{self.source}: threshold must be in (0, 1)")

    @property
    def size(self) -> int:
        """Features per line (the model's hidden size)."""
        return int(self.weights.shape[0])

    def fits_model(self, model_sha256: str) -> bool:
        """True when the classifier was trained on the hidden states of this model."""
        return model_sha256.lower() == self.model_sha256.lower()

    def probability(self, features: FloatArray) -> float:
        """The chance, by this classifier, that the line these features come from is unfit."""
        if features.shape != self.weights.shape:
            raise ValueError(f"expected {self.size} features, got {features.shape}")
        z = float(((features - self.mean) / self.scale) @ self.weights) + self.bias
        return 1.0 / (1.0 + math.exp(-z)) if z > -60.0 else 0.0

    def save(self, path: Path) -> None:
        """Write the classifier as a small ``.npz`` (no pickles)."""
        np.savez(
            path,
            format=np.array(FORMAT),
            layer=np.array(self.layer),
            model_sha256=np.array(self.model_sha256),
            mean=self.mean.astype(np.float32),
            scale=self.scale.astype(np.float32),
            weights=self.weights.astype(np.float32),
            bias=np.array(self.bias),
            threshold=np.array(self.threshold),
        )

    @classmethod
    def load(cls, path: Path) -> Classifier:
        """Read a classifier written by :meth:`save`; raise ClassifierError naming the file."""
        try:
            with np.load(path, allow_pickle=False) as data:
                missing = [key for key in _KEYS if key not in data.files]
                if missing:
                    raise ClassifierError(f"{path}: missing {', '.join(missing)}")
                if int(data["format"]) != FORMAT:
                    raise ClassifierError(f"{path}: format {int(data['format'])}, not {FORMAT}")
                return cls(
                    layer=int(data["layer"]),
                    model_sha256=str(data["model_sha256"]),
                    mean=np.asarray(data["mean"], dtype=np.float32),
                    scale=np.asarray(data["scale"], dtype=np.float32),
                    weights=np.asarray(data["weights"], dtype=np.float32),
                    bias=float(data["bias"]),
                    threshold=float(data["threshold"]),
                    source=str(path),
                )
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            if isinstance(exc, ClassifierError):
                raise
            raise ClassifierError(f"cannot read classifier {path}: {exc}") from exc
