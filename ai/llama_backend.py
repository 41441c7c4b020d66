"""llama.cpp backend through llama-cpp-python, running in this process.

The ``Llama`` object is created in :meth:`LlamaBackend.load` and used in
:meth:`LlamaBackend.generate`; the runtime calls both on its single worker
thread only. Two threads inside one ``Llama`` abort the process from native
code, which no ``try`` can catch.

Completion prompts run through :class:`ai.token_loop.TokenLoop`, which keeps the
worker's Python work per token (and so its GIL hand-offs) small. There is no cancel
call in llama.cpp: the loop reads the runtime's cancel flag once per token, so
generation ends at the next token, and an :class:`~ai.abort.AbortSwitch` on the
context stops a prompt evaluation or a decode in the middle when the runtime shuts
down or a request is cancelled.

Player conversations get a second context on the same weights (``conversation`` in the
prompt): its cache keeps the conversation's prompt while other villagers' lines are
generated in between, so a prompt read ahead while the player types (a prefill) is
still there when they press Enter. A new conversation starts from a copy of the main
cache, which already holds the shared prompt.
"""

from __future__ import annotations

import ctypes
import logging
import random
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ai.abort import AbortSwitch
from ai.adapter import AdapterRefusedError, check_adapter
from ai.backend import GenerationParams, ModelLoadError, ProgressCallback, StopCheck
from ai.config import AiConfig
from ai.llama_log import open_llama, route_llama_logs
from ai.load_checks import self_test
from ai.prompt import build_chat_messages, build_completion_prompt
from ai.requests import PromptSpec
from ai.scoring import TokenScorer
from ai.streaming import with_opener

if TYPE_CHECKING:
    from ai.content.filter import ContentFilter
    from ai.content.hidden import HiddenStates
    from ai.token_loop import TokenLoop

logger = logging.getLogger(__name__)

CHAT_TEMPLATE_KEY = "tokenizer.chat_template"
# Copy the main cache into the conversation's when it holds this many more prompt tokens.
_ADOPT_MARGIN = 32


class LlamaBackend:
    """Generates lines with a local GGUF model via llama-cpp-python."""

    def __init__(self, config: AiConfig) -> None:
        self._config = config
        self._llm: Any = None
        self._loop: TokenLoop | None = None
        self._talk: TokenLoop | None = None
        self._use_chat = False
        self._model_path: Path | None = None
        self._token_scorer: TokenScorer | None = None
        self._abort = AbortSwitch()
        self._adapter: Any = None
        self._prompt_style = ""
        # llama-cpp-python reuses one sampler seed per instance unless told
        # otherwise, so draw a fresh one per call (reproducible if seeded).
        seed = config.generation.seed
        self._rng = random.Random(None if seed < 0 else seed)

    @property
    def model_path(self) -> Path | None:
        """The GGUF file in use, once loaded."""
        return self._model_path

    @property
    def prompt_style(self) -> str:
        """The adapter's prompt style once it is loaded ("" without one)."""
        return self._prompt_style

    def load(self, progress: ProgressCallback) -> None:
        """Resolve, verify and load the model; raise ModelLoadError on failure.

        A configured adapter that cannot be used costs one warning, never the model.
        """
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

            from ai.token_loop import TokenLoop

            route_llama_logs(llama_cpp)
        except ImportError as exc:
            raise ModelLoadError(f"llama-cpp-python is not installed: {exc}") from exc
        try:
            llm = open_llama(
                Llama,
                model_path=str(path),
                n_ctx=model_cfg.n_ctx,
                n_batch=model_cfg.n_batch,
                n_threads=model_cfg.n_threads,
                n_threads_batch=model_cfg.n_threads_batch,
                n_gpu_layers=0,
                swa_full=model_cfg.swa_full,
            )
        except Exception as exc:
            raise ModelLoadError(f"llama.cpp could not load {path}: {exc}") from exc
        self._llm = llm
        self._loop = TokenLoop(llm)
        self._abort.install(llama_cpp, llm.ctx)
        self._model_path = path
        self._use_chat = self._choose_chat(llm)
        if model_cfg.adapter:
            progress(0.9, "loading adapter")
            self._load_adapter(llm, llama_cpp, path)
        if not self._use_chat and model_cfg.conversation_cache:
            self._talk = self._open_conversation_lane(llm, llama_cpp)
            if self._talk is not None and self._adapter is not None:
                try:
                    self._apply_adapter(llama_cpp, self._talk.context)
                except AdapterRefusedError as exc:
                    logger.warning("conversations share the main cache: %s", exc)
                    self._talk.close()
                    self._talk = None
        progress(0.95, "testing model")
        problem = self_test(self, self._config)
        if problem is not None:
            self.close()
            raise ModelLoadError(problem)
        logger.info(
            "model loaded: %s (prompt format: %s, adapter: %s, threads %d/%d)",
            path.name,
            "chat" if self._use_chat else "completion",
            Path(model_cfg.adapter).name if self._adapter is not None else "none",
            model_cfg.n_threads,
            model_cfg.n_threads_batch,
        )
        progress(1.0, "ready")

    def _load_adapter(self, llm: Any, llama_cpp: Any, model_path: Path) -> None:
        """Apply the configured LoRA adapter if it fits this model; warn once if not."""
        from ai.model import verified_sha256

        adapter = Path(self._config.model.adapter).expanduser()
        try:
            manifest = check_adapter(adapter, verified_sha256(self._config.model, model_path))
            handle = llama_cpp.llama_adapter_lora_init(llm.model, str(adapter).encode("utf-8"))
            if not handle:
                raise AdapterRefusedError(f"llama.cpp could not load {adapter.name}")
            self._adapter = handle
            self._apply_adapter(llama_cpp, llm.ctx)
        except (AdapterRefusedError, OSError) as exc:
            self._adapter = None
            logger.warning("adapter not loaded, base prompts instead: %s", exc)
            return
        self._prompt_style = manifest.prompt_style

    def _apply_adapter(self, llama_cpp: Any, context: Any) -> None:
        adapters = (llama_cpp.llama_adapter_lora_p_ctypes * 1)(self._adapter)
        scales = (ctypes.c_float * 1)(self._config.model.adapter_scale)
        if llama_cpp.llama_set_adapters_lora(context, adapters, 1, scales):
            raise AdapterRefusedError("llama.cpp could not apply the adapter to a context")

    def _open_conversation_lane(self, llm: Any, llama_cpp: Any) -> TokenLoop | None:
        from ai.token_loop import TokenLoop

        try:
            talk = TokenLoop.second_context(llm)
        except RuntimeError as exc:
            logger.warning("no separate cache for conversations: %s", exc)
            return None
        self._abort.install(llama_cpp, talk.context)
        return talk

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
            pieces = self._generate_completion(prompt, player_text, params, should_stop)
            yield from with_opener(prompt.opener, pieces)

    def contrast(self, prompt: PromptSpec, neutral: PromptSpec, continuation: str) -> float | None:
        """Mean log-likelihood lift per token of ``continuation`` under ``prompt`` over ``neutral``.

        Positive when the situation in ``prompt`` makes the line more likely than the
        neutral prompt does. None for chat-format models, or if it cannot be measured.
        """
        if self._llm is None:
            raise RuntimeError("contrast() called before load()")
        if self._use_chat or not continuation.strip():
            return None
        try:
            situated = self._scorer().mean_logprob(
                build_completion_prompt(prompt, prompt.player_text), continuation
            )
            plain = self._scorer().mean_logprob(
                build_completion_prompt(neutral, neutral.player_text), continuation
            )
        except (RuntimeError, ValueError) as exc:
            if self._abort.is_set:
                return None  # stopped on purpose: other work preempted the scoring
            logger.warning("contrastive score failed: %r", exc)
            return None
        if situated is None or plain is None:
            return None
        return situated - plain

    def choose(self, prompt: PromptSpec, options: Sequence[str]) -> tuple[int, float] | None:
        """The likeliest of ``options`` after ``prompt``, read from the model's own logits.

        A greedy search over the options' shared tokens (:meth:`TokenScorer.choose`): a
        few rows of logits, not a sampled reply. None for chat-format models, or when
        stopped.
        """
        if self._llm is None:
            raise RuntimeError("choose() called before load()")
        if self._use_chat:
            return None
        # The opener is the start of the answer already chosen (the action, before its
        # mood): it is tokenized with each option, as the model was trained to write it.
        text = build_completion_prompt(replace(prompt, opener=""), prompt.player_text)
        try:
            return self._scorer().choose(text, options, prefix=prompt.opener)
        except (RuntimeError, ValueError) as exc:
            if self._abort.is_set:
                return None
            logger.warning("choice failed: %r", exc)
            return None

    def _scorer(self) -> TokenScorer:
        if self._token_scorer is None:
            self._token_scorer = TokenScorer(self._llm)
        return self._token_scorer

    def _seed(self, params: GenerationParams) -> int:
        return params.seed if params.seed is not None else self._rng.randrange(2**31)

    def _sampling(self, params: GenerationParams) -> dict[str, Any]:
        return {
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "top_k": params.top_k,
            "min_p": params.min_p,
            "repeat_penalty": params.repeat_penalty,
            "seed": self._seed(params),
        }

    def _generate_completion(
        self, prompt: PromptSpec, player_text: str, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        loop = self._lane(prompt)
        tokens = loop.tokenize(build_completion_prompt(prompt, player_text))
        main = self._loop
        # A conversation's cache may lag the main one (a new chat, or barks read a newer
        # shared prompt): copying the main cache beats reading the prefix again.
        if (
            loop is not main
            and main is not None
            and main.shared_prefix(tokens) > loop.shared_prefix(tokens) + _ADOPT_MARGIN
        ):
            loop.adopt(main)
        room = loop.n_ctx - len(tokens)
        if room <= 0:
            raise ValueError(f"prompt of {len(tokens)} tokens does not fit n_ctx={loop.n_ctx}")
        with loop.sampler(
            temperature=params.temperature,
            top_k=params.top_k,
            top_p=params.top_p,
            min_p=params.min_p,
            repeat_penalty=params.repeat_penalty,
            seed=self._seed(params),
        ) as chain:
            yield from loop.pieces(
                tokens, chain, min(params.max_tokens, room), params.stop, should_stop
            )

    def _lane(self, prompt: PromptSpec) -> TokenLoop:
        loop = self._talk if prompt.conversation and self._talk is not None else self._loop
        assert loop is not None
        return loop

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

    def prompt_room(self, prompt: PromptSpec) -> int:
        """Context tokens left after ``prompt`` (measured on its completion form)."""
        if self._llm is None:
            raise RuntimeError("prompt_room() called before load()")
        text = build_completion_prompt(prompt, prompt.player_text)
        return int(self._llm.n_ctx()) - len(self._llm.tokenize(text.encode("utf-8")))

    def meaning_reader(self, content: ContentFilter) -> HiddenStates | None:
        """The content filter's semantic reader on the loaded model (worker thread).

        A small context of its own on the same weights, without the adapter: the
        classifier was trained on the base model's hidden states.
        """
        if self._llm is None or self._model_path is None:
            return None
        from ai.model import verified_sha256

        return content.meaning_reader(
            self._llm, verified_sha256(self._config.model, self._model_path)
        )

    def interrupt(self) -> None:
        """Abort the prompt evaluation or decode in progress (any thread)."""
        self._abort.set()

    def resume(self) -> None:
        """Let decodes run again (worker thread, before a new request)."""
        self._abort.clear()

    def close(self) -> None:
        """Free the native model and context."""
        llm, self._llm = self._llm, None
        self._loop = None
        talk, self._talk = self._talk, None
        if talk is not None:
            talk.close()
        self._token_scorer = None
        self._adapter = None  # llama.cpp frees it with the model
        self._prompt_style = ""
        if llm is not None:
            llm.close()
            _return_freed_memory()


def _return_freed_memory() -> None:
    """Give the memory a closed model leaves in the C allocator back to the system.

    glibc keeps what each thread freed in that thread's arena, for reuse: a model swap
    that freed one model for another left about 70 MB behind (measured), and
    ``malloc_trim`` returned it in about 11 ms, on the worker. Elsewhere it does nothing.
    """
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def _close_stream(stream: Any) -> None:
    # Closing the generator runs llama-cpp-python's own cleanup right away
    # instead of whenever the garbage collector gets to it.
    close = getattr(stream, "close", None)
    if close is not None:
        close()
