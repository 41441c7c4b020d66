"""Settings for the AI layer, loaded from ``config/ai.toml``.

Every field is a plain scalar, a string tuple or a string ``Literal`` so a generic
TOML-to-dataclass loader can fill it. Section names in the TOML file match the
nested field names of :class:`AiConfig`. Values are validated once, at
construction, so the rest of the package can trust them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Literal
from urllib.parse import urlsplit

from ai.requests import Priority

logger = logging.getLogger(__name__)

BackendName = Literal["llama", "scripted"]
PromptFormat = Literal["auto", "completion", "chat"]
ModelVerify = Literal["stamp", "always"]
RemoteApi = Literal["completion", "chat"]
TIER_NAMES = ("local", "remote")
#: Lines of the village corpus a bark's prompt shows with the village adapter: none, as
#: measured (docs/dialogue.md, "Corpus lines in the prompt").
EXAMPLES_PER_BARK = 0
#: The bark triggers whose village-model lines may be required to name their moment.
ON_TOPIC_TRIGGERS = frozenset(
    {"greet", "farewell", "hit", "near_miss", "bumped", "toppled", "ambient", "errand_offer"}
)
_HEX = frozenset("0123456789abcdef")


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


_PATH_MAX = 4096
"""The longest path the system takes (Linux's PATH_MAX)."""


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Which backend to run and how to load the model."""

    backend: BackendName = "llama"
    model_path: str = ""
    model_dir: str = ""
    model_sha256: str = ""
    verify: ModelVerify = "stamp"
    n_threads: int = 1
    n_threads_batch: int = 1
    n_ctx: int = 2048
    n_batch: int = 256
    swa_full: bool = True
    prompt_format: PromptFormat = "auto"
    conversation_cache: bool = True
    # A GGUF LoRA path, "" for none; "village" names the game's own, which the game
    # turns into its path before the backend sees it.
    adapter: str = "village"
    adapter_scale: float = 1.0

    def __post_init__(self) -> None:
        _require(self.backend in ("llama", "scripted"), f"model.backend: unknown {self.backend!r}")
        _require(self.verify in ("stamp", "always"), f"model.verify: unknown {self.verify!r}")
        _require(
            self.model_sha256 == ""
            or (len(self.model_sha256) == 64 and all(c in _HEX for c in self.model_sha256.lower())),
            "model.model_sha256 must be empty or 64 hex digits",
        )
        _require(
            self.prompt_format in ("auto", "completion", "chat"),
            f"model.prompt_format: unknown {self.prompt_format!r}",
        )
        _require(1 <= self.n_threads <= 64, "model.n_threads must be in 1..64")
        _require(1 <= self.n_threads_batch <= 64, "model.n_threads_batch must be in 1..64")
        _require(256 <= self.n_ctx <= 131072, "model.n_ctx must be in 256..131072")
        _require(1 <= self.n_batch <= self.n_ctx, "model.n_batch must be in 1..n_ctx")
        _require(0.0 < self.adapter_scale <= 4.0, "model.adapter_scale must be in (0, 4]")
        for name in ("model_path", "model_dir", "adapter"):
            value = getattr(self, name)
            _require(
                len(value.encode("utf-8", "surrogateescape")) <= _PATH_MAX,
                f"model.{name} is {len(value)} characters long; a path is at most {_PATH_MAX}",
            )
            _require("\0" not in value, f"model.{name} must not contain a NUL character")


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
    candidates: int = 3
    contrast: bool = True
    examples: int = EXAMPLES_PER_BARK
    on_topic: tuple[str, ...] = ("greet", "bumped", "hit", "errand_offer")

    def __post_init__(self) -> None:
        _require(1 <= self.candidates <= 8, "generation.candidates must be in 1..8")
        _require(0 <= self.examples <= 4, "generation.examples must be in 0..4")
        _require(
            set(self.on_topic) <= ON_TOPIC_TRIGGERS,
            f"generation.on_topic names triggers among {', '.join(sorted(ON_TOPIC_TRIGGERS))}",
        )
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
class FilterConfig:
    """The content filter on model lines and player text (``ai.content``).

    ``enabled`` switches both layers; ``meaning`` the semantic one alone (the word list
    then still applies). A line whose semantic score (the classifier's probability that
    it is unfit) is at least ``threshold`` is kept off screen.
    """

    enabled: bool = True
    meaning: bool = True
    threshold: float = 0.7865

    def __post_init__(self) -> None:
        _require(0.0 < self.threshold < 1.0, "filter.threshold must be in (0, 1)")


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
class RemoteConfig:
    """An OpenAI-compatible server as a second tier (llama.cpp's server, vLLM, Ollama).

    ``base_url`` ends in ``/v1``, as OpenAI clients expect; ``api`` picks
    ``/completions`` (few-shot prompts for base models) or ``/chat/completions``
    (instruct models). ``api_key_env`` names the environment variable that holds
    the key ("" sends none): the key itself never appears in a file or a log.
    ``lanes`` is how many requests may stream from the server at once. A line of the
    event stream longer than ``max_line_bytes``, or a reply longer than
    ``max_reply_bytes``, fails the request (and counts against the tier).
    """

    enabled: bool = False
    base_url: str = "http://127.0.0.1:8080/v1"
    model: str = "gemma-3-270m"
    api: RemoteApi = "completion"
    api_key_env: str = ""
    connect_timeout_s: float = 1.0
    read_timeout_s: float = 5.0
    request_timeout_s: float = 10.0
    lanes: int = 1
    max_line_bytes: int = 65536
    max_reply_bytes: int = 1048576

    def __post_init__(self) -> None:
        parts = urlsplit(self.base_url)
        _require(
            parts.scheme in ("http", "https") and bool(parts.netloc),
            f"remote.base_url must be an http:// or https:// URL, got {self.base_url!r}",
        )
        _require(self.api in ("completion", "chat"), f"remote.api: unknown {self.api!r}")
        _require(
            self.api_key_env == "" or self.api_key_env.replace("_", "").isalnum(),
            "remote.api_key_env must name an environment variable (letters, digits, _)",
        )
        for name in ("connect_timeout_s", "read_timeout_s", "request_timeout_s"):
            value = getattr(self, name)
            _require(0.0 < value <= 600.0, f"remote.{name} must be in (0, 600]")
        _require(1 <= self.lanes <= 16, "remote.lanes must be in 1..16")
        _require(
            1024 <= self.max_line_bytes <= 16 * 1048576,
            "remote.max_line_bytes must be in 1024..16777216",
        )
        _require(
            self.max_line_bytes <= self.max_reply_bytes <= 64 * 1048576,
            "remote.max_reply_bytes must be in max_line_bytes..67108864",
        )


@dataclass(frozen=True, slots=True)
class RoutingConfig:
    """Which tiers serve each priority class, in order of preference.

    A tier is used only while its breaker is closed and its recent p95 time to
    first token (from submit) fits the request's deadline; ``local`` answers
    when no listed tier can. Player chat is hedged: if its tier has produced no
    token after ``hedge_delay_s``, the next tier starts too and the first to
    produce a token wins. Latency samples older than ``latency_window_s`` are
    forgotten, so a tier that was slow gets tried again later; with fewer than
    ``min_samples`` recent samples a tier is assumed to fit.
    """

    player_chat: tuple[str, ...] = ("remote", "local")
    reactive: tuple[str, ...] = ("local",)
    predictive: tuple[str, ...] = ("remote", "local")
    ambient: tuple[str, ...] = ("remote", "local")
    hedge_delay_s: float = 0.6
    latency_window_s: float = 30.0
    min_samples: int = 3

    def __post_init__(self) -> None:
        for priority in Priority:
            name = priority.name.lower()
            tiers = self.tiers_for(priority)
            _require(bool(tiers), f"routing.{name} must name at least one tier")
            for tier in tiers:
                _require(tier in TIER_NAMES, f"routing.{name}: unknown tier {tier!r}")
        _require(0.0 <= self.hedge_delay_s <= 30.0, "routing.hedge_delay_s must be in 0..30")
        _require(1.0 <= self.latency_window_s <= 3600.0, "routing.latency_window_s: 1..3600")
        _require(1 <= self.min_samples <= 1000, "routing.min_samples must be in 1..1000")

    def tiers_for(self, priority: Priority) -> tuple[str, ...]:
        """The tiers a priority class prefers, best first."""
        if priority is Priority.PLAYER_CHAT:
            return self.player_chat
        if priority is Priority.REACTIVE:
            return self.reactive
        if priority is Priority.PREDICTIVE:
            return self.predictive
        return self.ambient


@dataclass(frozen=True, slots=True)
class BreakerConfig:
    """The remote tier's circuit breaker.

    ``failures`` failures or timeouts within ``window_s`` open it; after
    ``cooldown_s`` one probe request (of at most ``probe_timeout_s``) is sent,
    and the breaker closes when it succeeds.
    """

    failures: int = 3
    window_s: float = 10.0
    cooldown_s: float = 5.0
    probe_timeout_s: float = 5.0

    def __post_init__(self) -> None:
        _require(1 <= self.failures <= 1000, "breaker.failures must be in 1..1000")
        _require(0.1 <= self.window_s <= 3600.0, "breaker.window_s must be in 0.1..3600")
        _require(0.01 <= self.cooldown_s <= 3600.0, "breaker.cooldown_s must be in 0.01..3600")
        _require(0.1 <= self.probe_timeout_s <= 600.0, "breaker.probe_timeout_s: 0.1..600")


@dataclass(frozen=True, slots=True)
class AiConfig:
    """All AI settings; one instance is built at start and passed explicitly."""

    model: ModelConfig = field(default_factory=ModelConfig)
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    hygiene: HygieneConfig = field(default_factory=HygieneConfig)
    filter: FilterConfig = field(default_factory=FilterConfig)
    scripted: ScriptedConfig = field(default_factory=ScriptedConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    remote: RemoteConfig = field(default_factory=RemoteConfig)
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    breaker: BreakerConfig = field(default_factory=BreakerConfig)

    def with_live_settings(self, new: AiConfig) -> AiConfig:
        """These settings with ``new``'s that can change while the game runs.

        Live: sampling (but the seed, which seeds the model's generator at load), the
        budgets and the rate limit (not the queue size), hygiene, the filter, routing, the
        breaker, and the server tier's address, model, API, key and timeouts. Kept until
        the next start: the model (the game swaps in another one beside it, see
        ``ai.swap``), the fake backend's timings, the process settings, and whether the
        server tier exists and how many lanes it has.
        """
        return replace(
            new,
            model=self.model,
            generation=replace(new.generation, seed=self.generation.seed),
            scheduler=replace(new.scheduler, queue_capacity=self.scheduler.queue_capacity),
            scripted=self.scripted,
            runtime=self.runtime,
            remote=replace(new.remote, enabled=self.remote.enabled, lanes=self.remote.lanes),
        )
