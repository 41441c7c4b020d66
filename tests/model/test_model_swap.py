"""Hot model swap on the real model: the village adapter off while lines flow, and a
truncated model file refused while the serving one writes on."""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from ai import (
    AiConfig,
    AiEvent,
    LineCompleted,
    LineRequest,
    LlamaBackend,
    ModelConfig,
    ModelSwapped,
    Priority,
    PromptSpec,
    RequestDropped,
    RequestTimedOut,
    Router,
    SwapEvent,
    SwapRefused,
    build_router,
)
from ai.events import TERMINAL_EVENTS
from ai.model import resolve_model_path

pytestmark = pytest.mark.model

ADAPTER = Path(__file__).resolve().parents[2] / "assets" / "models" / "village-lora.gguf"
CONTEXT = (
    "Lines spoken by characters in a fantasy village game.\n"
    'Farmer (it starts raining): "Good for the turnips, bad for my knees."\n'
    'Guard (a stranger arrives at night): "State your business, traveller."\n'
    'Miller (the wheel stops turning): "Blast this river, low again!"\n'
)
SITUATIONS = (
    "a crate falls next to him",
    "a dog steals his bread",
    "the forge fire goes out",
    "a stranger asks the way",
)


class TemplateFallback:
    def fallback_line(self, request: LineRequest) -> str:
        return "Hm."


def _request(n: int, situation: str | None = None) -> LineRequest:
    return LineRequest(
        npc_id=zlib.crc32(f"swap-{n}".encode()),
        priority=Priority.REACTIVE,
        signature=f"swap-{n}",
        prompt=PromptSpec(
            context=CONTEXT,
            speaker="Blacksmith",
            situation=situation or SITUATIONS[n % len(SITUATIONS)],
        ),
        snapshot=None,
        deadline_s=20.0,
        timeout_s=30.0,
        max_tokens=24,
    )


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return 0.0


class Game:
    """Polls as the game does each tick, and keeps two requests in the air."""

    def __init__(self, router: Router) -> None:
        self.router = router
        self.timeline: list[AiEvent | SwapEvent] = []
        self.handles: list[object] = []
        self.peak_rss_mb = 0.0
        self._next = 0

    def open(self) -> int:
        ended = {e.handle for e in self.timeline if isinstance(e, TERMINAL_EVENTS)}
        return sum(1 for handle in self.handles if handle not in ended)

    def pump(self, flowing: bool) -> None:
        self.timeline.extend(self.router.poll())
        self.timeline.extend(self.router.swap_events())
        while flowing and self.open() < 2:
            self.handles.append(self.router.submit(_request(self._next)))
            self._next += 1
        self.peak_rss_mb = max(self.peak_rss_mb, _rss_mb())

    def until(self, done: Callable[[], bool], flowing: bool, timeout_s: float = 30.0) -> None:
        end = time.monotonic() + timeout_s
        while not done():
            if time.monotonic() > end:
                pytest.fail(f"not within {timeout_s} s; last events: {self.timeline[-4:]}")
            self.pump(flowing)
            time.sleep(0.005)

    def swaps(self) -> list[SwapEvent]:
        return [e for e in self.timeline if isinstance(e, ModelSwapped | SwapRefused)]


def test_the_adapter_comes_off_while_lines_flow_and_a_truncated_model_is_refused(
    tmp_path: Path,
) -> None:
    config = AiConfig(model=ModelConfig(adapter=str(ADAPTER)))
    router = build_router(config, LlamaBackend(config), TemplateFallback())
    router.start()
    game = Game(router)
    try:
        game.until(lambda: router.load_progress().state != "loading", flowing=False)
        assert router.load_progress().state == "ready", router.load_progress().error
        assert router.load_progress().prompt_style == "village"
        game.until(lambda: len(game.handles) >= 4, flowing=True)
        game.until(lambda: game.open() == 0, flowing=False)
        rss_before = _rss_mb()
        game.peak_rss_mb = 0.0

        warm_ups = {"": replace(_request(-1), signature="warm-up", max_tokens=1)}
        router.swap_model(replace(config.model, adapter=""), warm_ups)
        game.until(lambda: bool(game.swaps()), flowing=True)
        (swapped,) = game.swaps()
        assert isinstance(swapped, ModelSwapped), swapped
        assert swapped.prompt_style == ""
        assert router.load_progress().prompt_style == ""
        during = len(game.handles)
        game.until(lambda: len(game.handles) >= during + 3, flowing=True)
        game.until(lambda: game.open() == 0, flowing=False)
        rss_after = _rss_mb()

        ends = [e for e in game.timeline if isinstance(e, TERMINAL_EVENTS)]
        assert sorted(e.handle.id for e in ends) == sorted(h.id for h in game.handles)  # type: ignore[attr-defined]
        assert not [e for e in ends if isinstance(e, RequestDropped | RequestTimedOut)]
        lines = [e for e in ends if isinstance(e, LineCompleted)]
        assert len(lines) >= len(ends) - 1, ends  # a sampled line may read as garbage
        assert [t.name for t in threading.enumerate()].count("ai-worker") == 1
        # The old model's memory came back: the swap holds two models only while it runs.
        assert game.peak_rss_mb > rss_before + 100.0, (rss_before, game.peak_rss_mb)
        assert rss_after < rss_before + 60.0, (rss_before, rss_after)

        model = resolve_model_path(config.model)
        truncated = tmp_path / "truncated.gguf"
        with model.open("rb") as source:
            truncated.write_bytes(source.read(8 << 20))  # a GGUF header, then a cut
        router.swap_model(replace(config.model, model_path=str(truncated), adapter=""))
        game.until(lambda: len(game.swaps()) == 2, flowing=True, timeout_s=20.0)
        refused = game.swaps()[1]
        assert isinstance(refused, SwapRefused), refused
        assert "truncated.gguf" in refused.reason
        assert router.load_progress().state == "ready"
        refused_at = game.timeline.index(refused)
        game.until(
            lambda: any(isinstance(e, LineCompleted) for e in game.timeline[refused_at:]),
            flowing=True,
        )
        game.until(lambda: game.open() == 0, flowing=False)
        assert [t.name for t in threading.enumerate()].count("ai-worker") == 1
    finally:
        router.shutdown()
