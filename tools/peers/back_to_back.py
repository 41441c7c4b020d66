"""A wrapper that keeps any runtime's worker generating the whole time.

``BackToBack`` wraps the game's runtime or the plain peer and keeps a filler line
queued whenever the queue runs empty, so the worker generates the whole time, not only
when the game asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from ai import (
    AiConfig,
    AiEvent,
    AiMetrics,
    Backend,
    FallbackSource,
    Handle,
    LineRequest,
    LineRuntime,
    LoadProgress,
    Priority,
    TierStats,
)
from ai.content import ContentFilter
from ai.events import TERMINAL_EVENTS
from ai.load_checks import Probe


class LineRuntimeWithQueue(LineRuntime, Protocol):
    """A :class:`LineRuntime` that also says how many requests wait and run."""

    @property
    def queue_depth(self) -> int:
        """Requests waiting to start."""
        ...

    @property
    def in_flight(self) -> int:
        """Requests generating right now."""
        ...


class BackToBack:
    """Keeps a runtime's worker generating the whole time with filler lines.

    A filler is an ambient line for nobody, queued whenever the queue runs empty; it
    reuses the game's latest shared prompt context, so it never evicts the game's
    prefix from the model's cache. Its events never reach the game. Fillers begin once
    the runtime first falls idle after the game's first request (the warm-up of the
    shared prefix), so the start-up wait before the first tick ends as it would without
    them; from then on its queue figures count the game's own requests only.
    """

    def __init__(self, runtime: LineRuntimeWithQueue) -> None:
        self.runtime = runtime
        self._fillers: set[int] = set()
        self._context: LineRequest | None = None
        self._open: set[int] = set()  # the game's requests not yet answered
        self._filling = False
        self._count = 0

    def start(self, probes: Sequence[Probe] = ()) -> None:
        """Start the wrapped runtime."""
        self.runtime.start(probes)

    def submit(self, request: LineRequest) -> Handle:
        """Submit a game request; remember its context for fillers."""
        self._context = request
        handle = self.runtime.submit(request)
        self._open.add(handle.id)
        return handle

    def warm(self, request: LineRequest) -> None:
        """Warm the wrapped runtime's cache; remember the context for fillers."""
        self._context = request
        self.runtime.warm(request)

    def prefill(self, request: LineRequest) -> None:
        """As the wrapped runtime."""
        self.runtime.prefill(request)

    @property
    def warming(self) -> bool:
        """As the wrapped runtime."""
        return self.runtime.warming

    @property
    def multi_tier(self) -> bool:
        """As the wrapped runtime."""
        return self.runtime.multi_tier

    def tiers(self) -> tuple[TierStats, ...]:
        """The wrapped runtime's tiers."""
        return self.runtime.tiers()

    def promote(self, handle: Handle, priority: Priority, value: float) -> bool:
        """As the wrapped runtime."""
        return self.runtime.promote(handle, priority, value)

    def cancel(self, handle: Handle) -> bool:
        """Cancel a game request."""
        self._open.discard(handle.id)
        return self.runtime.cancel(handle)

    def poll(self) -> list[AiEvent]:
        """Top up the queue with a filler, then pass on the game's events only."""
        runtime = self.runtime
        base = self._context
        if not self._filling and base is not None:
            self._filling = runtime.queue_depth == 0 and runtime.in_flight == 0
        if self._filling and base is not None and runtime.queue_depth == 0:
            self._count += 1
            filler = LineRequest(
                npc_id=-self._count,
                priority=Priority.AMBIENT,
                signature=f"filler-{self._count}",
                prompt=replace(base.prompt, situation="talks about the weather", player_text=""),
                snapshot=None,
                deadline_s=30.0,
                timeout_s=60.0,
            )
            self._fillers.add(runtime.submit(filler).id)
        return self._game_events(runtime.poll())

    def _game_events(self, events: list[AiEvent]) -> list[AiEvent]:
        fillers, game = self._fillers, []
        for event in events:
            if event.handle.id in fillers:
                continue
            if isinstance(event, TERMINAL_EVENTS):
                self._open.discard(event.handle.id)
            game.append(event)
        return game

    def wait(self, handle: Handle, timeout_s: float) -> list[AiEvent]:
        """The wrapped runtime's wait, fillers filtered out."""
        return self._game_events(self.runtime.wait(handle, timeout_s))

    def load_progress(self) -> LoadProgress:
        """The wrapped runtime's load state."""
        return self.runtime.load_progress()

    @property
    def queue_depth(self) -> int:
        """The game's requests not yet answered, while fillers run; else the runtime's."""
        return len(self._open) if self._filling else self.runtime.queue_depth

    @property
    def in_flight(self) -> int:
        """None of the game's own while fillers run; else the runtime's."""
        return 0 if self._filling else self.runtime.in_flight

    def metrics(self) -> AiMetrics:
        """The wrapped runtime's figures (fillers are real work); the game's queue only."""
        metrics = self.runtime.metrics()
        if not self._filling:
            return metrics
        return replace(metrics, queue_depth=len(self._open), in_flight=0)

    def shutdown(self) -> None:
        """Shut the wrapped runtime down."""
        self.runtime.shutdown()


# mypy checks here that the wrapper offers every call the game makes.
_IS_A_LINE_RUNTIME: type[LineRuntime] = BackToBack


class QueuedFactory(Protocol):
    """Builds a runtime that reports its queue (``game.app.RuntimeFactory``'s shape)."""

    def __call__(
        self,
        config: AiConfig,
        backend: Backend,
        fallback: FallbackSource,
        /,
        *,
        content: ContentFilter | None = None,
    ) -> LineRuntimeWithQueue:
        """A runtime, not yet started."""
        ...


class _Busy:
    def __init__(self, factory: QueuedFactory) -> None:
        self._factory = factory

    def __call__(
        self,
        config: AiConfig,
        backend: Backend,
        fallback: FallbackSource,
        /,
        *,
        content: ContentFilter | None = None,
    ) -> BackToBack:
        return BackToBack(self._factory(config, backend, fallback, content=content))


def busy(factory: QueuedFactory) -> _Busy:
    """A runtime factory whose runtime is kept generating back to back."""
    return _Busy(factory)
