"""Percentile maths and the bare scheduler."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ai import Handle, Priority
from ai.metrics import summarize
from ai.scheduler import Scheduler, Ticket
from tests.unit.ai.conftest import make_request


@given(st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=200))
def test_percentiles_match_numpy(values: list[float]) -> None:
    summary = summarize(values)
    for q, got in ((50, summary.p50), (95, summary.p95), (99, summary.p99)):
        assert np.isclose(got, np.percentile(values, q), rtol=1e-9, atol=1e-9)
    assert summary.max == max(values)
    assert summary.count == len(values)


def test_empty_summary_is_zero() -> None:
    assert summarize([]).count == 0


def _ticket(n: int, priority: Priority) -> Ticket:
    return Ticket(Handle(n), make_request(f"t{n}", priority), n, 0.0)


def _valued(n: int, priority: Priority, value: float) -> Ticket:
    request = replace(make_request(f"t{n}", priority), value=value)
    return Ticket(Handle(n), request, n, 0.0)


def test_within_a_priority_the_most_valuable_runs_first_then_the_oldest() -> None:
    scheduler = Scheduler(capacity=10)
    low, high, high_later, chat = (
        _valued(1, Priority.PREDICTIVE, 0.5),
        _valued(2, Priority.PREDICTIVE, 3.0),
        _valued(3, Priority.PREDICTIVE, 3.0),
        _valued(4, Priority.PLAYER_CHAT, 0.0),
    )
    for t in (low, high, high_later, chat):
        scheduler.push(t)
    assert [scheduler.pop() for _ in range(5)] == [chat, high, high_later, low, None]


def test_a_full_queue_evicts_the_least_valuable_of_the_lowest_priority() -> None:
    scheduler = Scheduler(capacity=3)
    keep, drop, keep_too = (
        _valued(1, Priority.AMBIENT, 2.0),
        _valued(2, Priority.AMBIENT, 0.1),
        _valued(3, Priority.AMBIENT, 2.0),
    )
    for t in (keep, drop, keep_too):
        scheduler.push(t)
    assert scheduler.push(_valued(4, Priority.REACTIVE, 1.0)) is drop
    assert scheduler.find("t2") is None


def test_scheduler_pop_remove_and_promote() -> None:
    scheduler = Scheduler(capacity=10)
    a, b, c = (
        _ticket(1, Priority.AMBIENT),
        _ticket(2, Priority.AMBIENT),
        _ticket(3, Priority.REACTIVE),
    )
    for t in (a, b, c):
        assert scheduler.push(t) is None
    assert scheduler.find("t2") is b
    scheduler.promote(b, Priority.PLAYER_CHAT)
    assert scheduler.remove(a)
    assert not scheduler.remove(a)
    assert scheduler.find("t1") is None
    assert [scheduler.pop(), scheduler.pop(), scheduler.pop()] == [b, c, None]
    assert scheduler.depth == 0
