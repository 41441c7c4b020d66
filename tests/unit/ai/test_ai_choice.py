"""Closed choices on the worker: the likeliest option, then the likeliest tail after it.

A request with a ``Choice`` is never sampled: the backend picks the option it finds
likeliest, then a tail with the winner as the opener. A backend that cannot choose
answers "unsupported", and the router keeps choices on the local tier, the only one
whose logits it can read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from ai import (
    AiConfig,
    AiRuntime,
    Choice,
    LineCompleted,
    LineFailed,
    Priority,
    PromptSpec,
    RemoteConfig,
    Router,
    ScriptedBackend,
    build_router,
)
from ai.events import TERMINAL_EVENTS
from tests.unit.ai.conftest import EventLog, RecordingFallback, fast_config, make_request

CHOICE = Choice(("fetch the apple;", "carry on;"), (' pleased"', ' unmoved"'))


class Chooser:
    """Scripted scores that favour ``wanted``; remembers every prompt it scored."""

    def __init__(self, *wanted: str) -> None:
        self.wanted = wanted
        self.calls: list[tuple[PromptSpec, tuple[str, ...]]] = []

    def __call__(self, prompt: PromptSpec, continuations: Sequence[str]) -> tuple[float, ...]:
        self.calls.append((prompt, tuple(continuations)))
        return tuple(-1.0 if text in self.wanted else -5.0 for text in continuations)


def _decide(
    make_runtime: Callable[..., AiRuntime],
    backend: ScriptedBackend,
    choice: Choice = CHOICE,
    player_text: str = "",
) -> EventLog:
    runtime = make_runtime(fast_config(), backend)
    log = EventLog(runtime)
    request = make_request("decide", stream=False)
    request = replace(
        request, prompt=replace(request.prompt, player_text=player_text), choice=choice
    )
    handle = runtime.submit(request)
    log.until(lambda: any(isinstance(e, TERMINAL_EVENTS) for e in log.of(object, handle)))
    return log


def test_the_likeliest_option_and_tail_are_the_answer(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    chooser = Chooser("carry on;", ' pleased"')
    backend = ScriptedBackend(fast_config().scripted, chooser=chooser)
    log = _decide(make_runtime, backend)
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert done.text == 'carry on; pleased"'
    assert done.scores == (-1.0, -1.0)
    # The tails are scored after the winning option, which becomes the opener.
    assert [(p.opener, texts) for p, texts in chooser.calls] == [
        ("", CHOICE.options),
        ("carry on;", CHOICE.tails),
    ]
    assert backend.generate_calls == 0
    assert not log.of(LineFailed)


def test_a_backend_that_cannot_choose_answers_unsupported(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    backend = ScriptedBackend(fast_config().scripted, chooser=lambda prompt, texts: None)
    log = _decide(make_runtime, backend)
    (failed,) = log.of(LineFailed)
    assert isinstance(failed, LineFailed)
    assert failed.reason == "unsupported"
    assert not log.of(LineCompleted)


def test_default_scripted_scores_follow_the_players_words(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    backend = ScriptedBackend(fast_config().scripted)
    choice = Choice(("carry on;", "fetch the apple;"), (' unmoved"', ' pleased"'))
    log = _decide(make_runtime, backend, choice, player_text="could you fetch me that apple")
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    # No tail shares a word with the player: the earlier one wins the tie.
    assert done.text == 'fetch the apple; unmoved"'
    assert backend.choose_calls == 2


def test_the_router_keeps_a_choice_on_the_local_tier(fallback: RecordingFallback) -> None:
    config: AiConfig = replace(fast_config(), remote=RemoteConfig(enabled=True))
    local = ScriptedBackend(config.scripted, chooser=Chooser("carry on;", ' unmoved"'))
    remote = ScriptedBackend(config.scripted, chooser=Chooser("fetch the apple;"))
    router: Router = build_router(config, local, fallback, remote_backend=lambda: remote)
    router.start()
    try:
        log = EventLog(router)  # type: ignore[arg-type]
        log.until(lambda: all(t.state != "loading" for t in router.tiers()))
        plain = make_request("plain", Priority.PREDICTIVE, stream=False)
        handles = [
            router.submit(plain),
            router.submit(replace(plain, signature="choice", choice=CHOICE)),
        ]
        log.until(lambda: len(log.of(LineCompleted)) == 2)
        by_handle = {e.handle: e for e in log.of(LineCompleted)}
        # A predictive line goes to the remote tier first; the choice does not.
        assert [by_handle[h].tier for h in handles] == ["remote", "local"]  # type: ignore[attr-defined]
        assert by_handle[handles[1]].text == 'carry on; unmoved"'  # type: ignore[attr-defined]
        assert (local.choose_calls, remote.choose_calls) == (2, 0)
    finally:
        router.shutdown()
