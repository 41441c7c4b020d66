"""The boundary between the runtime and whatever produces text.

A backend is owned by exactly one thread, the runtime's worker: ``load`` and
``generate`` are only ever called there (``interrupt`` alone may come from any
thread). That rule is what keeps llama.cpp safe, since two threads inside one
model abort the whole process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ai.config import GenerationConfig, RemoteConfig
from ai.requests import PromptSpec

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[float, str], None]
StopCheck = Callable[[], bool]


class ModelLoadError(RuntimeError):
    """The model could not be loaded; the message is meant for a human."""


class GenerationError(RuntimeError):
    """One generation failed for a known reason; ``reason`` is short, for counters and logs."""

    def __init__(self, reason: str, detail: str = "", retry_after_s: float = 0.0) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.retry_after_s = retry_after_s
        """How long the server asked to be left alone (HTTP ``Retry-After``), or 0."""


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """Sampling parameters for one generation; ``seed`` None means random."""

    max_tokens: int
    temperature: float
    top_p: float
    top_k: int
    min_p: float
    repeat_penalty: float
    seed: int | None
    stop: tuple[str, ...]
    chat_stop: tuple[str, ...]

    @classmethod
    def from_config(
        cls, config: GenerationConfig, max_tokens: int | None = None
    ) -> GenerationParams:
        """Build params from config, with an optional per-request token cap."""
        return cls(
            max_tokens=config.max_tokens if max_tokens is None else max(1, max_tokens),
            temperature=config.temperature,
            top_p=config.top_p,
            top_k=config.top_k,
            min_p=config.min_p,
            repeat_penalty=config.repeat_penalty,
            seed=None if config.seed < 0 else config.seed,
            stop=config.stop,
            chat_stop=config.chat_stop,
        )


@runtime_checkable
class ServerBackend(Protocol):
    """A backend that talks to a server, and can be pointed at another one live."""

    def use_server(self, config: RemoteConfig) -> None:
        """From the next request on, talk to the server ``config`` names, as it says.

        Called on the lane's worker thread, between requests, like :meth:`generate`.
        """
        ...


class Backend(Protocol):
    """Produces text for prompts. Every method runs on the worker thread only."""

    def load(self, progress: ProgressCallback) -> None:
        """Load the model, reporting ``progress(fraction, stage)``.

        Raises :class:`ModelLoadError` with a clear message on failure.
        """
        ...

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        """Yield text pieces; stop soon after ``should_stop()`` turns true.

        A completion-format backend starts the first piece with ``prompt.opener``.
        """
        ...

    def contrast(self, prompt: PromptSpec, neutral: PromptSpec, continuation: str) -> float | None:
        """How much likelier ``continuation`` is after ``prompt`` than after ``neutral``.

        Mean log-likelihood lift per token; None where the backend cannot tell.
        """
        ...

    def choose(self, prompt: PromptSpec, options: Sequence[str]) -> tuple[int, float] | None:
        """Which of ``options`` the model finds likeliest to follow ``prompt``.

        Returns its index and a log-probability for it; None where the backend cannot
        tell (a chat-format or remote model), or when stopped.
        """
        ...

    def close(self) -> None:
        """Release native resources; called once when the worker exits."""
        ...

    def prompt_room(self, prompt: PromptSpec) -> int:
        """Tokens of context left for the reply after ``prompt`` (negative: it overflows)."""
        ...

    @property
    def prompt_style(self) -> str:
        """The prompt style the loaded model was tuned for ("" for any base model).

        Set by an adapter's manifest ("village"); the game builds its prompts to match.
        """
        ...

    def interrupt(self) -> None:
        """Abort the native call in progress (prompt evaluation or decode) soon.

        The one method any thread may call: it only raises a flag. ``generate`` then
        ends, possibly with an exception, and the worker reports the request as stopped.
        """
        ...

    def resume(self) -> None:
        """Lower the interrupt flag; the worker calls it before each new request."""
        ...
