"""Config files: every mistake is named with its file, key and expected type."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from game.config.loader import ConfigError
from game.config.settings import CONFIG_DIR, load_settings


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    for name in ("game.toml", "ai.toml"):
        shutil.copy(CONFIG_DIR / name, tmp_path / name)
    return tmp_path


def prepend(path: Path, text: str) -> None:
    path.write_text(text + "\n" + path.read_text())


def test_shipped_config_loads() -> None:
    settings = load_settings()
    assert settings.game.loop.max_steps_per_frame == 5
    assert settings.ai.model.n_threads == 1


def test_unknown_key_names_file_and_key(config_dir: Path) -> None:
    text = (config_dir / "game.toml").read_text().replace("width = 1280", "widht = 1280")
    (config_dir / "game.toml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_settings(config_dir)
    message = str(err.value)
    assert "game.toml" in message
    assert "window.widht" in message


def test_wrong_type_names_expected_type(config_dir: Path) -> None:
    text = (config_dir / "game.toml").read_text().replace("seed = 7", 'seed = "seven"')
    (config_dir / "game.toml").write_text(text)
    with pytest.raises(
        ConfigError, match=r"game\.toml: 'world\.seed' must be an integer, got 'seven'"
    ):
        load_settings(config_dir)


def test_bool_is_not_an_integer(config_dir: Path) -> None:
    with pytest.raises(ConfigError, match="must be an integer"):
        load_settings(config_dir, ("game.loop.max_steps_per_frame=true",))


def test_out_of_range_value_is_explained(config_dir: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"game\.toml: loop: max_steps_per_frame must be between 1 and 30"
    ):
        load_settings(config_dir, ("game.loop.max_steps_per_frame=1000",))


def test_the_step_rate_is_not_a_setting(config_dir: Path) -> None:
    with pytest.raises(ConfigError, match=r"loop\.hz"):
        load_settings(config_dir, ("game.loop.hz=30",))


def test_bad_choice_lists_the_choices(config_dir: Path) -> None:
    with pytest.raises(
        ConfigError, match="'dialogue.ai_mode' must be one of 'async', 'sync', 'off'"
    ):
        load_settings(config_dir, ("game.dialogue.ai_mode=fast",))


def test_ai_config_errors_name_ai_toml(config_dir: Path) -> None:
    prepend(config_dir / "ai.toml", "no_such_setting = 1")
    with pytest.raises(ConfigError, match=r"ai\.toml: unknown key 'no_such_setting'"):
        load_settings(config_dir)


def test_missing_file_and_bad_toml(config_dir: Path) -> None:
    (config_dir / "ai.toml").unlink()
    with pytest.raises(ConfigError, match="ai.toml: config file not found"):
        load_settings(config_dir)
    (config_dir / "ai.toml").write_text("this is = = not toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(config_dir)


def test_overrides_apply_and_bare_words_are_strings(config_dir: Path) -> None:
    settings = load_settings(config_dir, ("game.world.seed=3", "game.headless.scenario=ambush"))
    assert settings.game.world.seed == 3
    assert settings.game.headless.scenario == "ambush"


@pytest.mark.parametrize("bad", ["world.seed=3", "game.world.seed", "=3"])
def test_malformed_overrides_are_refused(config_dir: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="--set"):
        load_settings(config_dir, (bad,))
