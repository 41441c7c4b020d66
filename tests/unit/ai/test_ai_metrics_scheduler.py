"""Percentile maths and the bare scheduler."""

from __future__ import annotations

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
