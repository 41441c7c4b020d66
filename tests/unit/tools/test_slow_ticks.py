"""The slow-tick summary says which of the slowest ticks submitted a request."""

from __future__ import annotations

import pytest

from tools.bench.slow_ticks import pooled, summary


def test_the_slowest_ticks_are_counted_by_whether_they_submitted() -> None:
    # 200 ticks: 196 quiet ones at 0.5 ms, 4 with a submit at 1.5 ms (0.6 of it the
    # dialogue's: 0.2 building the prompt, 0.1 submitting).
    quiet = [[0.5, 0.1, 0, 0.0, 0.0]] * 196
    asked = [[1.5, 0.6, 1, 0.2, 0.1]] * 4
    result = summary(quiet + asked)

    assert result["slowest"] == 2
    assert result["slowest_with_a_submit"] == 2
    assert result["ticks_with_a_submit"] == 4
    assert result["share_of_ticks_with_a_submit"] == pytest.approx(0.02)
    assert result["mean_tick_ms_with_a_submit"] == pytest.approx(1.5)
    assert result["tick_ms_p99_without_a_submit"] == pytest.approx(0.5)
    split = result["in_ticks_with_a_submit_ms"]
    assert split["prompt_building"] == pytest.approx(0.2)
    assert split["outside_the_dialogue"] == pytest.approx(0.9)


def test_a_slow_tick_without_a_submit_is_not_counted_as_one() -> None:
    rows = [[0.5, 0.1, 0, 0.0, 0.0]] * 99 + [[3.0, 0.1, 0, 0.0, 0.0]]
    result = summary(rows)
    assert result["slowest_with_a_submit"] == 0
    assert result["mean_tick_ms_with_a_submit"] is None


def test_the_dialogues_time_is_split_by_what_the_tick_did_besides() -> None:
    # [tick_ms, ai_ms, submits, build_ms, submit_ms, builds, updated]
    rows = (
        [[0.5, 0.1, 0, 0.0, 0.0, 0, 0]] * 60
        + [[0.6, 0.2, 0, 0.0, 0.0, 0, 1]] * 30
        + [[0.9, 0.4, 1, 0.2, 0.1, 1, 0]] * 9
        + [[1.2, 0.6, 1, 0.2, 0.1, 1, 1]]
    )
    kinds = summary(rows)["dialogue_ms_by_tick"]
    assert {name: kind["ticks"] for name, kind in kinds.items()} == {
        "update_and_build": 1,
        "update_only": 30,
        "build_only": 9,
        "neither": 60,
    }
    assert kinds["update_only"]["mean"] == pytest.approx(0.2)
    assert kinds["build_only"]["p99"] == pytest.approx(0.4)


def test_games_are_pooled_tick_by_tick() -> None:
    quick = [[0.5, 0.1, 0, 0.0, 0.0, 0, 0]] * 99 + [[0.9, 0.3, 0, 0.0, 0.0, 0, 0]]
    slow = [[1.0, 0.2, 0, 0.0, 0.0, 0, 0]] * 100
    figures = pooled([quick, slow])
    assert figures["ticks"] == 200
    # Half the ticks are the slow game's: its time is the pooled p99, not the mean of two.
    assert figures["tick_ms_p99"] == pytest.approx(1.0)
    assert figures["dialogue_ms_p99"] == pytest.approx(0.2)
    assert pooled([quick])["tick_ms_p99"] == pytest.approx(0.504)
