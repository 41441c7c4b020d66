"""Live settings handed to a running router: the next request uses them, the rest stays."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from ai import (
    AiConfig,
    GenerationParams,
    HygieneConfig,
    LineCompleted,
    LineFailed,
    PromptSpec,
    RequestDropped,
    Router,
    ScriptedBackend,
    build_router,
)
from ai.backend import StopCheck
from ai.config import ModelConfig, RemoteConfig, RoutingConfig
from tests.unit.ai.conftest import RecordingFallback, fast_config, make_request

TURNIPS = "the turnips are in"


class RecordingBackend(ScriptedBackend):
    """The scripted backend, keeping the sampling settings of every generation."""

    def __init__(self, config: AiConfig) -> None:
        super().__init__(config.scripted, {TURNIPS: "Turnips again, and more turnips."})
        self.params: list[GenerationParams] = []

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        self.params.append(params)
        return super().generate(prompt, params, should_stop)


@pytest.fixture
def config() -> AiConfig:
    return fast_config()


@pytest.fixture
def backend(config: AiConfig) -> RecordingBackend:
    return RecordingBackend(config)


@pytest.fixture
def router(config: AiConfig, backend: RecordingBackend) -> Iterator[Router]:
    router = build_router(config, backend, RecordingFallback())
    router.start()
    try:
        yield router
    finally:
        router.shutdown()


def _ended(router: Router, signature: str, timeout_s: float = 5.0) -> object:
    handle = router.submit(make_request(signature, situation=TURNIPS))
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        for event in router.poll():
            if event.handle == handle and isinstance(event, LineCompleted | LineFailed):
                return event
        time.sleep(0.002)
    pytest.fail(f"request {signature} did not end")


def test_sampling_and_blocklist_reach_the_next_request(
    router: Router, backend: RecordingBackend, config: AiConfig
) -> None:
    assert isinstance(_ended(router, "before"), LineCompleted)
    assert backend.params[-1].temperature == 0.8
    router.reconfigure(
        replace(
            config,
            generation=replace(config.generation, temperature=0.2, top_k=7),
            hygiene=HygieneConfig(blocklist=("turnips",)),
        )
    )
    event = _ended(router, "after")
    assert isinstance(event, LineFailed)
    assert event.reason == "unfit"
    assert backend.params[-1].temperature == 0.2
    assert backend.params[-1].top_k == 7


def test_the_rate_limit_changes_at_the_next_submit(router: Router, config: AiConfig) -> None:
    router.reconfigure(replace(config, scheduler=replace(config.scheduler, rate_limit_s=60.0)))
    router.submit(make_request("first", npc_id=4))
    second = router.submit(make_request("second", npc_id=4))
    end = time.monotonic() + 5.0
    dropped: list[RequestDropped] = []
    while not dropped and time.monotonic() < end:
        dropped = [e for e in router.poll() if isinstance(e, RequestDropped) and e.handle == second]
        time.sleep(0.002)
    assert [e.reason for e in dropped] == ["rate_limited"]


def test_only_the_live_settings_are_taken() -> None:
    running = AiConfig()
    new = AiConfig(
        model=ModelConfig(n_ctx=4096, model_path="/other.gguf"),
        generation=replace(running.generation, temperature=0.1, seed=5),
        scheduler=replace(running.scheduler, queue_capacity=4, deadline_reactive_s=0.5),
        remote=RemoteConfig(enabled=True, base_url="http://10.0.0.1:9000/v1", lanes=3),
        routing=RoutingConfig(ambient=("local",)),
    )
    taken = running.with_live_settings(new)
    assert taken.model == running.model
    assert taken.generation.seed == running.generation.seed
    assert taken.scheduler.queue_capacity == running.scheduler.queue_capacity
    # The server's address is live; whether the tier exists and its lanes are not.
    assert taken.remote == replace(running.remote, base_url="http://10.0.0.1:9000/v1")
    assert taken.generation.temperature == 0.1
    assert taken.scheduler.deadline_reactive_s == 0.5
    assert taken.routing.ambient == ("local",)
