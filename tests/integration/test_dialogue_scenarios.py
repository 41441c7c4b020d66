"""Headless bot runs with the scripted model, checked from their report and bubble log.

Each scenario runs once per module, paced at the loop's rate so the scripted model sees
real time as it would behind a window, through the same entry point a player uses. The
bounds are generous: they catch a broken feature, not a slow machine.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from game.__main__ import main
from tools.eval.bubble_audit import audit

Run = tuple[dict[str, Any], Path]

# Shorter than the default where a scenario shows its point early; each tick is real time.
TICKS = {"village": 600, "ambush": 360, "crowd": 300}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Run]:
    """Run a scenario on the scripted backend (once per module); return report and log."""
    runs: dict[str, Run] = {}

    def run(name: str) -> Run:
        if name not in runs:
            folder = tmp_path_factory.mktemp(name)
            report, log = folder / "report.json", folder / "bubbles.jsonl"
            argv = [
                "--headless",
                "--backend",
                "scripted",
                "--scenario",
                name,
                "--ticks",
                str(TICKS[name]),
                "--bubble-log",
                str(log),
                "--report",
                str(report),
                "--log",
                "WARNING",
            ]
            assert main(argv) == 0
            runs[name] = (json.loads(report.read_text()), log)
        return runs[name]

    return run


def test_village_greetings_are_prepared_ahead_and_shown_on_time(
    scenario: Callable[[str], Run],
) -> None:
    report, log = scenario("village")
    ai = report["ai"]
    assert report["ticks"] == TICKS["village"]
    assert ai["load"] == "ready"
    predictive = ai["predictive"]
    assert predictive["issued"] >= 3
    assert predictive["used"] / predictive["issued"] >= 0.3
    assert ai["encounters_shown"] >= 3
    assert ai["greetings_within_1_tick"] / ai["encounters_shown"] > 0.5
    result = audit(log)
    assert result["violations"] == 0, result["by_rule"]
    assert result["checked"] >= 10
    farewells = predictive.get("farewells", {}).get("used", 0)
    assert result["origins"].get("prepared", 0) == predictive["used"] + farewells
    assert result["origins"].get("model", 0) > 0


def test_ambush_drops_stale_lines_and_shows_none(scenario: Callable[[str], Run]) -> None:
    report, log = scenario("ambush")
    ai = report["ai"]
    assert sum(ai["stale_dropped"].values()) > 0
    # The bot turns away just short of talk range: some prepared greetings are never
    # used (withdrawn, dropped, or still waiting for the next approach at the end).
    predictive = ai["predictive"]
    assert predictive["issued"] > predictive["used"]
    result = audit(log)
    assert result["violations"] == 0, result["by_rule"]
    assert result["checked"] > 0


def test_crowd_of_thirty_runs_without_a_stale_bubble(scenario: Callable[[str], Run]) -> None:
    report, log = scenario("crowd")
    assert report["npcs"] >= 30
    assert report["ticks"] == TICKS["crowd"]
    assert report["lines"]["shown"]
    result = audit(log)
    assert result["violations"] == 0, result["by_rule"]
    assert result["bubbles"] > 0


def test_bubble_log_has_one_record_per_shown_line(
    scenario: Callable[[str], Run],
) -> None:
    report, log = scenario("village")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(records) == sum(report["lines"]["shown"].values())
    assert all(r["tick"] >= r["asked_tick"] for r in records)
    assert all(r["text"] for r in records)
    # A line about a prop names its kind, so a reader of the log knows what flew.
    assert {r["subject"] for r in records} <= {"", "crate", "barrel", "ball", "apple"}
    # Where the speaker stood against the player, so a reader can tell a line in view.
    assert all(isinstance(r["player_dx"], float) for r in records)
    # A greeting is said to a player close by.
    assert all(abs(r["player_dx"]) < 640 for r in records if r["trigger"] == "greet")


# -- the audit itself ---------------------------------------------------------------------


def clean_record() -> dict[str, Any]:
    """A bubble log record, as the dialogue writes it, that breaks no rule."""
    return {
        "tick": 130,
        "npc_id": 2,
        "trigger": "hit",
        "asked_tick": 120,
        "origin": "model",
        "text": "Ow, that crate!",
        "snapshot": {
            "tick": 120,
            "npc_id": 2,
            "epoch": 4,
            "state": "react",
            "trigger": "hit",
            "listener_id": 1,
            "distance": 100.0,
            "refs": [{"id": 40, "x": 500.0, "y": 20.0}],
            "predictive": False,
        },
        "live": {
            "tick": 130,
            "epoch": 4,
            "conscious": True,
            "can_talk": True,
            "listener_distance": 150.0,
            "refs": {"40": [520.0, 20.0]},
            "talk_radius": 140.0,
            "ttl_ticks": 180,
            "last_disruption_tick": -1,
        },
    }


def _epoch_changed(r: dict[str, Any]) -> None:
    r["live"]["epoch"] = 5


def _disrupted_since_prepared(r: dict[str, Any]) -> None:
    r["snapshot"]["predictive"] = True
    r["snapshot"]["trigger"] = r["trigger"] = "greet"
    r["live"]["epoch"] = 6  # expected for a prepared line: not a violation by itself
    r["live"]["listener_distance"] = 120.0
    r["live"]["last_disruption_tick"] = 125


def _reaction_disrupted_after(r: dict[str, Any]) -> None:
    r["live"]["epoch"] = 5
    r["live"]["state"] = "routine"  # over, so the reaction may still be said, but...
    r["live"]["last_disruption_tick"] = 125  # ...something new happened to them since


def _out_of_range(r: dict[str, Any]) -> None:
    r["live"]["listener_distance"] = 140.0 * 3.5 + 1.0


def _listener_gone(r: dict[str, Any]) -> None:
    r["live"]["listener_distance"] = None


def _too_old(r: dict[str, Any]) -> None:
    r["tick"] = r["live"]["tick"] = 120 + 181


def _ref_gone(r: dict[str, Any]) -> None:
    r["live"]["refs"] = {"40": None}


def _ref_moved(r: dict[str, Any]) -> None:
    r["live"]["refs"] = {"40": [1500.0, 20.0]}


def _speaker_down(r: dict[str, Any]) -> None:
    r["live"]["conscious"] = False


def _speaker_busy(r: dict[str, Any]) -> None:
    r["live"]["can_talk"] = False


BREAKS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "epoch changed": (_epoch_changed, "epoch_changed"),
    "disrupted since prepared": (_disrupted_since_prepared, "disrupted_since_prepared"),
    "reaction disrupted since asked": (_reaction_disrupted_after, "disrupted_since_asked"),
    "out of range": (_out_of_range, "out_of_range"),
    "listener gone": (_listener_gone, "out_of_range"),
    "too old": (_too_old, "too_old"),
    "ref gone": (_ref_gone, "ref_gone"),
    "ref moved": (_ref_moved, "ref_moved"),
    "speaker down": (_speaker_down, "speaker_cannot_talk"),
    "speaker busy": (_speaker_busy, "speaker_cannot_talk"),
}


def write_log(path: Path, *records: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_audit_passes_a_clean_record_and_skips_template_lines(tmp_path: Path) -> None:
    template = {**clean_record(), "origin": "template", "snapshot": None, "live": None}
    result = audit(write_log(tmp_path / "log.jsonl", clean_record(), template))
    assert result == {
        "bubbles": 2,
        "checked": 1,
        "violations": 0,
        "by_rule": {},
        "origins": {"model": 1, "template": 1},
        "replacement_chars": 0,
    }


def test_audit_lets_a_reaction_outlive_its_state_but_not_a_talk(tmp_path: Path) -> None:
    over = clean_record()
    over["live"].update(epoch=5, state="routine")
    talking = clean_record()
    talking["live"].update(epoch=5, state="talk")
    result = audit(write_log(tmp_path / "log.jsonl", over, talking))
    assert result["by_rule"] == {"epoch_changed": 1}


@pytest.mark.parametrize("broken", list(BREAKS))
def test_audit_flags_a_bubble_that_breaks_a_rule(tmp_path: Path, broken: str) -> None:
    breaks, rule = BREAKS[broken]
    record = clean_record()
    breaks(record)
    result = audit(write_log(tmp_path / "log.jsonl", clean_record(), record))
    assert result["violations"] == 1
    assert result["by_rule"] == {rule: 1}
