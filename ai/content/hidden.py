"""A line's hidden state, read part-way up the model: what layer 2 of the filter judges.

:class:`LlamaHiddenStates` opens a small context of its own on the game's loaded model
(the same weights: no second model, no load time, a few megabytes of cache) and reads
the output of one transformer layer for the tokens of a line, averaged (and, pooled as
``mean+last``, the last token's output beside the mean: under causal attention the last
token has read the whole line). It stops the model there: llama.cpp's scheduler callback
copies that layer's output and tells the graph to stop, so the layers above it and the
262k-word output projection (most of a decode's cost on a small model) never run. The
cost grows with the layer read, about the same for each of Gemma 3 270M's 18 layers, on
top of a fixed part (tokenising, building the graph): layer 0 costs about a quarter of
layer 4 (``bench/content_filter.json``). It also grows with the tokens read, about
0.2 ms each at layer 0, so the reader keeps the last line's tokens in its cache with
their states: a streamed line is read clause by clause, each read the line so far, and
under causal attention the tokens it shares with the read before have the same states.
Only the tokens after the shared ones are decoded.

Like every use of the model it runs on the worker thread only: it shares the model's
weights with the generation contexts, and one thread at a time may use them.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ai.scoring import common_prefix

logger = logging.getLogger(__name__)

_GGML_TYPE_F32 = 0
_MAX_TOKENS = 96
_BATCH = 64


class HiddenStates(Protocol):
    """Pooled hidden state of a line at the layer the classifier was trained on."""

    @property
    def layer(self) -> int:
        """The transformer layer read (0 is the first)."""
        ...

    def pooled(self, text: str) -> np.ndarray[Any, np.dtype[np.float32]] | None:
        """The line's hidden state pooled over its tokens, or None if it has none."""
        ...

    def close(self) -> None:
        """Free what the reader holds."""
        ...


class _Ggml:
    """The three ggml calls the callback needs, from the library llama-cpp-python ships."""

    def __init__(self, llama_cpp: Any) -> None:
        lib = Path(llama_cpp.__file__).resolve().parent / "lib"
        names = ("libggml-base.so", "libggml-base.dylib", "ggml-base.dll")
        path = next((lib / name for name in names if (lib / name).exists()), None)
        if path is None:
            raise RuntimeError(f"no ggml-base library in {lib}")
        dll = ctypes.CDLL(str(path))
        self.get_name = dll.ggml_get_name
        self.get_name.restype = ctypes.c_char_p
        self.get_name.argtypes = [ctypes.c_void_p]
        self.nbytes = dll.ggml_nbytes
        self.nbytes.restype = ctypes.c_size_t
        self.nbytes.argtypes = [ctypes.c_void_p]
        self.tensor_get = dll.ggml_backend_tensor_get
        self.tensor_get.restype = None
        self.tensor_get.argtypes = [
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_size_t,
        ]


FloatRows = np.ndarray[Any, np.dtype[np.float32]]


class LlamaHiddenStates:
    """Reads the output of ``layers`` for a line from a small context on ``llm``'s model.

    ``llm`` is the game's loaded ``llama_cpp.Llama``; the model stops after the deepest
    of ``layers`` (the game reads one; training reads several in one pass). ``pooling``
    is ``mean`` or ``mean+last`` (each row the mean, then the last token's state). Worker
    thread only; :meth:`close` before the model is freed.
    """

    def __init__(
        self,
        llm: Any,
        layers: int | Sequence[int],
        n_threads: int = 1,
        pooling: str = "mean",
    ) -> None:
        import llama_cpp

        if pooling not in ("mean", "mean+last"):
            raise ValueError(f"pooling must be mean or mean+last, got {pooling!r}")
        self._with_last = pooling == "mean+last"

        wanted = (layers,) if isinstance(layers, int) else tuple(sorted(set(layers)))
        if not wanted or wanted[0] < 0:
            raise ValueError(f"layers must be one or more layer numbers >= 0, got {layers}")
        self._llama_cpp = llama_cpp
        self._llm = llm
        self._layers = wanted
        self._n_embd = int(llm.n_embd())
        self._ggml = _Ggml(llama_cpp)
        self._index = {f"l_out-{layer}".encode(): i for i, layer in enumerate(wanted)}
        self._last = f"l_out-{wanted[-1]}".encode()
        # What the decode under way has read: for each layer, its rows of states.
        self._read: list[list[FloatRows]] = [[] for _ in wanted]
        # The tokens of the last line read, in the cache after the first token, and their
        # states, shape (layers, tokens, n_embd).
        self._kept: list[int] = []
        self._kept_states: FloatRows = np.zeros((len(wanted), 0, self._n_embd), np.float32)
        self._seen = False
        # Kept on the instance: llama.cpp holds only a raw pointer to it.
        self._callback = llama_cpp.ggml_backend_sched_eval_callback(self._on_tensor)
        params = llama_cpp.llama_context_default_params()
        params.n_ctx = _MAX_TOKENS + 32
        params.n_batch = _BATCH
        params.n_ubatch = _BATCH
        params.n_seq_max = 1
        params.n_threads = n_threads
        params.n_threads_batch = n_threads
        params.embeddings = False
        params.cb_eval = self._callback
        params.cb_eval_user_data = None
        ctx = llama_cpp.llama_init_from_model(llm.model, params)
        if not ctx:
            raise RuntimeError("llama.cpp could not open a context for the content filter")
        self._ctx = ctx
        self._memory = llama_cpp.llama_get_memory(ctx)
        self._batch = llama_cpp.llama_batch_init(_BATCH, 0, 1)
        self._bos = int(llama_cpp.llama_vocab_bos(llama_cpp.llama_model_get_vocab(llm.model)))
        # The beginning-of-text token stays in the cache; each line follows it.
        try:
            self._decode([self._bos], 0)
        except RuntimeError:
            self.close()
            raise
        if not self._seen:
            self.close()
            raise RuntimeError(f"this model has no layer output named {self._last.decode()}")

    @property
    def layer(self) -> int:
        """The deepest transformer layer read (0 is the first): what :meth:`pooled` gives."""
        return self._layers[-1]

    @property
    def layers(self) -> tuple[int, ...]:
        """Every layer read, shallowest first: the rows of :meth:`pooled_layers`."""
        return self._layers

    def _on_tensor(self, tensor: int, ask: bool, user_data: int) -> bool:
        del user_data
        name = self._ggml.get_name(tensor)
        index = self._index.get(name) if name is not None else None
        if ask:
            return index is not None
        if index is None:
            return True
        if ctypes.c_int.from_address(tensor).value != _GGML_TYPE_F32:
            return False
        size = int(self._ggml.nbytes(tensor))
        rows = size // (4 * self._n_embd)
        if rows:
            buffer = np.empty(rows * self._n_embd, dtype=np.float32)
            self._ggml.tensor_get(tensor, buffer.ctypes.data, 0, rows * self._n_embd * 4)
            self._read[index].append(buffer.reshape(rows, self._n_embd))
        if name != self._last:
            return True
        self._seen = True
        # False stops the graph here: the layers above and the output projection never run.
        return False

    def _decode(self, tokens: list[int], start: int) -> None:
        lc = self._llama_cpp
        batch = self._batch
        for offset in range(0, len(tokens), _BATCH):
            chunk = tokens[offset : offset + _BATCH]
            batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                batch.token[i] = token
                batch.pos[i] = start + offset + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                batch.logits[i] = False
            code = lc.llama_decode(self._ctx, batch)
            if code != 0:
                lc.llama_memory_seq_rm(self._memory, 0, 1, -1)
                raise RuntimeError(f"llama_decode failed ({code}) in the content filter")

    def pooled(self, text: str) -> np.ndarray[Any, np.dtype[np.float32]] | None:
        """Layer :attr:`layer`'s output pooled over the tokens of ``text`` (worker only)."""
        rows = self.pooled_layers(text)
        return None if rows is None else rows[-1]

    def pooled_layers(self, text: str) -> np.ndarray[Any, np.dtype[np.float32]] | None:
        """One row per layer of :attr:`layers`: each one's output pooled over the tokens."""
        tokens = self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        tokens = [int(t) for t in tokens[:_MAX_TOKENS]]
        if not tokens:
            return None
        shared = common_prefix(self._kept, tokens)
        states = self._kept_states[:, :shared]
        # The cache keeps the first token and the shared ones; the rest is read now.
        self._llama_cpp.llama_memory_seq_rm(self._memory, 0, 1 + shared, -1)
        self._kept, self._kept_states = [], self._kept_states[:, :0]
        if shared < len(tokens):
            for parts in self._read:
                parts.clear()
            try:
                self._decode(tokens[shared:], 1 + shared)
            except RuntimeError:
                self._llama_cpp.llama_memory_seq_rm(self._memory, 0, 1, -1)
                raise
            read = [np.concatenate(parts) for parts in self._read if parts]
            if len(read) != len(self._layers) or any(len(r) != len(tokens) - shared for r in read):
                self._llama_cpp.llama_memory_seq_rm(self._memory, 0, 1, -1)
                return None
            states = np.concatenate([states, np.stack(read)], axis=1)
        self._kept, self._kept_states = tokens, states
        mean = states.mean(axis=1, dtype=np.float64).astype(np.float32)
        return np.hstack([mean, states[:, -1]]) if self._with_last else mean

    def close(self) -> None:
        """Free the context (before the model it was opened on)."""
        ctx, self._ctx = getattr(self, "_ctx", None), None
        batch = getattr(self, "_batch", None)
        if batch is not None:
            self._llama_cpp.llama_batch_free(batch)
            self._batch = None
        if ctx is not None:
            self._llama_cpp.llama_free(ctx)
