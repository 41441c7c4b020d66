"""Config validation and the shipped config/ai.toml."""

from __future__ import annotations

import dataclasses
import tomllib
import typing
from pathlib import Path
from typing import Any

import pytest

from ai import AiConfig, GenerationConfig, HygieneConfig, ModelConfig, Priority, SchedulerConfig

TOML_PATH = Path(__file__).resolve().parents[3] / "config" / "ai.toml"
ALLOWED = (int, float, bool, str)


def _build(cls: type[Any], data: dict[str, Any]) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        value = data[f.name]
        if dataclasses.is_dataclass(hints[f.name]):
            value = _build(hints[f.name], value)
        elif isinstance(value, list):
            value = tuple(value)
        kwargs[f.name] = value
    return cls(**kwargs)


def test_toml_has_every_field_and_matches_defaults() -> None:
    data = tomllib.loads(TOML_PATH.read_text(encoding="utf-8"))
    assert _build(AiConfig, data) == AiConfig()
    for section in dataclasses.fields(AiConfig):
        names = {f.name for f in dataclasses.fields(getattr(AiConfig(), section.name))}
        assert set(data[section.name]) == names


def test_field_types_are_loader_friendly() -> None:
    for section in dataclasses.fields(AiConfig):
        cls = typing.get_type_hints(AiConfig)[section.name]
        for name, hint in typing.get_type_hints(cls).items():
            origin = typing.get_origin(hint)
            if origin is tuple:
                assert typing.get_args(hint) == (str, ...), name
            elif origin is typing.Literal:
                assert all(isinstance(a, str) for a in typing.get_args(hint)), name
            else:
                assert hint in ALLOWED, name


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: ModelConfig(n_threads=0), "n_threads"),
        (lambda: ModelConfig(backend="gpu"), "backend"),  # type: ignore[arg-type]
        (lambda: GenerationConfig(top_p=0.0), "top_p"),
        (lambda: GenerationConfig(stop=("",)), "stop"),
        (lambda: GenerationConfig(on_topic=("greeting",)), "on_topic"),
        (lambda: SchedulerConfig(queue_capacity=0), "queue_capacity"),
        (
            lambda: SchedulerConfig(deadline_reactive_s=5.0, timeout_reactive_s=1.0),
            "timeout_reactive",
        ),
        (lambda: HygieneConfig(max_chars=2), "max_chars"),
        (lambda: HygieneConfig(blocklist=(" ",)), "blocklist"),
    ],
)
def test_out_of_range_values_raise(factory: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        factory()


def test_budget_per_priority() -> None:
    config = SchedulerConfig()
    assert config.budget(Priority.PLAYER_CHAT) == (2.0, 8.0)
    assert config.budget(Priority.AMBIENT) == (6.0, 10.0)
