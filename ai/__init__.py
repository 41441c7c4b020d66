"""Everything between the game and the language model.

The game talks to a :class:`LineRuntime`: the :class:`Router` that ``build_router``
makes over one or two tiers, each tier one or more :class:`AiRuntime` lanes with a
worker thread of its own. It submits :class:`LineRequest` objects and drains events
once per tick with ``poll``. Only the local runtime's worker thread touches the
in-process model; a model swap (``swap_model``, :mod:`ai.swap`) brings a second one
up on a thread of its own. This package never imports the game.
"""

from ai.assembly import backend_for, build_router
from ai.backend import Backend, GenerationError, GenerationParams, ModelLoadError
from ai.config import (
    AiConfig,
    BreakerConfig,
    GenerationConfig,
    HygieneConfig,
    ModelConfig,
    RemoteConfig,
    RoutingConfig,
    RuntimeConfig,
    SchedulerConfig,
    ScriptedConfig,
)
from ai.events import (
    PLAYER_TEXT_UNFIT,
    AiEvent,
    FallbackUsed,
    LineCompleted,
    LineFailed,
    LoadProgress,
    ModelSwapped,
    RequestCancelled,
    RequestDropped,
    RequestStarted,
    RequestStats,
    RequestTimedOut,
    SwapEvent,
    SwapProgress,
    SwapRefused,
    TokenStreamed,
)
from ai.fallback import FallbackSource
from ai.hygiene import clean_line, find_blocked, is_garbage, sanitize_player_text
from ai.line_runtime import ConfigurableRuntime, LineRuntime, SwappableRuntime
from ai.llama_backend import LlamaBackend
from ai.metrics import AiMetrics, Percentiles, TierStats
from ai.requests import CandidatePlan, Choice, Exchange, Handle, LineRequest, Priority, PromptSpec
from ai.router import Router
from ai.runtime import AiRuntime
from ai.scripted_backend import ScriptedBackend, ScriptedError, ScriptedHang
from ai.selection import LineCriteria, Verdict

__all__ = [
    "PLAYER_TEXT_UNFIT",
    "AiConfig",
    "AiEvent",
    "AiMetrics",
    "AiRuntime",
    "Backend",
    "BreakerConfig",
    "CandidatePlan",
    "Choice",
    "ConfigurableRuntime",
    "Exchange",
    "FallbackSource",
    "FallbackUsed",
    "GenerationConfig",
    "GenerationError",
    "GenerationParams",
    "Handle",
    "HygieneConfig",
    "LineCompleted",
    "LineCriteria",
    "LineFailed",
    "LineRequest",
    "LineRuntime",
    "LlamaBackend",
    "LoadProgress",
    "ModelConfig",
    "ModelLoadError",
    "ModelSwapped",
    "Percentiles",
    "Priority",
    "PromptSpec",
    "RemoteConfig",
    "RequestCancelled",
    "RequestDropped",
    "RequestStarted",
    "RequestStats",
    "RequestTimedOut",
    "Router",
    "RoutingConfig",
    "RuntimeConfig",
    "SchedulerConfig",
    "ScriptedBackend",
    "ScriptedConfig",
    "ScriptedError",
    "ScriptedHang",
    "SwapEvent",
    "SwapProgress",
    "SwapRefused",
    "SwappableRuntime",
    "TierStats",
    "TokenStreamed",
    "Verdict",
    "backend_for",
    "build_router",
    "clean_line",
    "find_blocked",
    "is_garbage",
    "sanitize_player_text",
]
