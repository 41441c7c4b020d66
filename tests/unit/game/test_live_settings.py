"""Edits to the config files while the village runs: picked up, applied or refused.

Each test works on a copy of ``config/`` in a temporary folder and drives the watcher's
looks by hand (``look``), so nothing waits on its thread. The village runs on a scripted
backend that records the sampling settings each generation was given.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ai import GenerationParams, LineRequest, Priority, PromptSpec, ScriptedBackend
from ai.backend import StopCheck
from game.app import build_village, watch_settings
from game.config.live import EVERY_TICKS, LiveSettings
from game.config.settings import CONFIG_DIR, load_settings
from game.config.watch import ConfigWatcher, SettingsRead
from game.core.session import Session
from tests.unit.game.conftest import FAST, FAST_TIMINGS, RIGHT, STAY, source_of, walk


class RecordingBackend(ScriptedBackend):
    """The scripted backend, keeping the sampling settings of every generation."""

    def __init__(self) -> None:
        super().__init__(FAST_TIMINGS)
        self.params: list[GenerationParams] = []

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        self.params.append(params)
        return super().generate(prompt, params, should_stop)


@dataclass
class Running:
    """A village watching its own copy of the config files."""

    village: Session
    live: LiveSettings
    watcher: ConfigWatcher
    backend: RecordingBackend
    config: Path
    submitted: list[LineRequest]

    def edit(self, name: str, old: str, new: str) -> None:
        """Replace ``old`` with ``new`` in one of the files (``old`` must be there)."""
        path = self.config / name
        text = path.read_text(encoding="utf-8")
        assert old in text
        _write(path, text.replace(old, new, 1))

    def append(self, name: str, text: str) -> None:
        path = self.config / name
        _write(path, path.read_text(encoding="utf-8") + text)

    def look(self) -> None:
        """Two looks by the watcher (a change must hold still), then ticks until the
        session has taken in what it read."""
        self.watcher.check()
        self.watcher.check()
        walk(self.village, STAY, EVERY_TICKS)


def _write(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    # Some file systems keep one mtime for writes close together; the size may not change.
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


@pytest.fixture
def running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Running]:
    config = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, config)
    watcher = ConfigWatcher(config, FAST)
    settings = load_settings(config, FAST)
    backend = RecordingBackend()
    village = build_village(settings, backend=backend)
    try:
        assert village.ai.wait_ready(5.0) == "ready"
        live = watch_settings(village, settings, watcher, config)
        runtime = source_of(village).runtime
        submitted: list[LineRequest] = []
        submit = runtime.submit

        def recorded(request: LineRequest) -> object:
            submitted.append(request)
            return submit(request)

        monkeypatch.setattr(runtime, "submit", recorded)
        yield Running(village, live, watcher, backend, config, submitted)
    finally:
        village.close()


def _messages(caplog: pytest.LogCaptureFixture, *fragments: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "game.config.live" and all(f in r.getMessage() for f in fragments)
    ]


def _first_generation_after(running: Running, walked: Callable[[], None]) -> GenerationParams:
    running.backend.params.clear()
    walked()
    assert running.backend.params, "no line was generated"
    return running.backend.params[0]


def test_a_temperature_and_budget_edit_reaches_the_requests(running: Running) -> None:
    assert running.backend.params[-1].temperature == 0.8
    running.edit("ai.toml", "temperature = 0.8", "temperature = 0.3")
    running.edit("ai.toml", "deadline_predictive_s = 4.0", "deadline_predictive_s = 3.5")
    running.edit("ai.toml", "deadline_reactive_s = 1.0", "deadline_reactive_s = 0.9")
    running.look()
    assert running.live.reloads == 1
    assert running.live.settings.ai.generation.temperature == 0.3
    running.submitted.clear()
    params = _first_generation_after(
        running,
        lambda: walk(
            running.village,
            RIGHT,
            600,
            until=lambda: any(r.priority is not Priority.AMBIENT for r in running.submitted),
        ),
    )
    assert params.temperature == 0.3
    # Lines the idle worker writes ahead go at ambient priority, whose budget is unchanged.
    deadlines = {r.deadline_s for r in running.submitted if r.priority is not Priority.AMBIENT}
    assert deadlines & {3.5, 0.9}
    assert not deadlines & {4.0, 1.0}


def test_a_live_edit_is_named_in_one_notice(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    running.edit("ai.toml", "top_k = 40", "top_k = 20")
    with caplog.at_level(logging.INFO, logger="game.config.live"):
        running.look()
    assert running.village.take_notices() == ["Settings reloaded: ai.generation.top_k"]
    assert _messages(caplog, "ai.generation.top_k 40 -> 20")


def test_an_n_ctx_edit_is_named_as_restart_only_and_kept(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    before = running.live.settings
    running.edit("ai.toml", "n_ctx = 2048", "n_ctx = 4096")
    with caplog.at_level(logging.INFO, logger="game.config.live"):
        running.look()
        running.look()
    notices = running.village.take_notices()
    assert notices == ["Takes effect at the next start: ai.model.n_ctx"]
    assert len(_messages(caplog, "ai.model.n_ctx")) == 1
    assert running.live.settings.ai.model.n_ctx == 2048
    assert running.live.settings == before
    assert running.live.reloads == 0


def test_a_live_and_a_restart_only_edit_together(running: Running) -> None:
    running.edit("ai.toml", "n_threads = 1", "n_threads = 2")
    running.edit("game.toml", "bubble_s = 4.0", "bubble_s = 5.0")
    running.look()
    notices = running.village.take_notices()
    assert notices == [
        "Settings reloaded: game.dialogue.bubble_s",
        "Takes effect at the next start: ai.model.n_threads",
    ]
    assert running.live.settings.game.dialogue.bubble_s == 5.0
    assert running.live.settings.ai.model.n_threads == 1


@pytest.mark.parametrize(
    ("broken", "fragment"),
    [
        (lambda r: r.append("ai.toml", "oops = [\n"), "not valid TOML"),
        (lambda r: r.edit("ai.toml", "temperature = 0.8", "temperature = 9.0"), "temperature"),
        (lambda r: r.append("game.toml", "\n[dialogue2]\nx = 1\n"), "unknown key"),
    ],
    ids=["malformed", "out-of-range", "unknown-key"],
)
def test_a_bad_edit_is_refused_with_one_message(
    running: Running,
    caplog: pytest.LogCaptureFixture,
    broken: Callable[[Running], None],
    fragment: str,
) -> None:
    before = running.live.settings
    broken(running)
    with caplog.at_level(logging.INFO, logger="game.config.live"):
        for _ in range(3):
            running.look()
    notices = running.village.take_notices()
    assert len(notices) == 1
    assert notices[0].startswith("Settings not reloaded:")
    assert fragment in notices[0]
    assert str(running.config) not in notices[0]  # the file's name, not its whole path
    assert len(_messages(caplog, fragment, "keeping the last good settings")) == 1
    assert "Traceback" not in caplog.text
    assert running.live.settings is before
    assert running.live.refused == 1
    params = _first_generation_after(
        running,
        lambda: walk(running.village, RIGHT, 600, until=lambda: bool(running.backend.params)),
    )
    assert params.temperature == 0.8


def test_a_fixed_file_after_a_bad_one_is_applied(running: Running) -> None:
    running.append("ai.toml", "oops = [\n")
    running.look()
    path = running.config / "ai.toml"
    text = path.read_text(encoding="utf-8").replace("oops = [\n", "")
    _write(path, text.replace("temperature = 0.8", "temperature = 0.4"))
    running.look()
    notices = running.village.take_notices()
    assert notices[0].startswith("Settings not reloaded:")
    assert notices[1:] == ["Settings reloaded: ai.generation.temperature"]
    assert running.live.settings.ai.generation.temperature == 0.4
    assert running.live.report().reloads == 1
    assert running.live.report().refused == 1


def test_a_file_put_back_after_a_bad_edit_says_so(running: Running) -> None:
    path = running.config / "ai.toml"
    good = path.read_text(encoding="utf-8")
    running.append("ai.toml", "oops = [\n")
    running.look()
    _write(path, good)
    running.look()
    notices = running.village.take_notices()
    assert notices[1:] == ["Settings are good again; nothing changed"]


def test_an_f5_switch_stands_through_an_unrelated_reload(running: Running) -> None:
    source = source_of(running.village)
    assert source.toggle_mode() == "sync"
    running.edit("ai.toml", "top_p = 0.95", "top_p = 0.9")
    running.look()
    assert source.mode == "sync"
    running.edit("game.toml", 'ai_mode = "async"', 'ai_mode = "sync"')
    running.look()
    running.edit("game.toml", 'ai_mode = "sync"', 'ai_mode = "async"')
    running.look()
    assert source.mode == "async"


def test_turning_the_model_off_waits_for_the_next_start(running: Running) -> None:
    running.edit("game.toml", 'ai_mode = "async"', 'ai_mode = "off"')
    running.look()
    assert running.village.take_notices() == [
        "Takes effect at the next start: game.dialogue.ai_mode"
    ]
    assert source_of(running.village).mode == "async"


def _until_swapped(running: Running) -> tuple[list[str], str]:
    """Walk until the swap under way ends: every message meanwhile, and the one that
    says how it ended."""
    notices: list[str] = []

    def ended() -> str | None:
        notices.extend(running.village.take_notices())
        return next((n for n in notices if n.startswith(("Villagers now", "Could not"))), None)

    walk(running.village, STAY, 600, until=lambda: ended() is not None)
    said = ended()
    assert said is not None
    return notices, said


def test_an_edit_to_the_model_swaps_it_in_while_the_game_runs(
    running: Running, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    other = tmp_path / "other-model.gguf"
    other.write_bytes(b"GGUF" + bytes(60))
    voice = source_of(running.village).voice
    assert voice is not None
    assert voice.model.adapter
    running.edit("ai.toml", 'model_path = ""', f'model_path = "{other}"')
    running.edit("ai.toml", 'adapter = "village"', 'adapter = ""')
    with caplog.at_level(logging.INFO, logger="game.config.live"):
        running.look()
        notices, ended = _until_swapped(running)
    # One message says the model is loading (the scripted backend names no file); none
    # says the edit waits for the next start.
    assert [n for n in notices if n != ended] == [
        "Loading the scripted model without an adapter; villagers talk on"
    ]
    assert _messages(caplog, "model edited")
    assert running.live.settings.ai.model.model_path == str(other)
    assert ended.startswith("Villagers now speak with the base model")
    assert voice.model.model_path == str(other)
    assert not voice.model.adapter
    assert source_of(running.village)._builder.style == "fewshot"  # noqa: SLF001

    # An unrelated edit later swaps nothing; putting the file back swaps back.
    running.edit("ai.toml", "top_k = 40", "top_k = 20")
    running.look()
    assert running.village.take_notices() == ["Settings reloaded: ai.generation.top_k"]
    running.edit("ai.toml", f'model_path = "{other}"', 'model_path = ""')
    running.edit("ai.toml", 'adapter = ""', 'adapter = "village"')
    running.look()
    _, ended = _until_swapped(running)
    assert ended.startswith("Villagers now speak with the village voice")
    assert voice.model.adapter


def test_how_the_model_loads_still_waits_for_the_next_start(running: Running) -> None:
    voice = source_of(running.village).voice
    assert voice is not None
    before = voice.model
    running.edit("ai.toml", "n_batch = 256", "n_batch = 128")
    running.look()
    assert running.village.take_notices() == ["Takes effect at the next start: ai.model.n_batch"]
    assert voice.model == before


def test_the_watcher_reads_a_change_once_it_holds_still(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, config)
    watcher = ConfigWatcher(config)
    watcher.check()
    assert watcher.take() == []
    path = config / "game.toml"
    _write(path, path.read_text(encoding="utf-8").replace("seed = 7", "seed = 8"))
    watcher.check()
    assert watcher.take() == []  # it may still be being written
    watcher.check()
    (read,) = watcher.take()
    assert isinstance(read, SettingsRead)
    assert read.settings.game.world.seed == 8
    watcher.check()
    assert watcher.take() == []


def test_the_watcher_thread_picks_up_an_edit(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, config)
    watcher = ConfigWatcher(config, interval_s=0.01)
    watcher.start()
    try:
        path = config / "game.toml"
        _write(path, path.read_text(encoding="utf-8").replace("seed = 7", "seed = 9"))
        reads: list[object] = []
        end = time.monotonic() + 5.0
        while not reads and time.monotonic() < end:
            reads += watcher.take()
            time.sleep(0.01)
    finally:
        watcher.close()
    assert len(reads) == 1
    read = reads[0]
    assert isinstance(read, SettingsRead)
    assert read.settings.game.world.seed == 9
