"""A harness for driving the model line source inside a real village.

The village is built the way the game builds it (``build_village``), with fast scripted
timings, or with a ``GatedBackend`` that holds chosen generations word by word. Between
ticks, ``walk`` waits (bounded) until the worker has nothing left to do or is parked at
a gate, so what a tick sees does not depend on how fast the machine is. The player is
moved only through ``PlayerIntent``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from ai import GenerationParams, PromptSpec, ScriptedBackend, ScriptedConfig
from ai.backend import StopCheck
from ai.content import HiddenStates
from ai.scripted_backend import Script
from game.app import build_village
from game.config.settings import load_settings
from game.core.session import Session
from game.dialogue.line_source import LineAsk, LineCut, LineEvent, LinePartial, LineReady
from game.dialogue.model_line_source import ModelLineSource
from game.sim.events import Trigger
from game.sim.player import PlayerIntent

FAST = (
    'ai.model.backend="scripted"',
    "ai.scripted.load_s=0.0",
    "ai.scripted.ttft_s=0.0",
    "ai.scripted.token_s=0.001",
    # Ticks here run faster than real time; a wall-clock rate limit would drop requests
    # that a paced game would send. Tests that need the limit set it back.
    "ai.scheduler.rate_limit_s=0.0",
)
FAST_TIMINGS = ScriptedConfig(load_s=0.0, ttft_s=0.0, token_s=0.001)
LEFT, RIGHT, STAY = PlayerIntent(move=-1), PlayerIntent(move=1), PlayerIntent()
GREETING = "the traveller walks up"
CHAT = "replying to the traveller"
CHAT_REPLY = "Aye, the well water is sweet this year, and cold as a winter night."


class GatedBackend(ScriptedBackend):
    """A scripted backend whose chosen generations wait at a gate, word by word.

    ``hold(when)`` parks every generation whose prompt matches ``when`` before each of
    its words until the test lets words through with ``allow(n)`` or ``release()``.
    ``hold_load`` parks loading the same way until ``finish_loading()``. It also counts
    how many generations run at once and which ones were stopped before their end.
    """

    def __init__(
        self,
        timings: ScriptedConfig = FAST_TIMINGS,
        script: Script | None = None,
        hold_load: bool = False,
        hidden: HiddenStates | None = None,
    ) -> None:
        super().__init__(timings, script, hidden=hidden)
        self._cond = threading.Condition()
        self._when: Callable[[PromptSpec], bool] = lambda prompt: False
        self._permits = 0.0
        self._loaded = threading.Event()
        if not hold_load:
            self._loaded.set()
        self.parked = 0
        self.active = 0
        self.max_active = 0
        self.stopped: list[PromptSpec] = []
        self.finished: list[PromptSpec] = []

    def hold(self, when: Callable[[PromptSpec], bool]) -> None:
        """Park generations whose prompt matches ``when`` before every word."""
        self._when = when

    def allow(self, words: int) -> None:
        """Let ``words`` more held words through."""
        with self._cond:
            self._permits += words
            self._cond.notify_all()

    def release(self) -> None:
        """Let every held word through, from now on."""
        self.allow(10**9)

    def finish_loading(self) -> None:
        """Let a held load complete."""
        self._loaded.set()

    @property
    def stuck(self) -> bool:
        """Whether a generation waits at the gate with no word allowed through."""
        return self.parked > 0 and self._permits <= 0

    def load(self, progress: Callable[[float, str], None]) -> None:
        progress(0.1, "held by the test")
        self._loaded.wait(10.0)
        super().load(progress)

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        with self._cond:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            held = self._when(prompt)
            for word in super().generate(prompt, params, should_stop):
                if held and not self._pass_gate(should_stop):
                    break
                yield word
            (self.stopped if should_stop() else self.finished).append(prompt)
        finally:
            with self._cond:
                self.active -= 1

    def _pass_gate(self, should_stop: StopCheck) -> bool:
        with self._cond:
            self.parked += 1
            try:
                while self._permits <= 0:
                    if should_stop():
                        return False
                    self._cond.wait(0.002)
                self._permits -= 1
                return True
            finally:
                self.parked -= 1


# -- helpers -------------------------------------------------------------------------


def source_of(village: Session) -> ModelLineSource:
    source = village.dialogue.source
    assert isinstance(source, ModelLineSource)
    return source


def npc_named(village: Session, name: str) -> int:
    world = village.world
    return next(i for i in world.npc_ids() if (npc := world.npc(i)) and npc.name == name)


def player_id(village: Session) -> int:
    return village.world.player_status().id


def wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 3.0) -> None:
    """Wait until ``condition()`` holds; fail the test after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.0005)


def settle(village: Session, backend: GatedBackend | None = None) -> None:
    """Wait until the worker is idle, or parked at a gate with nothing let through."""
    runtime = source_of(village).runtime
    wait_for(
        lambda: (
            (runtime.queue_depth == 0 and runtime.in_flight == 0)
            or (backend is not None and backend.stuck)
        ),
        "the AI worker to settle",
    )


def let_through(village: Session, backend: GatedBackend, words: int) -> None:
    """Let ``words`` held words through and wait until they have been generated."""
    backend.allow(words)
    settle(village, backend)


def walk(
    village: Session,
    intent: PlayerIntent,
    ticks: int,
    until: Callable[[], bool] | None = None,
    backend: GatedBackend | None = None,
) -> int:
    """Step up to ``ticks`` ticks (settling after each); stop early once ``until()`` holds."""
    for _ in range(ticks):
        village.step(intent)
        settle(village, backend)
        if until is not None and until():
            return village.tick
    if until is not None:
        pytest.fail(f"condition not met within {ticks} ticks")
    return village.tick


class Tap:
    """Records what a line source was asked and handed back, with the tick of each poll."""

    def __init__(self, source: ModelLineSource, monkeypatch: pytest.MonkeyPatch) -> None:
        self.asks: list[LineAsk] = []
        self.out: list[tuple[int, LineEvent]] = []
        request, poll = source.request, source.poll

        def tapped_request(ask: LineAsk) -> None:
            self.asks.append(ask)
            request(ask)

        def tapped_poll(tick: int) -> list[LineEvent]:
            events = poll(tick)
            self.out.extend((tick, event) for event in events)
            return events

        monkeypatch.setattr(source, "request", tapped_request)
        monkeypatch.setattr(source, "poll", tapped_poll)

    def asked(self, npc_id: int, trigger: Trigger) -> LineAsk | None:
        return next((a for a in self.asks if a.npc_id == npc_id and a.trigger is trigger), None)

    def ready(self, npc_id: int) -> list[tuple[int, LineReady]]:
        return [
            (tick, e) for tick, e in self.out if isinstance(e, LineReady) and e.ask.npc_id == npc_id
        ]

    def partials(self, npc_id: int) -> list[tuple[int, str]]:
        return [
            (tick, e.text)
            for tick, e in self.out
            if isinstance(e, LinePartial) and e.npc_id == npc_id
        ]

    def cuts(self, npc_id: int) -> list[LineCut]:
        return [e for _, e in self.out if isinstance(e, LineCut) and e.npc_id == npc_id]


def remembered(village: Session) -> list[str]:
    """Every line any villager remembers."""
    memories = village.dialogue.memories
    return [e.text for npc_id in village.world.npc_ids() for e in memories.of(npc_id).exchanges]


@pytest.fixture
def make_village() -> Iterator[Callable[..., Session]]:
    """Build villages the way the game does; always release gates and stop the worker."""
    built: list[tuple[Session, GatedBackend | ScriptedBackend | None]] = []

    def build(
        *overrides: str,
        backend: GatedBackend | ScriptedBackend | None = None,
        wait: bool = True,
    ) -> Session:
        village = build_village(load_settings(overrides=FAST + overrides), backend=backend)
        built.append((village, backend))
        if wait:
            assert village.ai.wait_ready(5.0) == "ready"
        return village

    yield build
    for village, backend in built:
        if isinstance(backend, GatedBackend):
            backend.finish_loading()
            backend.release()
        village.close()


def open_chat(village: Session, npc_id: int, text: str) -> int:
    """Open a chat as the window does, say ``text``, and return the tick it was said."""
    assert village.world.set_talking(npc_id, True)
    walk(village, STAY, 1)
    tick = village.tick
    village.dialogue.say(tick, npc_id, player_id(village), text)
    village.dialogue.update(tick)
    return tick
