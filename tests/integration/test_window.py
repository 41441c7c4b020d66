"""The real window code path, on SDL's dummy video driver."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pygame
import pytest

from game.__main__ import main
from game.app import build_village
from game.config import CONFIG_DIR, load_settings
from game.window import GameWindow


@pytest.fixture(autouse=True)
def dummy_video(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")


def test_window_renders_frames_and_saves_a_screenshot(tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    assert main(["--ai", "off", "--frames", "30", "--screenshot", str(shot)]) == 0
    assert shot.is_file()
    pygame.init()
    try:
        image = pygame.image.load(str(shot))
        assert image.get_size() == (1280, 720)
        colours = {
            tuple(image.get_at((x, y))) for x in range(0, 1280, 64) for y in range(0, 720, 48)
        }
        assert len(colours) > 10  # a real scene, not a blank surface
    finally:
        pygame.quit()
    assert os.environ["SDL_VIDEODRIVER"] == "dummy"


@pytest.fixture
def window() -> Iterator[GameWindow]:
    """A real window on the dummy driver over the village with the AI off."""
    settings = load_settings(CONFIG_DIR, ('game.dialogue.ai_mode="off"',))
    village = build_village(settings)
    pygame.display.init()
    pygame.font.init()
    try:
        yield GameWindow(village, settings.game, launched_at=time.perf_counter())
    finally:
        village.close()
        pygame.quit()


def test_the_first_frame_is_timed_from_launch(
    window: GameWindow, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="game.window"):
        window.run(max_frames=2)
    assert window.first_frame_ms is not None
    assert window.first_frame_ms > 0
    assert sum("first frame after" in r.getMessage() for r in caplog.records) == 1


def test_the_key_that_opens_the_chat_is_not_typed_into_it(
    window: GameWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    npc_id = window.village.world.npc_ids()[0]
    monkeypatch.setattr(window, "_nearest_talker", lambda: npc_id)
    window._handle_event(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_t, unicode="t"))
    for text in ("t", "h", "i"):
        window._handle_event(pygame.event.Event(pygame.TEXTINPUT, text=text))
    assert window.chat == "hi"
    # A "t" typed later, in its own batch, is the player's.
    window._swallow = ""
    window._handle_event(pygame.event.Event(pygame.TEXTINPUT, text="t"))
    assert window.chat == "hit"


def test_the_hud_names_the_mode_and_reads_ai_figures_at_most_4_times_a_second(
    window: GameWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(window.village.ai, "hud_stats", lambda: calls.append(1) or (("rows", "1"),))
    assert window._hud().mode == "off"
    assert calls == []  # F3 is off: no figures are gathered at all
    window._key(pygame.K_F3)
    views = [window._hud() for _ in range(50)]
    assert len(calls) == 1
    assert all(view.ai_stats[-1] == ("rows", "1") for view in views)
    assert views[-1].frame_ms == tuple(window.frame_ms)
