"""How likely a piece of text is after a prompt, read from llama.cpp's own logits.

Used for the contrastive score of candidate lines: the same words are scored after the
situation prompt and after a neutral one. Only the positions that predict the
candidate's tokens ask llama.cpp for logits, since the 262k-word output layer is most
of the cost on a small model. Runs on the worker thread only, like every model call.

It drives the ``Llama`` object's context directly and keeps the object's record of
what is in its KV cache (``input_ids``, ``n_tokens``) true, so the next generation
still reuses the shared prompt prefix.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)


def _common_prefix(a: Any, b: list[int]) -> int:
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


class TokenScorer:
    """Mean log-probability of a continuation after a prompt, for one ``Llama``."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm
        self._n_vocab = int(llm.n_vocab())

    def mean_logprob(self, prompt: str, continuation: str) -> float | None:
        """Mean natural-log probability per token of ``continuation`` right after ``prompt``.

        The continuation's tokens are those the joined text adds after the prompt's own
        tokens, so a word split across the boundary is scored as the model would see it.
        """
        logprobs = self._logprobs(prompt, continuation)
        return float(np.mean(logprobs)) if logprobs else None

    def total_logprob(self, prompt: str, continuation: str) -> float | None:
        """Sum of natural-log probabilities of ``continuation``'s tokens after ``prompt``."""
        logprobs = self._logprobs(prompt, continuation)
        return float(np.sum(logprobs)) if logprobs else None

    def _logprobs(self, prompt: str, continuation: str) -> list[float]:
        llm = self._llm
        head = llm.tokenize(prompt.encode("utf-8"))
        tokens = llm.tokenize((prompt + continuation).encode("utf-8"))
        start = _common_prefix(head, tokens)
        if start == 0 or start >= len(tokens):
            return []
        if len(tokens) > llm.n_ctx():
            raise ValueError(f"{len(tokens)} tokens do not fit n_ctx={llm.n_ctx()}")
        return self._evaluate(tokens, start)

    def _evaluate(self, tokens: list[int], start: int) -> list[float]:
        """Decode ``tokens`` past the cached prefix; log p of each token from ``start`` on."""
        llm = self._llm
        ctx = llm._ctx
        cached = llm.input_ids[: llm.n_tokens]
        # Re-decode from the position whose logits predict the first scored token.
        keep = min(_common_prefix(cached, tokens), start - 1)
        if not ctx.kv_cache_seq_rm(-1, keep, -1):
            keep = 0
            ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.n_tokens = keep
        llm._requires_eval = True
        batch = llm._batch
        raw = batch.batch
        step = llm.n_batch
        out: list[float] = []
        for begin in range(keep, len(tokens), step):
            chunk = tokens[begin : begin + step]
            raw.n_tokens = len(chunk)
            wanted: list[tuple[int, int]] = []
            for i, token in enumerate(chunk):
                pos = begin + i
                raw.token[i] = token
                raw.pos[i] = pos
                raw.seq_id[i][0] = 0
                raw.n_seq_id[i] = 1
                predicts = start - 1 <= pos < len(tokens) - 1
                raw.logits[i] = predicts
                if predicts:
                    wanted.append((i, tokens[pos + 1]))
            ctx.decode(batch)
            llm.input_ids[begin : begin + len(chunk)] = chunk
            llm.n_tokens = begin + len(chunk)
            for row, target in wanted:
                logits = np.ctypeslib.as_array(ctx.get_logits_ith(row), shape=(self._n_vocab,))
                top = float(logits.max())
                log_norm = top + float(np.log(np.exp(logits - top).sum()))
                out.append(float(logits[target]) - log_norm)
        return out
