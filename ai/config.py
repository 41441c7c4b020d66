"""Settings for the AI layer, loaded from ``config/ai.toml``.

Every field is a plain scalar, a string tuple or a string ``Literal`` so a generic
TOML-to-dataclass loader can fill it. Section names in the TOML file match the
nested field names of :class:`AiConfig`. Values are validated once, at
construction, so the rest of the package can trust them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Literal

from ai.requests import Priority

logger = logging.getLogger(__name__)

BackendName = Literal["llama", "scripted"]
PromptFormat = Literal["auto", "completion", "chat"]
ModelVerify = Literal["stamp", "always"]


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Which backend to run and how to load the model."""

    backend: BackendName = "llama"
    model_path: str = ""
    model_dir: str = ""
    verify: ModelVerify = "always"
    n_threads: int = 1
    n_threads_batch: int = 1
    n_ctx: int = 2048
    n_batch: int = 256
    swa_full: bool = True
    prompt_format: PromptFormat = "auto"

    def __post_init__(self) -> None:
        _require(self.backend in ("llama", "scripted"), f"model.backend: unknown {self.backend!r}")
        _require(self.verify in ("stamp", "always"), f"model.verify: unknown {self.verify!r}")
        _require(
            self.prompt_format in ("auto", "completion", "chat"),
            f"model.prompt_format: unknown {self.prompt_format!r}",
        )
        _require(1 <= self.n_threads <= 64, "model.n_threads must be in 1..64")
        _require(1 <= self.n_threads_batch <= 64, "model.n_threads_batch must be in 1..64")
        _require(256 <= self.n_ctx <= 131072, "model.n_ctx must be in 256..131072")
        _require(1 <= self.n_batch <= self.n_ctx, "model.n_batch must be in 1..n_ctx")


@dataclass(frozen=True, slots=True)
class GenerationConfig:
    """Sampling parameters shared by every request."""

    max_tokens: int = 40
    temperature: float = 0.8
    top_p: float = 0.95
    top_k: int = 40
    min_p: float = 0.05
    repeat_penalty: float = 1.1
    seed: int = -1
    stop: tuple[str, ...] = ('"', "\n")
    chat_stop: tuple[str, ...] = ("\n",)

    def __post_init__(self) -> None:
        _require(1 <= self.max_tokens <= 4096, "generation.max_tokens must be in 1..4096")
        _require(0.0 <= self.temperature <= 5.0, "generation.temperature must be in 0..5")
        _require(0.0 < self.top_p <= 1.0, "generation.top_p must be in (0, 1]")
        _require(0 <= self.top_k <= 100_000, "generation.top_k must be >= 0")
        _require(0.0 <= self.min_p <= 1.0, "generation.min_p must be in 0..1")
        _require(0.5 <= self.repeat_penalty <= 3.0, "generation.repeat_penalty must be in 0.5..3")
        _require(self.seed >= -1, "generation.seed must be -1 (random) or >= 0")
        _require(all(self.stop), "generation.stop must not contain empty strings")
        _require(all(self.chat_stop), "generation.chat_stop must not contain empty strings")


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """Queue size, rate limits and default time budgets per priority.

    ``deadline_*`` is how long a request may wait in the queue before it must
    start; ``timeout_*`` is its whole wall budget from submit.
    """

    queue_capacity: int = 32
    rate_limit_s: float = 1.5
    deadline_player_chat_s: float = 2.0
    timeout_player_chat_s: float = 8.0
    deadline_reactive_s: float = 1.0
    timeout_reactive_s: float = 3.0
    deadline_predictive_s: float = 4.0
    timeout_predictive_s: float = 8.0
    deadline_ambient_s: float = 6.0
    timeout_ambient_s: float = 10.0

    def __post_init__(self) -> None:
        _require(1 <= self.queue_capacity <= 10_000, "scheduler.queue_capacity must be 1..10000")
        _require(0.0 <= self.rate_limit_s <= 3600.0, "scheduler.rate_limit_s must be 0..3600")
        for priority in Priority:
            deadline, timeout = self.budget(priority)
            name = priority.name.lower()
            _require(deadline > 0.0, f"scheduler.deadline_{name}_s must be > 0")
            _require(timeout > 0.0, f"scheduler.timeout_{name}_s must be > 0")
            _require(
                timeout >= deadline,
                f"scheduler.timeout_{name}_s must be >= scheduler.deadline_{name}_s",
            )

    def budget(self, priority: Priority) -> tuple[float, float]:
        """Return the default ``(deadline_s, timeout_s)`` for a priority."""
        if priority is Priority.PLAYER_CHAT:
            return self.deadline_player_chat_s, self.timeout_player_chat_s
        if priority is Priority.REACTIVE:
            return self.deadline_reactive_s, self.timeout_reactive_s
        if priority is Priority.PREDICTIVE:
            return self.deadline_predictive_s, self.timeout_predictive_s
        return self.deadline_ambient_s, self.timeout_ambient_s


@dataclass(frozen=True, slots=True)
class HygieneConfig:
    """Limits applied to model output and to text typed by the player."""

    max_chars: int = 120
    max_sentences: int = 2
    min_letters: int = 2
    blocklist: tuple[str, ...] = ()
    player_text_max_chars: int = 200

    def __post_init__(self) -> None:
        _require(8 <= self.max_chars <= 2000, "hygiene.max_chars must be in 8..2000")
        _require(1 <= self.max_sentences <= 20, "hygiene.max_sentences must be in 1..20")
        _require(0 <= self.min_letters <= 100, "hygiene.min_letters must be in 0..100")
        _require(
            all(word.strip() for word in self.blocklist), "hygiene.blocklist has an empty entry"
        )
        _require(
            1 <= self.player_text_max_chars <= 4000,
            "hygiene.player_text_max_chars must be in 1..4000",
        )


@dataclass(frozen=True, slots=True)
class ScriptedConfig:
    """Timings of the deterministic fake backend, in seconds."""

    load_s: float = 0.2
    ttft_s: float = 0.05
    token_s: float = 0.02

    def __post_init__(self) -> None:
        for name in ("load_s", "ttft_s", "token_s"):
            value = getattr(self, name)
            _require(0.0 <= value <= 60.0, f"scripted.{name} must be in 0..60")


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """Process-level knobs the runtime applies while it runs.

    ``switch_interval_s`` is passed to ``sys.setswitchinterval`` by
    ``AiRuntime.start`` and restored by ``shutdown``; 0 leaves it alone.
    Measured on 2 cores: at Python's default 5 ms, the main thread woke up
    to ~3.6 ms late (p99) while the worker generated; at 1 ms, ~0.4 ms.
    """

    switch_interval_s: float = 0.001

    def __post_init__(self) -> None:
        _require(
            self.switch_interval_s == 0.0 or 1e-5 <= self.switch_interval_s <= 0.1,
            "runtime.switch_interval_s must be 0 (leave alone) or in 1e-5..0.1",
        )


@dataclass(frozen=True, slots=True)
class AiConfig:
    """All AI settings; one instance is built at start and passed explicitly."""

    model: ModelConfig = field(default_factory=ModelConfig)
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    hygiene: HygieneConfig = field(default_factory=HygieneConfig)
    scripted: ScriptedConfig = field(default_factory=ScriptedConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
