"""Settings reloaded while the game runs: which changed, which apply now, which wait.

:class:`LiveSettings` runs on the main thread, after a tick. Every ``every`` ticks it takes
what the :class:`~game.config.watch.ConfigWatcher` read, compares it with the settings
the files held before, and hands the ones that can change live to ``apply`` in one
immutable :class:`Settings`. The ones that cannot are named in one message and keep the
value the game started with. An edit that names another model (``ai.model``'s file,
its sha256, the adapter or its scale) goes to ``swap``, which brings the new model up
beside the serving one (``game.dialogue.voice_swap``). How a model is loaded (threads,
context, batch) and the backend wait for the next start. A bad edit keeps the last good
settings, with one message.
Each message goes to the log and to :meth:`LiveSettings.take_notices`, for the screen.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from ai import ModelConfig
from game.config.settings import Settings
from game.config.watch import ConfigRead, SettingsRefused
from game.headless.report import SettingsReport

logger = logging.getLogger(__name__)

#: The settings that say which model speaks; an edit to any of them swaps the model.
SWAPPED_KEYS = ("model_path", "model_sha256", "adapter", "adapter_scale")

#: Twice a second at 60 Hz: an edit shows within a second of being saved.
EVERY_TICKS = 30
_NOTICE_CHARS = 110
_NAMES_SHOWN = 3
_NOTICES_KEPT = 8


class ConfigReads(Protocol):
    """Where the reloaded settings come from (the watcher, or a test's script)."""

    def take(self) -> list[ConfigRead]:
        """The outcomes of the reads since the last call, oldest first; never waits."""
        ...


def changed_keys(old: Any, new: Any, prefix: str = "") -> Iterator[str]:
    """The dotted names of the settings whose values differ (``ai.generation.top_k``)."""
    for f in dataclasses.fields(old):
        before, after = getattr(old, f.name), getattr(new, f.name)
        if before == after:
            continue
        if dataclasses.is_dataclass(before) and not isinstance(before, type):
            yield from changed_keys(before, after, f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}"


def live_settings(running: Settings, new: Settings) -> Settings:
    """``new``, with every setting that cannot change while the game runs kept from
    ``running``. Raises ValueError if the mix breaks a rule between two settings.

    Live on the game's side: the dialogue's bubble times, sync wait, admission, and the
    AI mode between async and sync (the model is not loaded or unloaded live). The AI's
    live settings are :meth:`ai.config.AiConfig.with_live_settings`.
    """
    dialogue = new.game.dialogue
    was_off = running.game.dialogue.ai_mode == "off"
    if was_off or dialogue.ai_mode == "off":
        dialogue = replace(dialogue, ai_mode=running.game.dialogue.ai_mode)
    return Settings(
        game=replace(running.game, dialogue=dialogue),
        ai=running.ai.with_live_settings(new.ai),
    )


class LiveSettings:
    """Applies edits to the config files while the game runs; main thread only.

    ``running`` are the settings the game started with, ``apply`` hands reloaded ones
    to the parts that use them, ``swap`` asks for an edited model and says what happens
    (None: the model is restart-only). :attr:`settings` are the settings in force.
    """

    def __init__(
        self,
        reads: ConfigReads,
        running: Settings,
        apply: Callable[[Settings], None],
        config_dir: Path,
        every: int = EVERY_TICKS,
        swap: Callable[[ModelConfig], str] | None = None,
    ) -> None:
        self._reads = reads
        self._apply = apply
        self._swap = swap
        self._dir = config_dir
        self._every = max(1, every)
        self._files = running  # what the files held at the last good read
        self.settings = running
        self._refused = False
        self._notices: deque[str] = deque(maxlen=_NOTICES_KEPT)
        self.reloads = 0
        self.refused = 0

    def after_tick(self, tick: int) -> None:
        """Every ``every`` ticks, take in what the watcher read since the last look."""
        if tick % self._every == 0:
            for read in self._reads.take():
                self.handle(read)

    def handle(self, read: ConfigRead) -> None:
        """Apply one read, or refuse it, with one message for each thing to say."""
        if isinstance(read, SettingsRefused):
            self._refuse(read.message)
            return
        new = read.settings
        try:
            in_force = live_settings(self.settings, new)
        except ValueError as exc:
            self._refuse(f"{self._dir}: {exc}")
            return
        edited = set(changed_keys(self._files, new))
        live = list(changed_keys(self.settings, in_force))
        model = self._swapped_model(edited, in_force, new)
        if model is not None:
            in_force = replace(in_force, ai=replace(in_force.ai, model=model))
        waiting = [key for key in changed_keys(in_force, new) if key in edited]
        if live:
            try:
                self._apply(in_force)
            except Exception as exc:  # a part that cannot take them keeps what it had
                logger.debug("applying reloaded settings failed", exc_info=True)
                self._refuse(f"{self._dir}: the reloaded settings could not be applied: {exc!r}")
                return
            self.reloads += 1
            logger.info(
                "settings reloaded from %s: %s",
                self._dir,
                ", ".join(_change(key, self.settings, in_force) for key in live),
            )
            self._notices.append(_short(f"Settings reloaded: {_names(live)}"))
        if model is not None and self._swap is not None:
            said = self._swap(model)
            logger.info("model edited in %s: %s", self._dir, said)
            self._notices.append(_short(said))
        if waiting:
            logger.warning(
                "settings changed in %s that take effect at the next start (kept until then): %s",
                self._dir,
                ", ".join(waiting),
            )
            self._notices.append(_short(f"Takes effect at the next start: {_names(waiting)}"))
        if not live and not waiting and model is None and self._refused:
            logger.info("settings in %s are good again; nothing to change", self._dir)
            self._notices.append("Settings are good again; nothing changed")
        self._files, self.settings, self._refused = new, in_force, False

    def _swapped_model(
        self, edited: set[str], in_force: Settings, new: Settings
    ) -> ModelConfig | None:
        """The edited model to swap to, or None (no model named anew, or no swap)."""
        if self._swap is None or not edited & {f"ai.model.{key}" for key in SWAPPED_KEYS}:
            return None
        named = {key: getattr(new.ai.model, key) for key in SWAPPED_KEYS}
        return replace(in_force.ai.model, **named)

    def take_notices(self) -> list[str]:
        """The messages for the screen since the last call."""
        notices = list(self._notices)
        self._notices.clear()
        return notices

    def report(self) -> SettingsReport:
        """How many reloads were applied and refused so far."""
        return SettingsReport(self.reloads, self.refused)

    def _refuse(self, message: str) -> None:
        self.refused += 1
        self._refused = True
        logger.warning("%s; keeping the last good settings", message)
        shown = message.replace(f"{self._dir}/", "")
        self._notices.append(_short(f"Settings not reloaded: {shown}"))


def _names(keys: list[str]) -> str:
    shown = ", ".join(keys[:_NAMES_SHOWN])
    more = len(keys) - _NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def _short(text: str) -> str:
    return text if len(text) <= _NOTICE_CHARS else text[: _NOTICE_CHARS - 1] + "…"


def _change(key: str, old: Settings, new: Settings) -> str:
    return f"{key} {_value(old, key)!r} -> {_value(new, key)!r}"


def _value(settings: Settings, key: str) -> Any:
    value: Any = settings
    for part in key.split("."):
        value = getattr(value, part)
    return value
