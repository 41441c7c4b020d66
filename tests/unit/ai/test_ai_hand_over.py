"""A runtime that stops without waiting, and queued requests moved from one runtime to another."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace

from ai import (
    AiRuntime,
    LineCompleted,
    Priority,
    RequestCancelled,
    RequestDropped,
    RuntimeConfig,
    ScriptedBackend,
    ScriptedConfig,
    ScriptedHang,
)
from ai.scheduler import RateLimit

from .conftest import EventLog, fast_config, make_request


def test_retire_returns_at_once_and_the_worker_closes_its_backend(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    backend = ScriptedBackend(ScriptedConfig(0.0, 0.001, 0.001), {"hang": ScriptedHang(30.0)})
    runtime = make_runtime(fast_config(), backend)
    log = EventLog(runtime)
    log.until(lambda: runtime.load_progress().state == "ready")
    running = runtime.submit(make_request("a", situation="hang"))
    queued = runtime.submit(make_request("b"))
    log.until(lambda: runtime.in_flight == 1)
    begin = time.perf_counter()
    runtime.retire()
    assert time.perf_counter() - begin < 0.05
    log.until(lambda: runtime.stopped)
    assert backend.closed
    assert [(type(e), e.handle) for e in log.of(RequestCancelled)] == [(RequestCancelled, running)]
    assert [e.handle for e in log.of(RequestDropped)] == [queued]


def test_take_over_moves_only_queued_requests_and_keeps_their_budget(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    timings = ScriptedConfig(0.0, 0.001, 0.001)
    config = replace(fast_config(), scheduler=replace(fast_config().scheduler, rate_limit_s=60.0))
    old = make_runtime(config, ScriptedBackend(timings, {"hang": ScriptedHang(30.0)}))
    new = make_runtime(config, ScriptedBackend(timings))
    old_log, new_log = EventLog(old), EventLog(new)
    old_log.until(lambda: old.load_progress().state == "ready")
    new_log.until(lambda: new.load_progress().state == "ready")
    running = old.submit(make_request("run", situation="hang", npc_id=1))
    old_log.until(lambda: old.in_flight == 1)
    # Two from one villager at one priority: the second passed old's rate limit only
    # because it was a chat line; the moved copies are not limited again.
    first = old.submit(make_request("q1", npc_id=2))
    second = old.submit(make_request("q2", npc_id=2, priority=Priority.PLAYER_CHAT))
    moved = new.take_over(old, [running, first, second])
    assert sorted(moved) == [first.id, second.id]
    new_log.until(lambda: len(new_log.of(LineCompleted)) == 2)
    assert not new_log.of(RequestDropped)
    old_log.pump()
    # The old runtime says nothing of the moved requests, and still runs the first.
    assert {e.handle for e in old_log.events} <= {running}
    assert old.in_flight == 1
    stats = [e.stats for e in new_log.of(LineCompleted)]  # type: ignore[attr-defined]
    assert all(s.queue_wait_s >= 0.0 for s in stats)


def test_a_successor_puts_the_switch_interval_back(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    before = sys.getswitchinterval()
    config = replace(fast_config(), runtime=RuntimeConfig(switch_interval_s=0.0007))
    old = make_runtime(config, ScriptedBackend(ScriptedConfig(0.0, 0.001, 0.001)))
    new = make_runtime(config, ScriptedBackend(ScriptedConfig(0.0, 0.001, 0.001)))
    old.retire(successor=new)
    EventLog(old).until(lambda: old.stopped)
    old.shutdown()
    assert sys.getswitchinterval() == 0.0007
    new.shutdown()
    assert sys.getswitchinterval() == before


def test_rate_limit_spares_chat_and_choices() -> None:
    limit = RateLimit(1.0)
    ambient = make_request("a", Priority.AMBIENT, npc_id=3)
    assert limit.allows(ambient, 10.0)
    assert not limit.allows(ambient, 10.5)
    assert limit.allows(ambient, 11.1)
    chat = make_request("c", Priority.PLAYER_CHAT, npc_id=3)
    assert limit.allows(chat, 11.2)
    assert limit.allows(chat, 11.3)
