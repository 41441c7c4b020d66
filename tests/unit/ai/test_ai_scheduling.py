"""Scheduling rules of AiRuntime, driven by the scripted backend."""

from __future__ import annotations

import time
from collections.abc import Callable

from ai import (
    AiRuntime,
    FallbackUsed,
    LineCompleted,
    Priority,
    RequestCancelled,
    RequestDropped,
    RequestStarted,
    RequestTimedOut,
    ScriptedBackend,
    ScriptedHang,
    TokenStreamed,
)
from tests.unit.ai.conftest import EventLog, FakeClock, fast_config, make_request

LONG_LINE = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen."


def test_requests_start_in_priority_order(make_runtime: Callable[..., AiRuntime]) -> None:
    runtime = make_runtime(fast_config(), ScriptedBackend(fast_config().scripted), start=False)
    handles = {
        priority: runtime.submit(make_request(f"sig-{priority.name}", priority))
        for priority in (
            Priority.AMBIENT,
            Priority.PREDICTIVE,
            Priority.REACTIVE,
            Priority.PLAYER_CHAT,
        )
    }
    runtime.start()
    log = EventLog(runtime)
    log.until(lambda: len(log.of(LineCompleted)) == 4)
    started = [e.request.priority for e in log.of(RequestStarted)]
    assert started == [
        Priority.PLAYER_CHAT,
        Priority.REACTIVE,
        Priority.PREDICTIVE,
        Priority.AMBIENT,
    ]
    assert {e.handle for e in log.of(LineCompleted)} == set(handles.values())


def test_duplicate_signature_returns_existing_handle(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    runtime = make_runtime(fast_config(), ScriptedBackend(fast_config().scripted), start=False)
    first = runtime.submit(make_request("greet-7", Priority.PREDICTIVE))
    second = runtime.submit(make_request("greet-7", Priority.REACTIVE, npc_id=99))
    assert first == second
    assert runtime.queue_depth == 1
    runtime.start()
    log = EventLog(runtime)
    log.until(lambda: bool(log.of(LineCompleted)))
    assert len(log.of(RequestStarted)) == 1
    assert runtime.metrics().merged_duplicates == 1
    # Once finished, the same signature is a fresh request again.
    assert runtime.submit(make_request("greet-7")) != first


def test_full_queue_evicts_lowest_priority_oldest(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    runtime = make_runtime(fast_config(capacity=2), ScriptedBackend(), start=False)
    log = EventLog(runtime)
    a1 = runtime.submit(make_request("a1", Priority.AMBIENT))
    a2 = runtime.submit(make_request("a2", Priority.AMBIENT))
    r1 = runtime.submit(make_request("r1", Priority.REACTIVE))
    log.pump()
    assert [(e.handle, e.reason) for e in log.of(RequestDropped)] == [(a1, "evicted")]
    # Equal priority: the older one makes room for the fresh one.
    a3 = runtime.submit(make_request("a3", Priority.AMBIENT))
    # Higher priority never fails: it evicts the ambient request.
    c1 = runtime.submit(make_request("c1", Priority.PLAYER_CHAT))
    # Strictly lower than everything queued: the newcomer itself is turned away.
    a4 = runtime.submit(make_request("a4", Priority.AMBIENT))
    c2 = runtime.submit(make_request("c2", Priority.PLAYER_CHAT))
    log.pump()
    dropped = [e.handle for e in log.of(RequestDropped)]
    assert dropped == [a1, a2, a3, a4, r1]
    assert all(e.reason == "evicted" for e in log.of(RequestDropped))
    fallbacks = log.of(FallbackUsed)
    assert [e.handle for e in fallbacks] == dropped
    assert all(e.reason == "evicted" for e in fallbacks)
    assert runtime.queue_depth == 2
    runtime.start()
    log.until(lambda: len(log.of(LineCompleted)) == 2)
    assert {e.handle for e in log.of(LineCompleted)} == {c1, c2}
    assert runtime.metrics().max_queue_depth == 2


def test_queued_request_past_deadline_is_dropped_once(
    make_runtime: Callable[..., AiRuntime], clock: FakeClock
) -> None:
    runtime = make_runtime(fast_config(), ScriptedBackend(), clock=clock, start=False)
    log = EventLog(runtime)
    late = runtime.submit(make_request("late", deadline_s=1.0, timeout_s=5.0))
    clock.advance(0.5)
    assert log.pump() == []
    clock.advance(0.6)
    log.pump()
    assert [(e.handle, e.reason) for e in log.of(RequestDropped)] == [(late, "deadline")]
    assert [(e.handle, e.reason) for e in log.of(FallbackUsed)] == [(late, "deadline")]
    assert runtime.queue_depth == 0


def test_worker_skips_request_whose_deadline_passed(
    make_runtime: Callable[..., AiRuntime], clock: FakeClock
) -> None:
    backend = ScriptedBackend(fast_config().scripted)
    runtime = make_runtime(fast_config(), backend, clock=clock, start=False)
    runtime.submit(make_request("late", deadline_s=1.0, timeout_s=50.0))
    on_time = runtime.submit(make_request("on-time", deadline_s=20.0, timeout_s=50.0))
    clock.advance(2.0)
    runtime.start()
    # No poll until the worker is done, so only the worker can drop "late".
    end = time.monotonic() + 5.0
    while (backend.generate_calls < 1 or runtime.in_flight) and time.monotonic() < end:
        time.sleep(0.002)
    assert runtime.queue_depth == 0
    log = EventLog(runtime)
    log.until(lambda: bool(log.of(LineCompleted)))
    assert [e.reason for e in log.of(RequestDropped)] == ["deadline"]
    assert [e.reason for e in log.of(FallbackUsed)] == ["deadline"]
    assert [e.handle for e in log.of(RequestStarted)] == [on_time]
    assert backend.generate_calls == 1


def test_running_request_times_out_and_later_events_are_swallowed(
    make_runtime: Callable[..., AiRuntime], clock: FakeClock
) -> None:
    backend = ScriptedBackend(fast_config().scripted, script={"stuck": ScriptedHang(30.0)})
    runtime = make_runtime(fast_config(), backend, clock=clock)
    log = EventLog(runtime)
    stuck = runtime.submit(make_request("s", situation="stuck", deadline_s=1.0, timeout_s=2.0))
    log.until(lambda: bool(log.of(RequestStarted)))
    clock.advance(2.5)
    log.pump()
    assert [e.handle for e in log.of(RequestTimedOut)] == [stuck]
    assert [(e.handle, e.reason) for e in log.of(FallbackUsed)] == [(stuck, "timeout")]
    # The hang watches the cancel flag, so the worker frees up promptly.
    log.until(lambda: runtime.in_flight == 0)
    log.pump()
    assert not log.of(RequestCancelled)
    assert not log.of(LineCompleted)
    assert runtime.metrics().timed_out == 1


def test_player_chat_preempts_predictive_which_is_requeued(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    config = fast_config(ttft_s=0.01, token_s=0.03)
    backend = ScriptedBackend(config.scripted, script={"walks by": LONG_LINE})
    runtime = make_runtime(config, backend)
    log = EventLog(runtime)
    predicted = runtime.submit(make_request("p", Priority.PREDICTIVE, situation="walks by"))
    log.until(lambda: bool(log.of(TokenStreamed, predicted)))
    chat = runtime.submit(make_request("c", Priority.PLAYER_CHAT, situation="greets you"))
    log.until(lambda: len(log.of(LineCompleted)) == 2)
    completed = [e.handle for e in log.of(LineCompleted)]
    assert completed == [chat, predicted]
    starts = log.of(RequestStarted)
    assert [e.handle for e in starts] == [predicted, chat, predicted]
    # The second start tells how long the stopped run took: at least its first token.
    assert [e.preempted_s > 0.0 for e in starts if isinstance(e, RequestStarted)] == [
        False,
        False,
        True,
    ]
    line = log.of(LineCompleted, predicted)[0]
    assert isinstance(line, LineCompleted)
    assert line.text == LONG_LINE
    metrics = runtime.metrics()
    assert (metrics.preempted, metrics.requeued) == (1, 1)
    assert not log.of(FallbackUsed)


def test_preempted_request_past_deadline_is_cancelled_with_fallback(
    make_runtime: Callable[..., AiRuntime], clock: FakeClock
) -> None:
    config = fast_config(ttft_s=0.01, token_s=0.03)
    backend = ScriptedBackend(config.scripted, script={"walks by": LONG_LINE})
    runtime = make_runtime(config, backend, clock=clock)
    log = EventLog(runtime)
    predicted = runtime.submit(
        make_request("p", Priority.AMBIENT, situation="walks by", deadline_s=1.0)
    )
    log.until(lambda: bool(log.of(TokenStreamed, predicted)))
    clock.advance(1.5)
    chat = runtime.submit(make_request("c", Priority.PLAYER_CHAT))
    log.until(lambda: bool(log.of(LineCompleted, chat)))
    cancelled = log.of(RequestCancelled, predicted)
    assert [e.reason for e in cancelled if isinstance(e, RequestCancelled)] == ["preempted"]
    assert [e.reason for e in log.of(FallbackUsed, predicted)] == ["preempted"]
    assert not log.of(LineCompleted, predicted)


def test_a_reaction_preempts_ambient_work(make_runtime: Callable[..., AiRuntime]) -> None:
    config = fast_config(ttft_s=0.01, token_s=0.03)
    backend = ScriptedBackend(config.scripted, script={"walks by": LONG_LINE})
    runtime = make_runtime(config, backend)
    log = EventLog(runtime)
    chatter = runtime.submit(make_request("a", Priority.AMBIENT, situation="walks by"))
    log.until(lambda: bool(log.of(TokenStreamed, chatter)))
    reaction = runtime.submit(make_request("r", Priority.REACTIVE, situation="hit by a crate"))
    log.until(lambda: len(log.of(LineCompleted)) == 2)
    assert [e.handle for e in log.of(LineCompleted)] == [reaction, chatter]
    assert runtime.metrics().preempted == 1


def test_a_promoted_running_request_is_not_preempted_for_its_old_priority(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    config = fast_config(ttft_s=0.01, token_s=0.03)
    backend = ScriptedBackend(config.scripted, script={"walks by": LONG_LINE})
    runtime = make_runtime(config, backend)
    log = EventLog(runtime)
    ahead = runtime.submit(make_request("a", Priority.AMBIENT, situation="walks by"))
    log.until(lambda: bool(log.of(TokenStreamed, ahead)))
    assert runtime.promote(ahead, Priority.PREDICTIVE, 5.0)
    other = runtime.submit(make_request("p", Priority.PREDICTIVE, npc_id=2))
    log.until(lambda: len(log.of(LineCompleted)) == 2)
    assert [e.handle for e in log.of(LineCompleted)] == [ahead, other]
    assert runtime.metrics().preempted == 0
    assert not runtime.promote(ahead, Priority.PLAYER_CHAT, 9.0)  # it has ended


def test_a_promoted_queued_request_moves_up_the_queue(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    runtime = make_runtime(fast_config(), ScriptedBackend(fast_config().scripted), start=False)
    predicted = runtime.submit(make_request("p", Priority.PREDICTIVE, npc_id=1))
    ahead = runtime.submit(make_request("a", Priority.AMBIENT, npc_id=2))
    runtime.promote(ahead, Priority.PREDICTIVE, 5.0)  # now worth more than the prediction
    runtime.promote(predicted, Priority.AMBIENT, 0.0)  # never lowered
    runtime.start()
    log = EventLog(runtime)
    log.until(lambda: len(log.of(LineCompleted)) == 2)
    assert [e.handle for e in log.of(RequestStarted)] == [ahead, predicted]


def test_reactive_work_is_not_preempted(make_runtime: Callable[..., AiRuntime]) -> None:
    config = fast_config(ttft_s=0.01, token_s=0.02)
    backend = ScriptedBackend(config.scripted, script={"walks by": LONG_LINE})
    runtime = make_runtime(config, backend)
    log = EventLog(runtime)
    reactive = runtime.submit(make_request("r", Priority.REACTIVE, situation="walks by"))
    log.until(lambda: bool(log.of(TokenStreamed, reactive)))
    chat = runtime.submit(make_request("c", Priority.PLAYER_CHAT))
    log.until(lambda: len(log.of(LineCompleted)) == 2)
    assert [e.handle for e in log.of(LineCompleted)] == [reactive, chat]
    assert runtime.metrics().preempted == 0


def test_a_warm_up_does_not_count_against_its_villagers_rate_limit(
    make_runtime: Callable[..., AiRuntime], clock: FakeClock
) -> None:
    runtime = make_runtime(
        fast_config(rate_limit_s=2.0), ScriptedBackend(), clock=clock, start=False
    )
    log = EventLog(runtime)
    runtime.warm(make_request("warm-up", Priority.AMBIENT, npc_id=1))
    first = runtime.submit(make_request("a", Priority.AMBIENT, npc_id=1))
    second = runtime.submit(make_request("b", Priority.AMBIENT, npc_id=1))
    log.pump()
    assert [(e.handle, e.reason) for e in log.of(RequestDropped)] == [(second, "rate_limited")]
    assert first != second


def test_rate_limit_per_npc_and_priority(
    make_runtime: Callable[..., AiRuntime], clock: FakeClock
) -> None:
    runtime = make_runtime(
        fast_config(rate_limit_s=2.0), ScriptedBackend(), clock=clock, start=False
    )
    log = EventLog(runtime)
    runtime.submit(make_request("a", Priority.REACTIVE, npc_id=1))
    limited = runtime.submit(make_request("b", Priority.REACTIVE, npc_id=1))
    other_npc = runtime.submit(make_request("c", Priority.REACTIVE, npc_id=2))
    other_class = runtime.submit(make_request("d", Priority.AMBIENT, npc_id=1))
    chat_1 = runtime.submit(make_request("e", Priority.PLAYER_CHAT, npc_id=1))
    chat_2 = runtime.submit(make_request("f", Priority.PLAYER_CHAT, npc_id=1))
    log.pump()
    assert [(e.handle, e.reason) for e in log.of(RequestDropped)] == [(limited, "rate_limited")]
    assert [(e.handle, e.reason) for e in log.of(FallbackUsed)] == [(limited, "rate_limited")]
    assert runtime.queue_depth == 5
    assert len({other_npc, other_class, chat_1, chat_2}) == 4
    clock.advance(2.1)
    runtime.submit(make_request("g", Priority.REACTIVE, npc_id=1))
    log.pump()
    assert len(log.of(RequestDropped)) == 1
    assert runtime.metrics().dropped == {"rate_limited": 1}
