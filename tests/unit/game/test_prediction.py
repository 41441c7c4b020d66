"""Time to contact, and the predictor's confidence and withdrawal."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.dialogue.prediction import EncounterPredictor, time_to_contact
from game.sim.status import Motion


def test_head_on_contact_time() -> None:
    assert time_to_contact(-300.0, 0.0, 100.0, 0.0, 100.0) == pytest.approx(2.0)


def test_inside_the_radius_is_zero() -> None:
    assert time_to_contact(50.0, 0.0, 0.0, 0.0, 100.0) == 0.0


def test_moving_apart_or_passing_by_is_none() -> None:
    assert time_to_contact(-300.0, 0.0, -100.0, 0.0, 100.0) is None
    assert time_to_contact(-300.0, 150.0, 100.0, 0.0, 100.0) is None
    assert time_to_contact(-300.0, 0.0, 0.0, 0.0, 100.0) is None


@given(
    x=st.floats(-2000, 2000),
    y=st.floats(-2000, 2000),
    vx=st.floats(-500, 500),
    vy=st.floats(-500, 500),
    r=st.floats(1, 300),
)
def test_contact_point_lies_on_the_circle(
    x: float, y: float, vx: float, vy: float, r: float
) -> None:
    t = time_to_contact(x, y, vx, vy, r)
    if t is None or t == 0.0:
        return
    assert t > 0
    px, py = x + vx * t, y + vy * t
    assert (px * px + py * py) ** 0.5 == pytest.approx(r, rel=1e-6, abs=1e-6)


def walk(predictor: EncounterPredictor, x: float, vx: float, ticks: int) -> list[tuple[int, bool]]:
    changes = []
    for _ in range(ticks):
        changes += predictor.update(Motion(0, x, 0.0, vx, 0.0), [Motion(9, 0.0, 0.0, 0.0, 0.0)])
        x += vx / 60
    return [(c.npc_id, c.started) for c in changes]


def test_prediction_needs_a_few_ticks_of_confidence() -> None:
    predictor = EncounterPredictor(talk_radius=100.0, horizon_s=1.5, confirm_updates=4)
    assert walk(predictor, -250.0, 200.0, 3) == []
    assert walk(predictor, -240.0, 200.0, 1) == [(9, True)]
    assert 9 in predictor.active


def test_far_away_or_slow_is_not_predicted() -> None:
    predictor = EncounterPredictor(talk_radius=100.0, horizon_s=1.5)
    assert walk(predictor, -2000.0, 200.0, 10) == []
    assert walk(predictor, -300.0, 10.0, 10) == []


def test_veering_away_withdraws_the_prediction() -> None:
    predictor = EncounterPredictor(talk_radius=100.0, confirm_updates=2, withdraw_updates=3)
    walk(predictor, -250.0, 200.0, 2)
    assert 9 in predictor.active
    assert walk(predictor, -240.0, -200.0, 3) == [(9, False)]
    assert 9 not in predictor.active


def test_stopping_just_short_keeps_the_prediction() -> None:
    predictor = EncounterPredictor(talk_radius=100.0, confirm_updates=2, withdraw_updates=3)
    walk(predictor, -250.0, 200.0, 2)
    assert walk(predictor, -180.0, 0.0, 20) == []
    assert 9 in predictor.active
