"""Everything between the game and the language model.

The game builds an :class:`AiRuntime` with a config, a backend and a fallback
source, submits :class:`LineRequest` objects and drains events once per tick
with :meth:`AiRuntime.poll`. Only the runtime's worker thread touches the
model. This package never imports the game.
"""

from ai.backend import Backend, GenerationParams, ModelLoadError
from ai.config import (
    AiConfig,
    GenerationConfig,
    HygieneConfig,
    ModelConfig,
    RuntimeConfig,
    SchedulerConfig,
    ScriptedConfig,
)
from ai.events import (
    AiEvent,
    FallbackUsed,
    LineCompleted,
    LineFailed,
    LoadProgress,
    RequestCancelled,
    RequestDropped,
    RequestStarted,
    RequestStats,
    RequestTimedOut,
    TokenStreamed,
)
from ai.fallback import FallbackSource
from ai.hygiene import clean_line, find_blocked, is_garbage, sanitize_player_text
from ai.llama_backend import LlamaBackend
from ai.metrics import AiMetrics, Percentiles
from ai.requests import Exchange, Handle, LineRequest, Priority, PromptSpec
from ai.runtime import AiRuntime
from ai.scripted_backend import ScriptedBackend, ScriptedError, ScriptedHang

__all__ = [
    "AiConfig",
    "AiEvent",
    "AiMetrics",
    "AiRuntime",
    "Backend",
    "Exchange",
    "FallbackSource",
    "FallbackUsed",
    "GenerationConfig",
    "GenerationParams",
    "Handle",
    "HygieneConfig",
    "LineCompleted",
    "LineFailed",
    "LineRequest",
    "LlamaBackend",
    "LoadProgress",
    "ModelConfig",
    "ModelLoadError",
    "Percentiles",
    "Priority",
    "PromptSpec",
    "RequestCancelled",
    "RequestDropped",
    "RequestStarted",
    "RequestStats",
    "RequestTimedOut",
    "RuntimeConfig",
    "SchedulerConfig",
    "ScriptedBackend",
    "ScriptedConfig",
    "ScriptedError",
    "ScriptedHang",
    "TokenStreamed",
    "clean_line",
    "find_blocked",
    "is_garbage",
    "sanitize_player_text",
]
