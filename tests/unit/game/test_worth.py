"""The worth of a line: who sees it, when, and what it costs the worker."""

from __future__ import annotations

import pytest

from game.dialogue.worth import (
    SHED_BELOW,
    WEIGHTS,
    CostModel,
    Moment,
    Sight,
    chance_shown,
    urgency,
    value,
)
from game.sim.events import Trigger

ON = Sight(on_screen=True, distance=100.0, view_half_width=640.0)
OFF = Sight(on_screen=False, distance=2000.0, view_half_width=640.0)
NOW = Moment(wait_s=0.2, window_s=1.5)


def test_a_chat_reply_is_always_worth_writing() -> None:
    assert chance_shown(Trigger.CHAT, OFF, Moment(wait_s=9.0, window_s=1.0)) == 1.0


@pytest.mark.parametrize("trigger", [t for t in Trigger if t is not Trigger.CHAT])
def test_nobody_sees_a_line_off_screen(trigger: Trigger) -> None:
    assert chance_shown(trigger, OFF, NOW) == 0.0


def test_a_line_that_would_start_after_its_moment_is_shed() -> None:
    assert chance_shown(Trigger.HIT, ON, Moment(wait_s=2.0, window_s=0.8)) == 0.0
    assert chance_shown(Trigger.HIT, ON, Moment(wait_s=0.5, window_s=0.8)) > SHED_BELOW


def test_a_prediction_is_as_good_as_the_heading_and_its_time_to_live() -> None:
    heading = chance_shown(Trigger.GREET, ON, Moment(0.1, 3.0, eta_s=1.0, ttl_s=5.0))
    drifting = chance_shown(
        Trigger.GREET, ON, Moment(0.1, 3.0, eta_s=1.0, ttl_s=5.0, heading=False)
    )
    late = chance_shown(Trigger.GREET, ON, Moment(0.1, 3.0, eta_s=10.0, ttl_s=5.0))
    assert heading > drifting > 0.0
    assert late == pytest.approx(heading / 2)


def test_near_chatter_is_more_likely_read_than_far() -> None:
    near = chance_shown(Trigger.AMBIENT, ON, NOW)
    far = chance_shown(Trigger.AMBIENT, Sight(True, 600.0, 640.0), NOW)
    assert near > far > SHED_BELOW


def test_value_orders_chat_then_reactions_then_greetings_then_chatter() -> None:
    cost = CostModel().cost_s()
    order = [Trigger.CHAT, Trigger.HIT, Trigger.GREET, Trigger.AMBIENT]
    values = [value(t, chance_shown(t, ON, NOW), cost) for t in order]
    assert values == sorted(values, reverse=True)
    assert set(WEIGHTS) == set(Trigger)


def test_cost_follows_the_measured_lines() -> None:
    model = CostModel()
    before = model.cost_s()
    assert model.cost_s(draws=2) == 2 * before
    for _ in range(30):
        model.observe(3.0)  # a slower machine than assumed
    assert model.cost_s() == pytest.approx(3.0, rel=0.01)
    model.observe(0.0)  # a line that never ran says nothing
    assert model.cost_s() == pytest.approx(3.0, rel=0.01)


def test_a_goodbye_is_too_fleeting_for_the_model() -> None:
    assert chance_shown(Trigger.FAREWELL, ON, NOW) < SHED_BELOW


def test_a_prediction_that_may_not_be_ready_in_time_comes_after_those_that_will() -> None:
    in_time = chance_shown(Trigger.GREET, ON, Moment(0.5, 4.0, eta_s=3.0, ttl_s=5.0, cost_s=1.2))
    late = chance_shown(Trigger.GREET, ON, Moment(2.5, 4.0, eta_s=3.0, ttl_s=5.0, cost_s=1.2))
    assert in_time > late > SHED_BELOW


def test_the_greeting_needed_first_is_written_first() -> None:
    """A new game: Marta walks up to greet in 0.8 s, Odo is 3 s away, an ambient line is
    running and the first lines are assumed to take 1.2 s. Marta's may be late (her
    chance is halved), yet it goes first: in the other order it is late for certain."""
    wait, cost = 0.6, 1.2
    near = Moment(wait, 4.0, eta_s=0.8, ttl_s=40.0, cost_s=cost)
    far = Moment(wait, 4.0, eta_s=3.0, ttl_s=40.0, cost_s=cost)
    marta, odo = (chance_shown(Trigger.GREET, ON, m) for m in (near, far))
    assert marta < odo  # hers may not be ready in time
    assert value(Trigger.GREET, marta, cost, 0.8) > value(Trigger.GREET, odo, cost, 3.0)
    assert value(Trigger.GREET, marta, cost) < value(Trigger.GREET, odo, cost)  # by worth alone
    assert urgency(0.0) == urgency(0.1)  # "now" has a floor
