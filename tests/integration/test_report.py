"""The headless report reads back as the typed report it was written from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from game.__main__ import main
from game.headless.report import REPORT_VERSION, load_report, report_json


def _run(tmp_path: Path, *flags: str) -> Path:
    path = tmp_path / "report.json"
    argv = ["--headless", "--unpaced", "--ticks", "120", "--log", "WARNING", "--report", str(path)]
    assert main([*argv, *flags]) == 0
    return path


@pytest.mark.parametrize(
    "flags",
    [("--ai", "off", "--samples"), ("--backend", "scripted", "--save", "save.sqlite3")],
    ids=["templates", "scripted-model"],
)
def test_a_written_report_loads_and_writes_back_the_same(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    flags = tuple(str(tmp_path / f) if f.endswith(".sqlite3") else f for f in flags)
    path = _run(tmp_path, *flags)
    written = json.loads(path.read_text())
    report = load_report(path)

    assert report.version == written["version"] == REPORT_VERSION
    assert report.ticks == 120
    assert report_json(report) == written
    assert list(report_json(report)) == list(written)
    assert (report.ai.model is None) == ("--ai" in flags)
    assert (report.save is None) == ("--save" not in flags)
    assert (report.samples is None) == ("--samples" not in flags)


def test_a_report_of_another_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"ticks": 600}))
    with pytest.raises(ValueError, match="not a version 1 report"):
        load_report(path)
