"""The blind runs' ratings, gathered line by line for the quality score."""

from __future__ import annotations

import json
from pathlib import Path

from tools.eval.line_quality import rated_lines

PAIRS = """1. Brann: hit by a ball the traveller threw (remembers: nothing yet)
   A: You want to lose that arm?
   B: Ouch, ball of a hammer.

2. Odo: the traveller walks up (remembers: nothing yet)
   A: Good day. My goat loves apples.
   B: Fine day for it, traveller.
"""


def test_each_reader_rates_the_model_line_the_key_names(tmp_path: Path) -> None:
    (tmp_path / "village_pairs_x.txt").write_text(PAIRS)
    key = [
        {"pair": 1, "model": "B", "trigger": "hit"},
        {"pair": 2, "model": "A", "trigger": "greet"},
    ]
    (tmp_path / "village_pairs_x_key.json").write_text(json.dumps(key))
    (tmp_path / "village_pairs_x_answers_reader1.txt").write_text(
        "1 A good bad\n2 B passable good\n"
    )
    (tmp_path / "village_pairs_x_answers_reader2.txt").write_text("1 B good good\n")
    rows = rated_lines(tmp_path)
    assert [(r["line"], r["rating"], r["trigger"], r["who"]) for r in rows] == [
        ("Ouch, ball of a hammer.", "bad", "hit", "Brann"),
        ("Good day. My goat loves apples.", "passable", "greet", "Odo"),
        ("Ouch, ball of a hammer.", "good", "hit", "Brann"),
    ]
