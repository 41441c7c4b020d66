"""Config files and flags a player can get wrong: one clear line and exit 2, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ai.config import AiConfig
from game.config.checks import setting_warnings
from game.config.settings import GameConfig, Settings
from tests.robustness.conftest import assert_one_clean_line


def test_latin1_game_toml(run_game, config_copy: Path) -> None:
    path = config_copy / "game.toml"
    path.write_bytes(path.read_bytes() + "# caf\xe9\n".encode("latin-1"))
    assert_one_clean_line(run_game("--config", str(config_copy)), "game.toml", "UTF-8")


def test_binary_ai_toml(run_game, config_copy: Path) -> None:
    (config_copy / "ai.toml").write_bytes(bytes(range(256)) * 4)
    assert_one_clean_line(run_game("--config", str(config_copy)), "ai.toml")


def test_deeply_nested_toml(run_game, config_copy: Path) -> None:
    (config_copy / "game.toml").write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert_one_clean_line(run_game("--config", str(config_copy)), "game.toml", "nested")


def test_deeply_nested_override(run_game) -> None:
    outcome = run_game("--set", "game.world.seed=" + "[" * 100_000 + "]" * 100_000)
    assert_one_clean_line(outcome, "nested")


@pytest.mark.parametrize("value", ["inf", "nan", "-inf"])
def test_infinite_or_nan_budget(run_game, value: str) -> None:
    outcome = run_game("--set", f"ai.scheduler.timeout_player_chat_s={value}")
    assert_one_clean_line(outcome, "timeout_player_chat_s", "finite")


def test_infinite_float_in_file(run_game, config_copy: Path) -> None:
    path = config_copy / "game.toml"
    path.write_text(path.read_text().replace("bubble_s = 4.0", "bubble_s = inf"))
    assert_one_clean_line(run_game("--config", str(config_copy)), "bubble_s", "finite")


def test_unknown_log_level(run_game) -> None:
    assert_one_clean_line(run_game("--log", "LOUD"), "LOUD", "DEBUG")


def test_report_path_is_checked_before_the_run(run_game, tmp_path: Path) -> None:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    assert_one_clean_line(run_game("--report", str(folder)), "a-folder")


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into a read-only folder")
def test_report_path_in_a_read_only_folder(run_game, tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        assert_one_clean_line(run_game("--report", str(folder / "r.json")), "r.json")
    finally:
        folder.chmod(0o700)


def _settings(**model: object) -> Settings:
    from ai.config import ModelConfig

    return Settings(GameConfig(), AiConfig(model=ModelConfig(**model)))  # type: ignore[arg-type]


def test_more_threads_than_cores_minus_one_warns() -> None:
    warnings = setting_warnings(_settings(n_threads=64), cores=2, memory=None)
    assert len(warnings) == 1
    assert "n_threads = 64" in warnings[0]
    assert setting_warnings(_settings(n_threads=1), cores=2, memory=None) == []


def test_context_beyond_free_memory_warns() -> None:
    warnings = setting_warnings(_settings(n_ctx=131072), cores=2, memory=1 << 30)
    assert len(warnings) == 1
    assert "n_ctx = 131072" in warnings[0]
    assert setting_warnings(_settings(n_ctx=2048), cores=2, memory=1 << 30) == []
    # The conversation's own cache counts too: 16k tokens fit once in 700 MB free, not twice.
    tight = 700 << 20
    assert setting_warnings(_settings(n_ctx=16384, conversation_cache=False), 2, tight) == []
    (warning,) = setting_warnings(_settings(n_ctx=16384), cores=2, memory=tight)
    assert "caches" in warning


def test_a_remote_base_model_beside_the_adapter_warns() -> None:
    from dataclasses import replace

    from ai.config import RemoteConfig

    remote = _settings()
    remote = replace(remote, ai=replace(remote.ai, remote=RemoteConfig(enabled=True)))
    (warning,) = setting_warnings(remote, cores=2, memory=None)
    assert 'ai.model.adapter = ""' in warning
    plain = replace(remote, ai=replace(remote.ai, model=replace(remote.ai.model, adapter="")))
    assert setting_warnings(plain, cores=2, memory=None) == []


def test_a_100_kb_model_path_is_one_config_line(run_game) -> None:
    outcome = run_game("--model", "a" * 100_000)
    assert_one_clean_line(outcome, "model_path", "4096")


def test_a_path_with_an_overlong_name_is_a_clear_load_message() -> None:
    from ai.backend import ModelLoadError
    from ai.model import check_gguf_file

    with pytest.raises(ModelLoadError, match="cannot use the model path"):
        check_gguf_file(Path("x" * 300 + ".gguf"))
