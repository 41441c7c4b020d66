"""The packaged Gemma 3 270M model end to end through AiRuntime (real llama.cpp)."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ai import (
    AiConfig,
    AiEvent,
    AiRuntime,
    Exchange,
    GenerationConfig,
    GenerationParams,
    HygieneConfig,
    LineCompleted,
    LineRequest,
    LlamaBackend,
    Priority,
    PromptSpec,
    RequestCancelled,
    RequestStarted,
    TokenStreamed,
    clean_line,
    is_garbage,
)
from ai.model import resolve_model_path
from ai.prompt import build_completion_prompt

pytestmark = pytest.mark.model

CONTEXT = (
    "Lines spoken by characters in a fantasy village game.\n"
    'Farmer (it starts raining): "Good for the turnips, bad for my knees."\n'
    'Guard (a stranger arrives at night): "State your business, traveller."\n'
    'Miller (the wheel stops turning): "Blast this river, low again!"\n'
)


class TemplateFallback:
    def fallback_line(self, request: LineRequest) -> str:
        return "Hm."


def _request(signature: str, situation: str, priority: Priority = Priority.REACTIVE) -> LineRequest:
    return LineRequest(
        npc_id=zlib.crc32(signature.encode()),
        priority=priority,
        signature=signature,
        prompt=PromptSpec(context=CONTEXT, speaker="Blacksmith", situation=situation),
        snapshot=None,
        deadline_s=20.0,
        timeout_s=30.0,
        stream=True,
    )


def _collect(
    runtime: AiRuntime, events: list[AiEvent], done: Callable[[], bool], timeout_s: float = 20.0
) -> None:
    end = time.monotonic() + timeout_s
    while not done():
        events.extend(runtime.poll())
        if time.monotonic() > end:
            pytest.fail(f"timed out; events so far: {events[-5:]}")
        time.sleep(0.002)


def _runtime(config: AiConfig) -> AiRuntime:
    runtime = AiRuntime(config, LlamaBackend(config), TemplateFallback())
    runtime.start()
    end = time.monotonic() + 60.0
    while runtime.load_progress().state == "loading" and time.monotonic() < end:
        time.sleep(0.01)
    progress = runtime.load_progress()
    assert progress.state == "ready", progress.error
    return runtime


@pytest.fixture(scope="module")
def runtime() -> Iterator[AiRuntime]:
    rt = _runtime(AiConfig(generation=GenerationConfig(seed=7)))
    yield rt
    rt.shutdown()


def test_generates_a_clean_streamed_line(runtime: AiRuntime) -> None:
    events: list[AiEvent] = []
    handle = runtime.submit(_request("crate", "a crate falls next to him"))
    _collect(runtime, events, lambda: any(isinstance(e, LineCompleted) for e in events))
    mine = [e for e in events if e.handle == handle]
    assert isinstance(mine[0], RequestStarted)
    done = mine[-1]
    assert isinstance(done, LineCompleted), mine
    streamed = [e for e in mine if isinstance(e, TokenStreamed)]
    assert len(streamed) >= 2
    text = done.text
    assert text
    assert not is_garbage(text)
    assert clean_line(text, HygieneConfig()) == text
    assert '"' not in text
    assert "\n" not in text
    # The content filter lets words out only once they are closed and checked (whole
    # clauses, with the semantic layer), so a stream event may carry several tokens.
    assert done.stats.tokens >= len(streamed)
    assert all(text.startswith(e.text_so_far.rstrip(" ,")) for e in streamed)
    assert done.stats.ttft_s > 0.0


def test_back_to_back_requests_share_the_model(runtime: AiRuntime) -> None:
    events: list[AiEvent] = []
    for i, situation in enumerate(["a dog steals his bread", "the forge fire goes out"]):
        runtime.submit(_request(f"prefix-{i}", situation))
        _collect(runtime, events, lambda i=i: sum(isinstance(e, LineCompleted) for e in events) > i)
    lines = [e for e in events if isinstance(e, LineCompleted)]
    assert len(lines) == 2
    assert all(line.text for line in lines)


def test_cancel_mid_stream() -> None:
    # No stop string the model will hit, so it would run for max_tokens.
    config = AiConfig(generation=GenerationConfig(max_tokens=400, stop=("<<end>>",), seed=3))
    rt = _runtime(config)
    try:
        events: list[AiEvent] = []
        handle = rt.submit(_request("long", "tells the whole history of the village"))
        _collect(rt, events, lambda: sum(isinstance(e, TokenStreamed) for e in events) >= 3)
        assert rt.cancel(handle)
        events.extend(rt.poll())
        assert any(isinstance(e, RequestCancelled) and e.reason == "cancelled" for e in events)
        begin = time.monotonic()
        _collect(rt, events, lambda: rt.in_flight == 0, timeout_s=2.0)
        stopped_after = time.monotonic() - begin
        assert stopped_after < 1.0
        assert not any(isinstance(e, LineCompleted) for e in events)
    finally:
        rt.shutdown()


def test_context_tokens_are_a_prefix_of_every_prompt() -> None:
    from llama_cpp import Llama

    path: Path = resolve_model_path(AiConfig().model)
    vocab = Llama(model_path=str(path), vocab_only=True, verbose=False)
    context_tokens = vocab.tokenize(CONTEXT.encode(), add_bos=True)
    for situation in ("a crate falls", "the player asks about the weather"):
        prompt = build_completion_prompt(PromptSpec(CONTEXT, "Blacksmith", situation), "")
        tokens = vocab.tokenize(prompt.encode(), add_bos=True)
        assert tokens[: len(context_tokens)] == context_tokens
        # The per-request tail stays short, so a cached prefix leaves little to evaluate.
        assert len(tokens) - len(context_tokens) < 20


def test_a_conversation_read_ahead_survives_other_lines_and_starts_at_once() -> None:
    """The reply's prompt, read while the player types, is still cached after barks."""
    config = AiConfig()
    backend = LlamaBackend(config)
    backend.load(lambda fraction, stage: None)
    context = "Lines spoken by villagers in a small village.\n" * 20

    def talk(villager: str) -> tuple[Exchange, ...]:
        return tuple(
            Exchange(speaker, text)
            for n in range(3)
            for speaker, text in (
                ("Player", f"Tell me about the {n}th field by the river?"),
                (villager, f"The {n}th field floods every spring, friend."),
            )
        )

    def chat(question: str, speaker: str = "Odo the farmer") -> PromptSpec:
        return PromptSpec(context, speaker, "replying to the traveller", history=talk(speaker),
                          player_text=question, conversation=True)  # fmt: skip

    def first_piece(prompt: PromptSpec, max_tokens: int = 8) -> float:
        params = replace(GenerationParams.from_config(config.generation, max_tokens), seed=1)
        start = time.perf_counter()
        stream = backend.generate(prompt, params, lambda: False)
        next(stream)
        took = time.perf_counter() - start
        for _ in stream:
            pass
        return took

    try:
        bark = PromptSpec(context, "Brann the smith", "hit by a crate", opener="Ow!")
        first_piece(bark)  # the shared context is read once, into the main cache
        first_piece(chat("Where is the ball?"), max_tokens=1)  # read ahead while typing
        first_piece(replace(bark, situation="a barrel lands close by"))  # a bark between
        warm = first_piece(chat("Where is the ball?"))
        # Another villager's conversation, not read ahead: its whole tail is read now.
        first_piece(replace(bark, situation="bumped by the traveller"))
        cold = first_piece(chat("Where is the ball?", speaker="Sela the guard"))
        assert warm < 0.25 * cold, (warm, cold)
    finally:
        backend.close()
