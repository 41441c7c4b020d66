"""The blind pairs of village lines tell their reader what happened."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from game.sim.cast import load_cast
from tools.train.compare_village_model import (
    LineJudge,
    arm_figures,
    parse_arms,
    score,
    situation,
    write_pairs,
)


def test_a_pair_tells_its_reader_what_flew_and_who_small_talk_is_with() -> None:
    assert situation({"trigger": "hit", "subject": "apple"}) == (
        "hit by an apple the traveller threw"
    )
    assert situation({"trigger": "near_miss", "subject": "crate"}) == "a crate lands close by"
    assert situation({"trigger": "ambient", "listener": "Pip"}) == "small talk with Pip"
    assert situation({"trigger": "hit"}) == "hit by something the traveller threw"


def test_arms_are_read_as_set_options_and_an_empty_arm_is_the_game_as_configured() -> None:
    arms = parse_arms("new=ai.model.adapter=/tmp/x.gguf+ai.generation.seed=3;shipped=")
    assert arms == {
        "new": ("--set", "ai.model.adapter=/tmp/x.gguf", "--set", "ai.generation.seed=3"),
        "shipped": (),
    }
    # One arm is enough when --base plays it again from an earlier commit.
    assert parse_arms("alone=") == {"alone": ()}
    with pytest.raises(SystemExit):
        parse_arms(" ; ")


def test_pairs_of_two_arms_are_scored_arm_by_arm(tmp_path: Path) -> None:
    def bubble(text: str) -> dict[str, object]:
        return {"name": "Marta", "trigger": "hit", "text": text, "origin": "model"}

    games = [
        {"arm": "new", "bubbles": [bubble("Ow, a crate!"), bubble("My arm!")]},
        {"arm": "old", "bubbles": [bubble("Ow, that crate nearly had my hat off.")]},
    ]
    judge = LineJudge(load_cast())
    out = tmp_path / "village_pairs_x"
    write_pairs(games, judge, 5, random.Random(1), out, ("new", "old"))
    key = json.loads((tmp_path / "village_pairs_x_key.json").read_text())
    assert sorted(row["arm"] for row in key) == ["new", "new", "old"]
    assert "Ow, a crate!" in out.with_suffix(".txt").read_text()
    # The reader prefers every model line and rates it good, the template passable.
    answers = tmp_path / "answers.txt"
    answers.write_text(
        "".join(
            f"{row['pair']} {row['model']} "
            + ("good passable" if row["model"] == "A" else "passable good")
            + "\n"
            for row in key
        )
    )
    scored = score(answers, tmp_path / "village_pairs_x_key.json")
    assert scored["model_preferred"] == 3
    assert scored["by_arm"]["new"]["model_preferred"] == 2
    assert scored["by_arm"]["old"]["ratings"] == {
        "model": {"good": 1},
        "template": {"passable": 1},
    }


def test_the_share_in_view_counts_only_the_villagers_the_player_could_see() -> None:
    def bubble(origin: str, dx: float | None) -> dict[str, object]:
        return {"name": "Marta", "trigger": "greet", "text": "Hello.", "origin": origin} | (
            {} if dx is None else {"player_dx": dx}
        )

    bubbles = [bubble("model", 10.0), bubble("template", -300.0), bubble("template", 900.0)]
    bubbles.append(bubble("template", None))  # a log from before the field: not counted
    figures = arm_figures([{"bubbles": bubbles, "report": {}}], LineJudge(load_cast()), 640.0)
    assert figures["model_share"] == 0.25
    assert figures["bubbles_in_view"] == 2
    assert figures["model_share_in_view"] == 0.5
