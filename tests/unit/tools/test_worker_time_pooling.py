"""The worker-time benchmark pools every game's ticks before it takes an arm's p99."""

from __future__ import annotations

import pytest

from tools.bench.worker_time import pooled_tick_p99


def test_each_arm_p99_is_taken_over_the_pooled_ticks_of_its_games() -> None:
    # Alone, the second village game's value arm has a p99 of 3 ms; pooled with the
    # first, the 1 in 100 slowest of all 400 ticks decide, and those are the first's.
    quick, slow = [1.0] * 196 + [2.0] * 4, [1.0] * 190 + [9.0] * 10
    ticks = {
        "village:3": {"queue": quick, "value": slow},
        "village:7": {"queue": quick, "value": [1.0] * 196 + [3.0] * 4},
        "crowd:31": {"queue": [5.0] * 200, "value": [5.0] * 200},
    }
    pooled = pooled_tick_p99(ticks)

    village = pooled["village"]
    assert village["games"] == 2
    assert village["queue"] == pytest.approx(2.0)
    assert village["value"] == pytest.approx(9.0)
    assert village["ratio"] == pytest.approx(4.5)
    assert pooled["all"]["games"] == 3
    assert pooled["all"]["queue"] == pytest.approx(5.0)


def test_a_group_with_no_game_yet_is_left_out() -> None:
    pooled = pooled_tick_p99({"crowd:31": {"queue": [1.0, 2.0], "value": [1.0, 2.0]}})
    assert "village" not in pooled
    assert pooled["all"]["ratio"] == pytest.approx(1.0)


def test_a_base_arm_is_pooled_and_value_is_set_against_it() -> None:
    ticks = {
        "village:3": {
            "queue": [1.0] * 200,
            "value": [1.0] * 196 + [2.0] * 4,
            "value@abc123": [1.0] * 196 + [4.0] * 4,
        },
    }
    village = pooled_tick_p99(ticks, ("queue", "value", "value@abc123"))["village"]
    assert village["value@abc123"] == pytest.approx(4.0)
    assert village["ratio"] == pytest.approx(2.0)
    assert village["base_ratio"] == pytest.approx(0.5)
