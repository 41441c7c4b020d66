"""llama.cpp backend through llama-cpp-python, running in this process.

The ``Llama`` object is created in :meth:`LlamaBackend.load` and used in
:meth:`LlamaBackend.generate`; the runtime calls both on its single worker
thread only. Two threads inside one ``Llama`` abort the process from native
code, which no ``try`` can catch.

There is no cancel call in llama.cpp. A ``stopping_criteria`` that reads the
runtime's cancel flag ends generation after the next sampled token; prompt
evaluation itself cannot be interrupted, which is one more reason to keep the
per-request prompt tail short.
"""

from __future__ import annotations

import codecs
import logging
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ai.backend import GenerationParams, ModelLoadError, ProgressCallback, StopCheck
from ai.config import AiConfig
from ai.prompt import build_chat_messages, build_completion_prompt
from ai.requests import PromptSpec
from ai.streaming import StopFilter

logger = logging.getLogger(__name__)

CHAT_TEMPLATE_KEY = "tokenizer.chat_template"


class LlamaBackend:
    """Generates lines with a local GGUF model via llama-cpp-python."""

    def __init__(self, config: AiConfig) -> None:
        self._config = config
        self._llm: Any = None
        self._vocab: Any = None
        self._use_chat = False
        self._model_path: Path | None = None
        # llama-cpp-python reuses one sampler seed per instance unless told
        # otherwise, so draw a fresh one per call (reproducible if seeded).
        seed = config.generation.seed
        self._rng = random.Random(None if seed < 0 else seed)

    @property
    def model_path(self) -> Path | None:
        """The GGUF file in use, once loaded."""
        return self._model_path

    def load(self, progress: ProgressCallback) -> None:
        """Resolve, verify and load the model; raise ModelLoadError on failure."""
        # Imported here so ``python -m ai.model`` does not find the module
        # half-imported through the package.
        from ai.model import resolve_model_path

        model_cfg = self._config.model
        progress(0.0, "locating model")
        path = resolve_model_path(model_cfg, lambda f, stage: progress(0.8 * f, stage))
        progress(0.8, "loading model")
        try:
            import llama_cpp
            from llama_cpp import Llama
        except ImportError as exc:
            raise ModelLoadError(f"llama-cpp-python is not installed: {exc}") from exc
        try:
            llm = Llama(
                model_path=str(path),
                n_ctx=model_cfg.n_ctx,
                n_batch=model_cfg.n_batch,
                n_threads=model_cfg.n_threads,
                n_threads_batch=model_cfg.n_threads_batch,
                n_gpu_layers=0,
                swa_full=model_cfg.swa_full,
                verbose=False,
            )
        except Exception as exc:
            raise ModelLoadError(f"llama.cpp could not load {path}: {exc}") from exc
        self._llm = llm
        self._vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self._model_path = path
        self._use_chat = self._choose_chat(llm)
        logger.info(
            "model loaded: %s (prompt format: %s, threads %d/%d)",
            path.name,
            "chat" if self._use_chat else "completion",
            model_cfg.n_threads,
            model_cfg.n_threads_batch,
        )
        progress(1.0, "ready")

    def _choose_chat(self, llm: Any) -> bool:
        prompt_format = self._config.model.prompt_format
        if prompt_format == "auto":
            metadata = getattr(llm, "metadata", None) or {}
            return bool(metadata.get(CHAT_TEMPLATE_KEY))
        return prompt_format == "chat"

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        """Stream text pieces for ``prompt``; stops after the next token once asked."""
        if self._llm is None:
            raise RuntimeError("generate() called before load()")
        player_text = prompt.player_text
        if self._use_chat:
            yield from self._generate_chat(prompt, player_text, params, should_stop)
        else:
            yield from self._generate_completion(prompt, player_text, params, should_stop)

    def _sampling(self, params: GenerationParams) -> dict[str, Any]:
        seed = params.seed if params.seed is not None else self._rng.randrange(2**31)
        return {
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "top_k": params.top_k,
            "min_p": params.min_p,
            "repeat_penalty": params.repeat_penalty,
            "seed": seed,
        }

    def _generate_completion(
        self, prompt: PromptSpec, player_text: str, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        # Llama.generate() plus our own incremental detokenising and stop
        # handling does a fraction of the per-token Python work of
        # create_completion(), which re-detokenises the whole completion on
        # every token. Less Python per token means fewer GIL hand-offs that
        # the game's main thread has to wait for.
        import llama_cpp

        llm = self._llm
        tokens = llm.tokenize(build_completion_prompt(prompt, player_text).encode("utf-8"))
        room = llm.n_ctx() - len(tokens)
        if room <= 0:
            raise ValueError(f"prompt of {len(tokens)} tokens does not fit n_ctx={llm.n_ctx()}")
        max_tokens = min(params.max_tokens, room)
        sampling = self._sampling(params)
        llm.set_seed(sampling["seed"])

        def stop_criterion(input_ids: Any, logits: Any) -> bool:
            del input_ids, logits
            return should_stop()

        vocab = self._vocab
        is_eog = llama_cpp.llama_vocab_is_eog
        detokenize = llm.detokenize
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        stops = StopFilter(params.stop)
        generator = llm.generate(
            tokens,
            top_k=sampling["top_k"],
            top_p=sampling["top_p"],
            min_p=sampling["min_p"],
            temp=sampling["temperature"],
            repeat_penalty=sampling["repeat_penalty"],
            stopping_criteria=llama_cpp.StoppingCriteriaList([stop_criterion]),
        )
        try:
            for count, token in enumerate(generator, start=1):
                if is_eog(vocab, token):
                    break
                text = stops.feed(decoder.decode(detokenize([token])))
                if text:
                    yield text
                if stops.stopped or count >= max_tokens:
                    break
            tail = stops.feed(decoder.decode(b"", final=True)) + stops.flush()
            if tail:
                yield tail
        finally:
            generator.close()

    def _generate_chat(
        self, prompt: PromptSpec, player_text: str, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        # create_chat_completion takes no stopping_criteria; closing the
        # stream between chunks stops the underlying generator instead.
        stream = self._llm.create_chat_completion(
            build_chat_messages(prompt, player_text),
            stream=True,
            stop=list(params.chat_stop),
            **self._sampling(params),
        )
        try:
            for chunk in stream:
                if should_stop():
                    break
                piece = chunk["choices"][0]["delta"].get("content") or ""
                if piece:
                    yield piece
        finally:
            _close_stream(stream)

    def close(self) -> None:
        """Free the native model and context."""
        llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()


def _close_stream(stream: Any) -> None:
    # Closing the generator runs llama-cpp-python's own cleanup right away
    # instead of whenever the garbage collector gets to it.
    close = getattr(stream, "close", None)
    if close is not None:
        close()
