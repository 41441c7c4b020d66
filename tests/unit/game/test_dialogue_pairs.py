"""Blind pairs from the dialogue evaluation: one reader judges two settings in one sitting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tools.eval.dialogue as dialogue_eval


def _record(situation: int, npc: str, text: str, origin: str = "model") -> dict[str, Any]:
    return {"id": situation, "npc": npc, "trigger": "hit", "subject": "crate", "text": text,
            "origin": origin}  # fmt: skip


def _report() -> dict[str, Any]:
    a = [_record(n, "baker", f"setting A line {n}") for n in range(8)]
    b = [_record(n, "baker", f"setting B line {n}") for n in range(8)]
    b[3]["origin"] = "template"  # situation 3 is not a model line in B: never paired
    return {"arms": {"a": {"records": a}, "b": {"records": b}}}


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(dialogue_eval, "BENCH", tmp_path)
    return tmp_path


def test_both_settings_meet_the_same_situations_and_template(bench: Path) -> None:
    dialogue_eval.write_pairs(_report(), harness_seed=7, count=5)
    key = json.loads((bench / "dialogue_pairs_key.json").read_text())
    text = (bench / "dialogue_pairs.md").read_text()
    assert len(key) == 10
    assert sorted(entry["setting"] for entry in key.values()) == ["a"] * 5 + ["b"] * 5
    assert "line 3" not in text
    pairs = text.split("\n\n")[2:]
    by_situation: dict[str, list[str]] = {}
    for n, entry in key.items():
        block = next(p for p in pairs if p.startswith(f"{n}. "))
        a_side, b_side = (line.split(": ", 1)[1] for line in block.splitlines()[1:3])
        model, template = (a_side, b_side) if entry["model"] == "A" else (b_side, a_side)
        assert model.startswith(f"setting {entry['setting'].upper()} line")
        by_situation.setdefault(model.rsplit(" ", 1)[1], []).append(template)
    assert len(by_situation) == 5
    assert all(len(set(templates)) == 1 and len(templates) == 2
               for templates in by_situation.values())  # fmt: skip


def test_answers_are_scored_per_setting(bench: Path, tmp_path: Path) -> None:
    dialogue_eval.write_pairs(_report(), harness_seed=7, count=5)
    key = json.loads((bench / "dialogue_pairs_key.json").read_text())
    # The reader always picks the model line for setting a, the template for setting b.
    answers = [
        f"{n} {entry['model'] if entry['setting'] == 'a' else 'AB'.replace(entry['model'], '')}"
        for n, entry in key.items()
    ]
    path = tmp_path / "answers.txt"
    path.write_text("\n".join(answers) + "\n")
    result = dialogue_eval.score_answers(path)
    assert result["answered"] == 10
    assert result["model_preferred"] == 5
    assert result["by_setting"]["a"] == {"answered": 5, "model_preferred": 5, "model_share": 1.0}
    assert result["by_setting"]["b"]["model_share"] == 0.0


def test_a_key_from_one_setting_still_scores(bench: Path, tmp_path: Path) -> None:
    (bench / "dialogue_pairs_key.json").write_text(json.dumps({"1": "A", "2": "B"}))
    path = tmp_path / "answers.txt"
    path.write_text("1 A\n2 A\n")
    result = dialogue_eval.score_answers(path)
    assert result["model_preferred"] == 1
    assert result["by_setting"]["default"]["model_share"] == 0.5
