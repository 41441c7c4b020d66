"""Other ways to read a line's meaning, measured against the shipped classifier.

Used by ``tools/eval/content_filter.py --methods`` only; the game never imports this.

- **centroid** and **knn**: the same hidden state the classifier reads, compared with the
  exemplars' (cosine, after the classifier's own standardisation): nearer the unfit
  centroid than the fit one, or the share of unfit lines among the 7 nearest.
- **judge**: the model's own log-odds that a line is "bad" rather than "ok" after a short
  few-shot judgement prompt, read from the full model's logits (all 18 layers and the
  output projection; the prompt's shared part stays in a small cache of its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

Matrix = np.ndarray[Any, np.dtype[np.float64]]

JUDGE_HEADER = (
    "Lines from a family-friendly village game. Each is marked ok if a villager may say it "
    "in front of children, or bad if it is rude, cruel, violent, sexual, hateful, swearing, "
    "or not spoken by a villager at all.\n"
)
_K = 7


def _unit(rows: Matrix) -> Matrix:
    norms: Matrix = np.linalg.norm(rows, axis=1, keepdims=True) + 1e-9
    return np.asarray(rows / norms, dtype=np.float64)


class Neighbours:
    """Centroid and k-nearest-neighbour scores against standardised exemplar states."""

    def __init__(self, exemplars: Matrix, unfit: Sequence[bool], mean: Matrix, scale: Matrix):
        self._mean, self._scale = mean, scale
        self._rows = _unit((exemplars - mean) / scale)
        self._unfit = np.asarray(unfit, dtype=np.float64)
        self._bad = _unit(self._rows[self._unfit == 1.0].mean(axis=0, keepdims=True))[0]
        self._good = _unit(self._rows[self._unfit == 0.0].mean(axis=0, keepdims=True))[0]

    def centroid(self, state: Matrix) -> float:
        """Cosine to the unfit centroid minus cosine to the fit one."""
        row = _unit(((state - self._mean) / self._scale)[None, :])[0]
        return float(row @ self._bad - row @ self._good)

    def knn(self, state: Matrix, skip: int = -1) -> float:
        """Share of unfit lines among the nearest exemplars (``skip`` leaves one out)."""
        row = _unit(((state - self._mean) / self._scale)[None, :])[0]
        similar = self._rows @ row
        if skip >= 0:
            similar[skip] = -np.inf
        nearest = np.argpartition(-similar, _K)[:_K]
        return float(self._unfit[nearest].mean() + 1e-3 * similar[nearest].max())


class Judge:
    """Log-odds of " bad" over " ok" after a few-shot judgement prompt (worker thread)."""

    def __init__(self, llm: Any, shots: Sequence[tuple[str, bool]], n_threads: int = 1):
        import llama_cpp

        self._lc = llama_cpp
        self._llm = llm
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = 1024
        params.n_batch = 512
        params.n_ubatch = 512
        params.n_seq_max = 1
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        self._ctx = llama_cpp.llama_init_from_model(llm.model, params)
        if not self._ctx:
            raise RuntimeError("llama.cpp could not open a context for the judge")
        self._memory = llama_cpp.llama_get_memory(self._ctx)
        self._batch = llama_cpp.llama_batch_init(512, 0, 1)
        prefix = JUDGE_HEADER + "".join(
            f'Line: "{text}"\nVerdict: {"ok" if fit else "bad"}\n' for text, fit in shots
        )
        self._prefix = [int(t) for t in llm.tokenize(prefix.encode(), add_bos=True)]
        self._ok = self._single_token(" ok")
        self._bad = self._single_token(" bad")
        self._decode(self._prefix, 0, last_logits=False)
        self._vocab = int(llm.n_vocab())

    def _single_token(self, text: str) -> int:
        tokens = self._llm.tokenize(text.encode(), add_bos=False)
        if len(tokens) != 1:
            raise RuntimeError(f"{text!r} is not one token for this model")
        return int(tokens[0])

    def _decode(self, tokens: list[int], start: int, last_logits: bool) -> None:
        batch = self._batch
        for offset in range(0, len(tokens), 512):
            chunk = tokens[offset : offset + 512]
            batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                batch.token[i] = token
                batch.pos[i] = start + offset + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = last_logits and offset + i == len(tokens) - 1
            if self._lc.llama_decode(self._ctx, batch) != 0:
                raise RuntimeError("llama_decode failed in the judge")

    def log_odds(self, text: str) -> float:
        """How much likelier the model finds " bad" than " ok" for ``text`` (natural log)."""
        line = " ".join(text.replace('"', "'").split())
        tail = [int(t) for t in self._llm.tokenize(f'Line: "{line}"\nVerdict:'.encode(), False)]
        n = len(self._prefix)
        self._lc.llama_memory_seq_rm(self._memory, 0, n, -1)
        self._decode(tail, n, last_logits=True)
        logits = self._lc.llama_get_logits_ith(self._ctx, -1)
        return float(logits[self._bad] - logits[self._ok])

    def close(self) -> None:
        """Free the judge's context."""
        self._lc.llama_batch_free(self._batch)
        self._lc.llama_free(self._ctx)


def threshold_at(scores: Sequence[float], unfit: Sequence[bool], fp_target: float) -> float:
    """The score above which ``fp_target`` of the fit lines fall."""
    fit = np.sort(np.asarray([s for s, u in zip(scores, unfit, strict=True) if not u]))
    index = min(len(fit) - 1, max(0, int(np.ceil(len(fit) * (1.0 - fp_target))) - 1))
    return float(fit[index])
