"""The real window code path, on SDL's dummy video driver."""

from __future__ import annotations

import os
from pathlib import Path

import pygame
import pytest

from game.__main__ import main


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
