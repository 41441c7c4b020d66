"""Level, cast and font files a modder can get wrong: one clear line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pygame
import pytest

from game.assets import ASSETS_DIR, AssetError
from game.ui.window import check_fonts
from tests.robustness.conftest import assert_one_clean_line


def _write_level(tmp_path: Path, data: Any) -> str:
    path = tmp_path / "level.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return f'game.world.level="{path}"'


def test_level_nested_100000_deep(run_game, tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert_one_clean_line(run_game("--set", f'game.world.level="{path}"'), "nested")


def test_binary_level(run_game, tmp_path: Path) -> None:
    path = tmp_path / "binary.json"
    path.write_bytes(bytes(range(256)))
    assert_one_clean_line(run_game("--set", f'game.world.level="{path}"'), "binary.json")


def test_huge_prop_count_is_refused_at_once(run_game, tmp_path: Path, level_data) -> None:
    level_data["props"][0]["count"] = 10**7
    outcome = run_game("--set", _write_level(tmp_path, level_data))
    assert_one_clean_line(outcome, "props[0].count", "at most")


def test_too_many_props_in_total(run_game, tmp_path: Path, level_data) -> None:
    level_data["props"] = [{"kind": "apple", "x": 100, "y": 100, "count": 400}] * 6
    assert_one_clean_line(run_game("--set", _write_level(tmp_path, level_data)), "props")


def test_unknown_errand_prop_kind(run_game, tmp_path: Path, level_data) -> None:
    level_data["errands"][0]["prop_kind"] = "dragon"
    outcome = run_game("--set", _write_level(tmp_path, level_data))
    assert_one_clean_line(outcome, "errands[0].prop_kind", "dragon")


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d["spawns"].__setitem__("player", [99999, 40]), "spawns.player"),
        (lambda d: d["props"][0].__setitem__("x", -500), "props"),
        (lambda d: d["props"][0].__setitem__("dx", 5000), "props"),
        (lambda d: d["zones"][0].__setitem__("x", 1e9), "zones[0]"),
    ],
)
def test_positions_outside_the_level(run_game, tmp_path: Path, level_data, change, where) -> None:
    change(level_data)
    outcome = run_game("--set", _write_level(tmp_path, level_data))
    assert_one_clean_line(outcome, where, "outside the level")


def test_huge_stack_and_goal(run_game, tmp_path: Path, level_data) -> None:
    level_data["stacks"][0]["count"] = 10**6
    assert_one_clean_line(run_game("--set", _write_level(tmp_path, level_data)), "stacks[0]")
    level_data = json.loads((ASSETS_DIR / "levels" / "village.json").read_text())
    level_data["errands"][0]["goal"] = 10**9
    assert_one_clean_line(run_game("--set", _write_level(tmp_path, level_data)), "goal")


def test_latin1_cast(run_game, tmp_path: Path) -> None:
    path = tmp_path / "cast.toml"
    original = (ASSETS_DIR / "npcs" / "villagers.toml").read_text(encoding="utf-8")
    path.write_bytes(original.encode("utf-8") + "# caf\xe9\n".encode("latin-1"))
    assert_one_clean_line(run_game("--set", f'game.world.cast="{path}"'), "cast.toml")


def test_deeply_nested_cast(run_game, tmp_path: Path) -> None:
    path = tmp_path / "cast.toml"
    path.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert_one_clean_line(run_game("--set", f'game.world.cast="{path}"'), "nested")


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00\x01garbage" * 100, (ASSETS_DIR / "fonts" / "DejaVuSans.ttf").read_bytes()[:100]],
)
def test_corrupt_font_is_one_clear_error(tmp_path: Path, content: bytes) -> None:
    pygame.font.init()
    path = tmp_path / "font.ttf"
    path.write_bytes(content)
    with pytest.raises(AssetError, match="font.ttf: cannot load font"):
        check_fonts((path,))


def test_bundled_fonts_pass_the_check() -> None:
    pygame.font.init()
    check_fonts((ASSETS_DIR / "fonts" / "DejaVuSans.ttf", ASSETS_DIR / "fonts" / "missing.ttf"))
