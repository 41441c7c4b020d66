"""The blind pairs of village lines tell their reader what happened."""

from __future__ import annotations

from tools.train.compare_village_model import situation


def test_a_pair_tells_its_reader_what_flew_and_who_small_talk_is_with() -> None:
    assert situation({"trigger": "hit", "subject": "apple"}) == (
        "hit by an apple the traveller threw"
    )
    assert situation({"trigger": "near_miss", "subject": "crate"}) == "a crate lands close by"
    assert situation({"trigger": "ambient", "listener": "Pip"}) == "small talk with Pip"
    assert situation({"trigger": "hit"}) == "hit by something the traveller threw"
