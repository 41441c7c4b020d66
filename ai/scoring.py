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
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens ``a`` and ``b`` share."""
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
        start = common_prefix(head, tokens)
        if start == 0 or start >= len(tokens):
            return []
        if len(tokens) > llm.n_ctx():
            raise ValueError(f"{len(tokens)} tokens do not fit n_ctx={llm.n_ctx()}")
        return self._evaluate(tokens, start)

    def choose(
        self, prompt: str, options: Sequence[str], prefix: str = ""
    ) -> tuple[int, float] | None:
        """The option the model likes best after ``prompt``, by greedy search of the options.

        The prompt is read as the model reads it before it writes (its own tokens, then
        what follows), and each option is tokenized with ``prefix`` in front of it, as
        one answer: the tokens the model would write, as it was trained to. The options'
        tokens form a tree. At every point where the options part ways, one row of
        logits says which next token is likeliest, and the search follows it; stretches
        that all remaining options share are read without logits, and the search stops
        as soon as one option is left. A closed set of a few dozen options so costs a
        handful of output rows instead of one per token of each option. Returns the
        index and the log-probability of the branches taken.
        """
        llm = self._llm
        if not options:
            return None
        head = list(llm.tokenize(prompt.encode("utf-8")))
        seqs = [
            head + list(llm.tokenize((prefix + option).encode("utf-8"), add_bos=False))
            for option in options
        ]
        root = len(head)
        if any(len(seq) <= root for seq in seqs):
            return None
        if max(len(seq) for seq in seqs) > llm.n_ctx():
            raise ValueError(f"options do not fit n_ctx={llm.n_ctx()}")
        path = list(head)
        while (
            len(path) < min(len(seq) for seq in seqs) and len({seq[len(path)] for seq in seqs}) == 1
        ):
            path.append(seqs[0][len(path)])  # the prefix: the same for every option
        alive = list(range(len(options)))
        logprob = 0.0
        while len(alive) > 1:
            depth = len(path)
            nexts = sorted({seqs[i][depth] for i in alive if len(seqs[i]) > depth})
            ended = [i for i in alive if len(seqs[i]) == depth]
            if ended:
                return ended[0], logprob  # an option that is a prefix of the others
            if len(nexts) == 1:
                path.append(nexts[0])  # every option left goes on the same way
                continue
            row = self._run(path, len(path) - 1, {len(path) - 1: nexts})[len(path) - 1]
            best = max(range(len(nexts)), key=row.__getitem__)
            logprob += row[best]
            path.append(nexts[best])
            alive = [i for i in alive if len(seqs[i]) > depth and seqs[i][depth] == nexts[best]]
        return alive[0], logprob

    def _evaluate(self, tokens: list[int], start: int) -> list[float]:
        """Decode ``tokens`` past the cached prefix; log p of each token from ``start`` on."""
        wanted = {pos: (tokens[pos + 1],) for pos in range(start - 1, len(tokens) - 1)}
        rows = self._run(tokens, start - 1, wanted)
        return [rows[pos][0] for pos in sorted(rows)]

    def _run(
        self, tokens: list[int], keep_max: int, wanted: Mapping[int, Sequence[int]]
    ) -> dict[int, list[float]]:
        """Decode ``tokens`` past the cached prefix (at most ``keep_max`` of it kept).

        Returns, for each position in ``wanted``, the log-probabilities of the listed
        next tokens, read from that position's logits; no other position asks for logits.
        """
        llm = self._llm
        ctx = llm._ctx
        cached = llm.input_ids[: llm.n_tokens]
        keep = min(common_prefix(cached, tokens), keep_max)
        if not ctx.kv_cache_seq_rm(-1, keep, -1):
            keep = 0
            ctx.kv_cache_seq_rm(-1, 0, -1)
        llm.n_tokens = keep
        llm._requires_eval = True
        batch = llm._batch
        raw = batch.batch
        step = llm.n_batch
        out: dict[int, list[float]] = {}
        for begin in range(keep, len(tokens), step):
            chunk = tokens[begin : begin + step]
            raw.n_tokens = len(chunk)
            rows: list[tuple[int, int]] = []
            for i, token in enumerate(chunk):
                pos = begin + i
                raw.token[i] = token
                raw.pos[i] = pos
                raw.seq_id[i][0] = 0
                raw.n_seq_id[i] = 1
                raw.logits[i] = pos in wanted
                if pos in wanted:
                    rows.append((i, pos))
            ctx.decode(batch)
            llm.input_ids[begin : begin + len(chunk)] = chunk
            llm.n_tokens = begin + len(chunk)
            for row, pos in rows:
                logits = np.ctypeslib.as_array(ctx.get_logits_ith(row), shape=(self._n_vocab,))
                top = float(logits.max())
                log_norm = top + float(np.log(np.exp(logits - top).sum()))
                out[pos] = [float(logits[t]) - log_norm for t in wanted[pos]]
        return out
