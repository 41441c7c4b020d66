"""Helpers for bad-input tests: run the real entry point and read what the player sees."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from game.__main__ import main
from game.assets import ASSETS_DIR
from game.config.settings import CONFIG_DIR


@dataclass(frozen=True)
class Outcome:
    """Exit code and the error output of one run."""

    code: int
    err: str

    @property
    def error_lines(self) -> list[str]:
        """Lines of the player-facing message (log lines excluded)."""
        return [line for line in self.err.splitlines() if line.startswith("zerostall:")]


@pytest.fixture
def run_game(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run ``python -m game`` in-process, headless and unpaced, with extra flags."""

    def run(*args: str) -> Outcome:
        argv = ["--headless", "--ai", "off", "--ticks", "5", "--unpaced", "--log", "ERROR"]
        code = main([*argv, *args])
        return Outcome(code, capsys.readouterr().err)

    return run


@pytest.fixture
def config_copy(tmp_path: Path) -> Path:
    """A writable copy of the config folder."""
    folder = tmp_path / "config"
    shutil.copytree(CONFIG_DIR, folder)
    return folder


@pytest.fixture
def level_data() -> dict[str, Any]:
    """The bundled level, parsed, to be broken by a test."""
    return json.loads((ASSETS_DIR / "levels" / "village.json").read_text(encoding="utf-8"))


def assert_one_clean_line(outcome: Outcome, *fragments: str) -> None:
    """Exit 2, no traceback, exactly one error line that mentions every fragment."""
    assert outcome.code == 2, outcome.err
    assert "Traceback" not in outcome.err
    assert len(outcome.error_lines) == 1, outcome.err
    for fragment in fragments:
        assert fragment in outcome.error_lines[0], outcome.err
