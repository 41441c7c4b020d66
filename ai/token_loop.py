"""A lean token loop on llama.cpp's low-level API: decode, sample, piece, and little else.

Every native call releases Python's GIL and takes it back, and every bytecode the
worker runs between two calls holds it while the game's main thread may be waiting.
``Llama.generate`` spends about 1.5 ms of Python per token on its own bookkeeping
(batch set-up, a prefix loop, stopping criteria, detokenising through two layers).
This loop does two native calls per token, ``llama_decode`` and
``llama_sampler_sample``, with a sampler chain built once per request, no logits copy,
and token pieces cached after their first ``llama_token_to_piece``.

It works on the ``Llama`` object's own context and keeps that object's KV bookkeeping
(``input_ids``, ``n_tokens``) up to date, so ``Llama``'s methods and this loop can take
turns on the same cache. :meth:`TokenLoop.second_context` opens another context on the
same weights, with a cache of its own: a conversation kept there is not pushed out by
the lines generated in between. Like the ``Llama`` object it is for one thread only.
"""

from __future__ import annotations

import codecs
import ctypes
import logging
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import llama_cpp
import numpy as np

from ai.streaming import StopFilter

logger = logging.getLogger(__name__)

# llama-cpp-python's default penalty window, so both paths sample alike.
PENALTY_LAST_N = 64
# llama_decode's return code when the abort callback stopped it.
_ABORTED = 2
_PIECE_BUFFER = 64


class DecodeError(RuntimeError):
    """llama_decode failed; the KV cache was cleared."""


class TokenLoop:
    """Evaluates prompts and samples tokens on one ``Llama``'s context.

    Small pieces so that other uses (several candidates, scoring a continuation) can
    share the same context: :meth:`prefill` puts a prompt in the KV cache reusing the
    longest cached prefix, :meth:`sampler` builds a sampler chain, :meth:`tokens`
    yields sampled ids and :meth:`pieces` yields text with stop strings applied.
    """

    def __init__(self, llm: Any, context: Any = None) -> None:
        # What the cache holds is kept on ``record``: the Llama object itself for its own
        # context (so its methods see the truth), a record of our own for a second one.
        self._llm = llm
        self._record: Any = llm if context is None else _CacheRecord(int(llm.n_ctx()))
        self._ctx = llm.ctx if context is None else context
        self._owns_context = context is not None
        self._vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self._n_vocab = llama_cpp.llama_vocab_n_tokens(self._vocab)
        self._memory = llama_cpp.llama_get_memory(self._ctx)
        self._n_batch = int(llm.n_batch)
        self.n_ctx = int(llm.n_ctx())
        # One token decoded at a time: the batch struct is built once and reused.
        self._one = (llama_cpp.llama_token * 1)()
        self._single = llama_cpp.llama_batch_get_one(self._one, 1)
        # token id -> its bytes, or None for an end-of-generation token.
        self._pieces: dict[int, bytes | None] = {}
        self._piece_buffer = ctypes.create_string_buffer(_PIECE_BUFFER)

    @classmethod
    def second_context(cls, llm: Any) -> TokenLoop:
        """A loop on a new context of ``llm``'s model: same weights, a KV cache of its own.

        Costs the memory of one more cache (about 50 MB for Gemma 3 270M at 2048 tokens).
        Free it with :meth:`close`.
        """
        context = llama_cpp.llama_init_from_model(llm.model, llm.context_params)
        if not context:
            raise RuntimeError("llama.cpp could not create a second context")
        return cls(llm, context)

    @property
    def context(self) -> Any:
        """The ``llama_context_p`` this loop decodes on."""
        return self._ctx

    @property
    def cached(self) -> int:
        """Tokens held in the KV cache."""
        return int(self._record.n_tokens)

    def shared_prefix(self, tokens: Sequence[int] | np.ndarray[Any, Any]) -> int:
        """How many leading ``tokens`` the cache already holds."""
        record = self._record
        n = min(int(record.n_tokens), len(tokens))
        if n == 0:
            return 0
        differ = np.flatnonzero(record.input_ids[:n] != np.asarray(tokens[:n], dtype=np.intc))
        return int(differ[0]) if differ.size else n

    def adopt(self, other: TokenLoop) -> int:
        """Copy ``other``'s cache into this one (a few ms: a memory copy, no decoding).

        For a new conversation: the shared prompt that the other context already read
        need not be read again. Returns the tokens now cached.
        """
        size = llama_cpp.llama_state_seq_get_size(other._ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        got = llama_cpp.llama_state_seq_get_data(other._ctx, buffer, size, 0)
        llama_cpp.llama_memory_clear(self._memory, True)
        if not got or llama_cpp.llama_state_seq_set_data(self._ctx, buffer, got, 0) != got:
            self.forget()
            return 0
        count = int(other._record.n_tokens)
        self._record.input_ids[:count] = other._record.input_ids[:count]
        self._record.n_tokens = count
        return count

    def close(self) -> None:
        """Free the context if this loop opened it (the ``Llama``'s own is freed with it)."""
        if self._owns_context and self._ctx is not None:
            llama_cpp.llama_free(self._ctx)
            self._ctx = None
            self._owns_context = False

    def tokenize(self, text: str) -> list[int]:
        """The model's tokens for ``text``, with the BOS token as llama.cpp adds it."""
        tokens: list[int] = self._llm.tokenize(text.encode("utf-8"))
        return tokens

    def prefill(self, tokens: Sequence[int]) -> int:
        """Make the KV cache hold ``tokens``, with logits for the last; return tokens reused.

        The cached prefix is found by comparing token arrays; at least the last prompt
        token is decoded again, since its logits are what the first sample reads.
        """
        if not tokens:
            raise ValueError("empty prompt")
        if len(tokens) >= self.n_ctx:
            raise ValueError(f"prompt of {len(tokens)} tokens does not fit n_ctx={self.n_ctx}")
        record = self._record
        prompt = np.asarray(tokens, dtype=np.intc)
        reuse = self.shared_prefix(prompt[:-1])
        if not llama_cpp.llama_memory_seq_rm(self._memory, -1, reuse, -1):
            llama_cpp.llama_memory_clear(self._memory, True)
            reuse = 0
        record.n_tokens = reuse
        for start in range(reuse, len(prompt), self._n_batch):
            chunk = np.ascontiguousarray(prompt[start : start + self._n_batch])
            pointer = chunk.ctypes.data_as(ctypes.POINTER(llama_cpp.llama_token))
            self._decode(llama_cpp.llama_batch_get_one(pointer, len(chunk)))
            record.input_ids[start : start + len(chunk)] = chunk
            record.n_tokens = start + len(chunk)
        return reuse

    def _decode(self, batch: Any) -> None:
        status = llama_cpp.llama_decode(self._ctx, batch)
        if status != 0:
            self._failed(status)

    def _failed(self, status: int) -> None:
        """Raise DecodeError; keep the cache's good prefix when the decode was aborted."""
        if status == _ABORTED:
            # An abort (the runtime's interrupt) leaves every earlier batch in the cache;
            # llama.cpp drops the unfinished one. Keep the shared prefix for the next prompt.
            llama_cpp.llama_memory_seq_rm(self._memory, -1, int(self._record.n_tokens), -1)
            raise DecodeError("llama_decode aborted")
        self.forget()
        raise DecodeError(f"llama_decode returned {status}")

    def forget(self) -> None:
        """Empty the KV cache (after a failure, its contents are unknown)."""
        llama_cpp.llama_memory_clear(self._memory, True)
        self._record.n_tokens = 0

    @contextmanager
    def sampler(
        self,
        *,
        temperature: float,
        top_k: int,
        top_p: float,
        min_p: float,
        repeat_penalty: float,
        seed: int,
    ) -> Iterator[Any]:
        """A sampler chain in the order ``Llama.generate`` builds it, freed on exit.

        Zero temperature is greedy. A typical-p of 1 is left out: it changes nothing.
        """
        chain = llama_cpp.llama_sampler_chain_init(llama_cpp.llama_sampler_chain_default_params())
        add = llama_cpp.llama_sampler_chain_add
        if repeat_penalty != 1.0:
            add(
                chain,
                llama_cpp.llama_sampler_init_penalties(
                    self._n_vocab, PENALTY_LAST_N, repeat_penalty, 0.0, 0.0
                ),
            )
        if temperature == 0.0:
            add(chain, llama_cpp.llama_sampler_init_greedy())
        else:
            if temperature > 0.0:
                add(chain, llama_cpp.llama_sampler_init_top_k(top_k))
                add(chain, llama_cpp.llama_sampler_init_top_p(top_p, 1))
                add(chain, llama_cpp.llama_sampler_init_min_p(min_p, 1))
                add(chain, llama_cpp.llama_sampler_init_temp(temperature))
            add(chain, llama_cpp.llama_sampler_init_dist(seed & 0xFFFFFFFF))
        try:
            yield chain
        finally:
            llama_cpp.llama_sampler_free(chain)

    def tokens(
        self, prompt: Sequence[int], chain: Any, max_tokens: int, should_stop: Callable[[], bool]
    ) -> Generator[int, None, None]:
        """Sample up to ``max_tokens`` after ``prompt``; stop at end of generation.

        ``should_stop`` is read once per token, before the next decode, so a cancel
        takes effect at the next token. Every yielded token but the last ends up in
        the KV cache, ready for the next request's prefix.
        """
        self.prefill(prompt)
        record = self._record
        decode = llama_cpp.llama_decode
        sample = llama_cpp.llama_sampler_sample
        ctx, one, single = self._ctx, self._one, self._single
        pieces = self._pieces
        input_ids = record.input_ids
        position = record.n_tokens
        limit = min(max_tokens, self.n_ctx - position)
        for count in range(1, limit + 1):
            token = sample(chain, ctx, -1)
            piece = pieces.get(token, b"")
            if piece == b"":
                piece = self._piece(token)
            if piece is None:
                return
            yield token
            if count == limit or should_stop():
                return
            one[0] = token
            status = decode(ctx, single)
            if status != 0:
                self._failed(status)
            input_ids[position] = token
            position += 1
            record.n_tokens = position

    def _piece(self, token: int) -> bytes | None:
        if llama_cpp.llama_vocab_is_eog(self._vocab, token):
            self._pieces[token] = None
            return None
        buffer = self._piece_buffer
        size = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, len(buffer), 0, False)
        if size < 0:
            buffer = ctypes.create_string_buffer(-size)
            size = llama_cpp.llama_token_to_piece(self._vocab, token, buffer, -size, 0, False)
        piece = buffer.raw[:size]
        # Empty pieces (control tokens) are not cached, so b"" can mean "not looked up".
        if piece:
            self._pieces[token] = piece
        return piece

    def pieces(
        self,
        prompt: Sequence[int],
        chain: Any,
        max_tokens: int,
        stops: Sequence[str],
        should_stop: Callable[[], bool],
    ) -> Iterator[str]:
        """Text after ``prompt``, piece by piece, ending before the first stop string."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        decode = decoder.decode
        stop_filter = StopFilter(tuple(stops))
        feed = stop_filter.feed
        pieces = self._pieces
        generated = self.tokens(prompt, chain, max_tokens, should_stop)
        try:
            for token in generated:
                text = feed(decode(pieces.get(token) or b""))
                if text:
                    yield text
                if stop_filter.stopped:
                    return
            tail = feed(decode(b"", final=True)) + stop_filter.flush()
            if tail:
                yield tail
        finally:
            generated.close()


class _CacheRecord:
    """What a second context's KV cache holds, kept as the ``Llama`` object keeps its own."""

    def __init__(self, n_ctx: int) -> None:
        self.input_ids = np.zeros(n_ctx, dtype=np.intc)
        self.n_tokens = 0
