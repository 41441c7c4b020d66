"""An edit to ``ai.model`` in ``config/ai.toml`` while the village runs on the real model:
a model that cannot load is refused with one message, and the serving model writes on."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ai.model import model_file
from game.app import build_village, watch_settings
from game.config.settings import CONFIG_DIR, load_settings
from game.config.watch import ConfigWatcher
from game.core.session import Session
from game.dialogue.line_source import LineAsk
from game.sim.events import Trigger
from tests.unit.game.conftest import STAY, npc_named, player_id, source_of

TICK_S = 1.0 / 60.0


def _play(village: Session, seconds: float, until: Callable[[], bool]) -> None:
    """Step at the game's own pace until ``until()`` holds; fail after ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        village.step(STAY)
        if until():
            return
        time.sleep(TICK_S)
    pytest.fail(f"condition not met within {seconds} s")


pytestmark = pytest.mark.model


def _completed(village: Session) -> int:
    """How many lines the model has written to the end so far."""
    report = village.ai.report()
    assert report is not None
    return report.completed


def test_an_edit_naming_a_broken_model_keeps_the_serving_one(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, config)
    settings = load_settings(config)
    serving = model_file(settings.ai.model)
    assert serving is not None
    village = build_village(settings)
    try:
        assert village.ai.wait_ready(120.0) == "ready"
        watcher = ConfigWatcher(config)
        live = watch_settings(village, settings, watcher, config)
        voice = source_of(village).voice
        assert voice is not None
        before = voice.model

        broken = tmp_path / "broken.gguf"
        with serving.open("rb") as source:
            broken.write_bytes(source.read(8 << 20))  # a GGUF header, then a cut
        path = config / "ai.toml"
        path.write_text(
            path.read_text(encoding="utf-8").replace(
                'model_path = ""', f'model_path = "{broken}"', 1
            ),
            encoding="utf-8",
        )
        watcher.check()
        watcher.check()
        notices: list[str] = []
        _play(village, 10.0, until=lambda: bool(notices.extend(village.take_notices()) or notices))
        assert len(notices) == 1, notices
        assert notices[0].startswith("Loading broken.gguf")
        assert (live.reloads, live.refused) == (0, 0)

        _play(
            village,
            60.0,
            until=lambda: bool(notices.extend(village.take_notices())) or len(notices) > 1,
        )
        assert notices[1].startswith("Could not switch models"), notices
        assert voice.model == before
        assert village.ai.load_error() is None

        completed = _completed(village)
        pip = npc_named(village, "Pip")
        village.dialogue.ask(LineAsk(village.tick, pip, Trigger.HIT, player_id(village)))
        _play(village, 30.0, until=lambda: _completed(village) > completed)
    finally:
        village.close()
