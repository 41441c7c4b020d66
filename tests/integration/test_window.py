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
from game.app import build_village, watch_settings
from game.config.live import EVERY_TICKS
from game.config.settings import CONFIG_DIR, load_settings
from game.config.watch import ConfigRead, SettingsRefused
from game.sim.player import PlayerIntent
from game.ui.window import GameWindow


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
    with caplog.at_level(logging.INFO, logger="game.ui.window"):
        window.run(max_frames=2)
    assert window.first_frame_ms is not None
    assert window.first_frame_ms > 0
    assert sum("first frame after" in r.getMessage() for r in caplog.records) == 1


def _stand_by(window: GameWindow, spec_id: str) -> int:
    world = window.village.world
    v = next(v for v in world.villagers if v.spec.id == spec_id)
    world.player.body.position = (v.x + 50.0, v.y + 2.0)
    window._step(world.tick + 1)
    return v.id


def _key(window: GameWindow, key: int, text: str = "") -> None:
    window._handle_event(pygame.event.Event(pygame.KEYDOWN, key=key, unicode=text))
    window._handle_event(pygame.event.Event(pygame.KEYUP, key=key))


def test_the_key_that_opens_the_chat_is_not_typed_into_it(window: GameWindow) -> None:
    _stand_by(window, "baker")
    window._handle_event(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_t, unicode="t"))
    for text in ("t", "h", "i"):
        window._handle_event(pygame.event.Event(pygame.TEXTINPUT, text=text))
    assert window.chat.typed == "hi"
    # A "t" typed later, in its own batch, is the player's.
    window.chat.end_batch()
    window._handle_event(pygame.event.Event(pygame.TEXTINPUT, text="t"))
    assert window.chat.typed == "hit"


def test_the_chat_box_names_the_villager_and_stays_open_after_enter(
    window: GameWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[tuple[int, str]] = []
    monkeypatch.setattr(
        window.village.dialogue, "say", lambda tick, npc, me, text: said.append((npc, text)) or text
    )
    marta = _stand_by(window, "baker")
    _key(window, pygame.K_t, "t")
    window.chat.end_batch()
    for text in ("Hello", " there"):
        window._handle_event(pygame.event.Event(pygame.TEXTINPUT, text=text))
    _key(window, pygame.K_RETURN)
    hud = window._hud()
    assert said == [(marta, "Hello there")]
    assert hud.chat is not None
    assert (hud.chat.open, hud.chat.target, hud.chat.typed) == (True, "Marta", "")
    window.run(max_frames=2)
    rects = window.renderer.hud.rects
    assert any(r.bottom > window.surface.get_height() - 80 for r in rects)  # the box is drawn
    _key(window, pygame.K_ESCAPE)
    assert not window.chat.is_open
    assert not window.paused  # Esc left the chat; it did not pause the game


def test_the_pause_menu_resumes_and_quits(window: GameWindow) -> None:
    _key(window, pygame.K_ESCAPE)
    assert window.paused
    hud = window._hud()
    assert hud.pause_items == ("Resume", "Village voice on/off", "Quit")
    assert hud.pause_choice == 0
    window.run(max_frames=1)
    resume, voice, quit_item = window.renderer.hud.menu_rects
    tick = window.village.tick
    window.run(max_frames=3)
    assert window.village.tick == tick  # paused: the world does not move
    window._handle_event(pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=resume.center))
    assert not window.paused
    _key(window, pygame.K_ESCAPE)
    _key(window, pygame.K_DOWN)
    assert window._hud().pause_choice == 1
    _key(window, pygame.K_RETURN)  # the village voice: this window has no model to swap
    assert not window.paused
    assert window._hud().toast.startswith("The model is off")
    _key(window, pygame.K_ESCAPE)
    _key(window, pygame.K_UP)
    assert window._hud().pause_choice == 2
    _key(window, pygame.K_RETURN)
    assert not window.running
    assert quit_item.top > voice.bottom > resume.bottom


def test_the_window_is_called_zerostall_and_hints_at_help_for_a_while() -> None:
    settings = load_settings(CONFIG_DIR, ('game.dialogue.ai_mode="off"',))
    village = build_village(settings)
    pygame.display.init()
    pygame.font.init()
    now = [100.0]
    try:
        window = GameWindow(village, settings.game, clock=lambda: now[0])
        assert pygame.display.get_caption()[0] == "Zerostall"
        hud = window._hud()
        assert (hud.hint, hud.hint_alpha) == ("F1: help", 1.0)
        now[0] += 9.0  # the window's own clock: halfway through the fade
        assert window._hud().hint_alpha == pytest.approx(0.5)
        now[0] += 5.0
        assert window._hud().hint_alpha == 0.0
    finally:
        village.close()
        pygame.quit()


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
    assert all(("rows", "1") in view.ai_stats for view in views)
    assert views[-1].frame_ms == tuple(window.frame_ms)


class _OneBadRead:
    """Hands the session one refused read of the config files, then nothing."""

    def __init__(self) -> None:
        self.reads: list[ConfigRead] = [SettingsRefused(f"{CONFIG_DIR}/ai.toml: not valid TOML")]

    def take(self) -> list[ConfigRead]:
        reads, self.reads = self.reads, []
        return reads


def test_a_refused_settings_reload_shows_as_a_toast(window: GameWindow) -> None:
    settings = load_settings(CONFIG_DIR, ('game.dialogue.ai_mode="off"',))
    watch_settings(window.village, settings, _OneBadRead(), CONFIG_DIR)
    for _ in range(EVERY_TICKS):
        window.step(PlayerIntent())
    assert window._hud().toast == "Settings not reloaded: ai.toml: not valid TOML"
