"""Settings that are valid but would hurt the game: one warning line each, at start."""

from __future__ import annotations

import logging
import os

from game.config.settings import Settings

logger = logging.getLogger(__name__)

# Resident memory per token of context for the packaged model (Gemma 3 270M, full-size
# sliding-window cache): measured as the RSS difference between n_ctx 2048 and 16384,
# 18.1 kB per token. Other models differ; the warning says it is an estimate.
KV_BYTES_PER_TOKEN = 18_500
# Leave at least this share of the memory that is free now to everything else.
_MEMORY_SHARE = 0.5


def available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def setting_warnings(
    settings: Settings, cores: int | None = None, memory: int | None = None
) -> list[str]:
    """One line per setting that would slow the game down or run out of memory."""
    warnings: list[str] = []
    if settings.game.dialogue.ai_mode == "off" or settings.ai.model.backend != "llama":
        return warnings
    model = settings.ai.model
    cores = cores if cores is not None else (os.cpu_count() or 1)
    spare = max(1, cores - 1)
    for name, threads in (
        ("n_threads", model.n_threads),
        ("n_threads_batch", model.n_threads_batch),
    ):
        if threads > spare:
            warnings.append(
                f"ai.model.{name} = {threads} on {cores} cores: more llama.cpp threads than "
                f"cores minus one ({spare}) take the game's core and slow the model down too"
            )
    if memory is not None:
        # One cache for every line, and one more for player conversations when kept apart.
        caches = 2 if model.conversation_cache else 1
        needed = caches * model.n_ctx * KV_BYTES_PER_TOKEN
        if needed > memory * _MEMORY_SHARE:
            warnings.append(
                f"ai.model.n_ctx = {model.n_ctx} needs about {needed / 2**20:.0f} MB for the "
                f"model's {'caches' if caches > 1 else 'cache'} (estimate for the packaged "
                f"model), but only {memory / 2**20:.0f} MB of memory is free"
            )
    if model.adapter and settings.ai.remote.enabled and settings.ai.remote.api == "completion":
        warnings.append(
            "ai.remote is enabled beside the village adapter: with the adapter loaded, "
            "prompts take the compact form it was trained on, which a base model on the "
            'server reads poorly; set ai.model.adapter = "" to send it few-shot prompts'
        )
    return warnings


def warn_about(settings: Settings) -> None:
    """Log every warning from :func:`setting_warnings`."""
    for line in setting_warnings(settings, memory=available_memory()):
        logger.warning("%s", line)
