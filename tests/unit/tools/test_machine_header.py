"""The machine header of the bench JSON, and reading the load from JSON written before it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ai import ModelConfig
from tools.bench.machine import machine_header, model_sha256, recorded_load

KEYS = {
    "version",
    "cpu",
    "cores",
    "platform",
    "python",
    "llama_cpp_python",
    "model_sha256",
    "commit",
    "load_average_start",
    "load_average_end",
}


def test_the_header_has_every_key_and_round_trips_through_json() -> None:
    header = machine_header((0.5, 0.25, 0.125), model=None, load_at_end=(1.0, 0.5, 0.25))
    assert set(header) == KEYS
    assert json.loads(json.dumps(header)) == header
    assert header["load_average_start"] == [0.5, 0.25, 0.125]
    assert header["load_average_end"] == [1.0, 0.5, 0.25]
    assert header["model_sha256"] == ""
    assert isinstance(header["cores"], int)
    assert header["cores"] >= 1


def test_the_end_load_is_taken_when_the_header_is_built() -> None:
    header = machine_header((), model=None)
    end = header["load_average_end"]
    assert isinstance(end, list)
    assert len(end) == 3


def test_no_model_file_gives_an_empty_hash(tmp_path: Path) -> None:
    assert model_sha256(None) == ""
    assert model_sha256(ModelConfig(backend="scripted")) == ""
    missing = tmp_path / "missing.gguf"
    assert model_sha256(ModelConfig(model_path=str(missing))) == ""


@pytest.mark.parametrize(
    ("document", "start", "end"),
    [
        (
            {"machine": machine_header((1.0, 2.0, 3.0), model=None, load_at_end=(4.0, 5.0, 6.0))},
            (1.0, 2.0, 3.0),
            (4.0, 5.0, 6.0),
        ),
        ({"loadavg_before": [1.0, 2.0, 3.0], "loadavg_after": [4.0]}, (1.0, 2.0, 3.0), (4.0,)),
        ({"load_average_at_start": [1.0], "load_average_at_end": [2.0]}, (1.0,), (2.0,)),
        ({"loadavg_at_start": [1.0], "loadavg_at_end": [2.0]}, (1.0,), (2.0,)),
        ({"machine": {"load_average_start": ["0.55", "0.93", "1.54"]}}, (0.55, 0.93, 1.54), ()),
        ({"settings": {"loadavg": [1.5, 1.0, 0.5]}}, (), (1.5, 1.0, 0.5)),
        ({"load_average": [0.25, 0.5, 0.75]}, (), (0.25, 0.5, 0.75)),
        ({"loadavg_1min": [0.97, 1.03]}, (0.97,), (1.03,)),
        ({"load_average": {"min_1m": 0.1}}, (), ()),
        ({"runs": []}, (), ()),
    ],
)
def test_the_load_is_read_from_the_header_and_from_the_older_keys(
    document: dict[str, object], start: tuple[float, ...], end: tuple[float, ...]
) -> None:
    assert recorded_load(document) == (start, end)
