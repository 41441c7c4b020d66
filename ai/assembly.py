"""The runtime the game talks to, put together from its settings.

``build_router`` makes the tiers (:mod:`ai.tiers`), the router over them and what the
router needs to swap its local model later (:mod:`ai.swap`): a way to make the backend
for another model's settings, and the game's fallback source for the new runtime.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ai.backend import Backend
from ai.config import AiConfig
from ai.content.filter import ContentFilter
from ai.fallback import FallbackSource
from ai.llama_backend import LlamaBackend
from ai.router import Router
from ai.scripted_backend import ScriptedBackend
from ai.swap import BackendFactory, Swaps
from ai.tiers import build_tiers

logger = logging.getLogger(__name__)


def backend_for(config: AiConfig) -> Backend:
    """The local backend ``config.model.backend`` names: llama.cpp, or the scripted fake.

    Nothing loads here: the runtime's worker thread loads it.
    """
    if config.model.backend == "scripted":
        return ScriptedBackend(config.scripted)
    return LlamaBackend(config)


def build_router(
    config: AiConfig,
    local_backend: Backend,
    fallback: FallbackSource,
    remote_backend: Callable[[], Backend] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    backends: BackendFactory = backend_for,
    content: ContentFilter | None = None,
) -> Router:
    """A router over the tiers ``config`` asks for (see :func:`ai.tiers.build_tiers`).

    ``backends`` makes the backend of each model swapped in later; ``content`` is the
    content filter every lane applies. Not yet started.
    """
    tiers = build_tiers(config, local_backend, fallback, remote_backend, clock, content)
    swaps = Swaps(config, fallback, backends, clock, content)
    return Router(config, tiers, swaps, clock)
