"""Hot model swap: a new local model comes up beside the serving one, then takes over.

A swap runs in the background, in stages that :class:`~ai.events.SwapProgress` shows:

1. loading: a second :class:`~ai.runtime.AiRuntime`, with its own worker thread, its
   own backend and its own ``Llama``, loads the new model while the old one keeps
   writing every line;
2. testing: one short line through the new runtime must come back clean (three tries,
   since lines are sampled);
3. warming: the warm-up the caller gave for the new model's prompt style reads its
   shared prompt, so the first real line does not pay for it;
4. the switch: the local tier's lane becomes the new runtime, and the requests still
   queued on the old one move over under the same router handles
   (:meth:`~ai.runtime.AiRuntime.take_over`): none lost, none answered twice;
5. finishing: the line the old model is writing finishes there. Then the old runtime is
   retired without waiting (its worker frees the ``Llama`` and ends by itself), and once
   its thread has ended, ``ModelSwapped`` is reported and ``load_progress()`` gives the
   new model's prompt style: no line of the old model's comes after it.

A model that fails to load or its self-test is refused with one ``SwapRefused`` and
one log line, and the old runtime never notices. So is a swap asked for while another
runs: the first one goes on. Each ``Llama`` stays with the one thread that made it.
Main thread only; nothing here waits on a model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ai.backend import Backend
from ai.config import AiConfig, ModelConfig
from ai.content.filter import ContentFilter
from ai.events import (
    TERMINAL_EVENTS,
    AiEvent,
    LineCompleted,
    ModelSwapped,
    RequestTimedOut,
    SwapEvent,
    SwapProgress,
    SwapRefused,
    SwapState,
    TerminalEvent,
)
from ai.fallback import LAST_RESORT_LINE, FallbackSource
from ai.legs import LaneKey, Leg, RoutedRequest
from ai.load_checks import SELF_TEST_PROMPT, SELF_TEST_TOKENS, Probe
from ai.metrics import AiMetrics
from ai.requests import Handle, LineRequest, Priority
from ai.runtime import AiRuntime
from ai.tiers import Tier

logger = logging.getLogger(__name__)

#: Makes the backend for a model's settings (on the main thread; it loads on its worker).
BackendFactory = Callable[[AiConfig], Backend]
#: The router's table of legs, by lane and lane handle.
LegTable = dict[LaneKey, tuple[RoutedRequest, Leg]]
#: Hands one event of a lane that served the game to the router, as from any lane.
Route = Callable[[AiRuntime, AiEvent], None]

TEST_SIGNATURE = "model-swap-test"
_TEST_TRIES = 3
_TEST_BUDGET_S = 30.0
_STAGES: dict[SwapState, tuple[str, float]] = {
    "testing": ("testing the new model", 0.75),
    "warming": ("warming the new model", 0.85),
    "finishing": ("the old model finishes its line", 0.95),
}


def model_label(model: ModelConfig) -> str:
    """A short name for a model and its adapter, for the HUD and the log."""
    if model.backend == "scripted":
        base = "the scripted model"
    else:
        base = Path(model.model_path).name if model.model_path else "the packaged model"
    adapter = f"with {Path(model.adapter).name}" if model.adapter else "without an adapter"
    return f"{base} {adapter}"


class _SwapFallback:
    """The game's fallback source, for the new runtime; its own test line needs none."""

    def __init__(self, game: FallbackSource) -> None:
        self._game = game

    def fallback_line(self, request: LineRequest) -> str:
        if request.signature.startswith(TEST_SIGNATURE):
            return LAST_RESORT_LINE
        return self._game.fallback_line(request)


@dataclass(slots=True)
class _Swap:
    """One swap under way: the new runtime, and how far it has got."""

    name: str
    lane: AiRuntime
    warm_ups: Mapping[str, LineRequest]
    began: float
    state: SwapState = "loading"
    tries: int = 0
    test: Handle | None = None
    old: AiRuntime | None = None
    retired: bool = False
    moved: int = 0
    failures: list[str] = field(default_factory=list)


class Swaps:
    """The local tier's model swaps, one at a time, and the runtimes they retire."""

    def __init__(
        self,
        config: AiConfig,
        fallback: FallbackSource,
        backends: BackendFactory,
        clock: Callable[[], float],
        content: ContentFilter | None = None,
    ) -> None:
        self._config = config
        self._content = content
        self._fallback = _SwapFallback(fallback)
        self._backends = backends
        self._clock = clock
        self._swap: _Swap | None = None
        self._refused: list[AiRuntime] = []
        self._leaving: list[AiRuntime] = []
        self._events: list[SwapEvent] = []
        self._closed = False
        #: The game's largest prompts, checked on each new model as on the first.
        self.probes: tuple[Probe, ...] = ()
        #: The final figures of each runtime a swap retired, so counters never go back.
        self.retired: list[AiMetrics] = []

    def __bool__(self) -> bool:
        """Whether anything needs a look on this poll."""
        return self._swap is not None or bool(self._refused or self._leaving)

    def reconfigure(self, config: AiConfig) -> None:
        """Give the model a swap brings up ``config``'s live settings (see the router)."""
        self._config = self._config.with_live_settings(config)
        swap = self._swap
        if swap is not None:
            swap.lane.reconfigure(config)
        for lane in self._leaving:
            lane.reconfigure(config)

    # -- asking --------------------------------------------------------------

    def begin(self, model: ModelConfig, warm_ups: Mapping[str, LineRequest]) -> None:
        """Start bringing ``model`` up beside the serving one; refuse if a swap runs."""
        name = model_label(model)
        if self._closed:
            self._refuse(name, "the game is shutting down")
            return
        if self._swap is not None:
            self._refuse(name, f"a swap to {self._swap.name} is still under way")
            return
        config = replace(self._config, model=model)
        try:
            backend = self._backends(config)
        except Exception as exc:
            self._refuse(name, f"its backend could not be made: {exc}")
            return
        lane = AiRuntime(
            config, backend, self._fallback, self._clock, standby=True, content=self._content
        )
        lane.start(self.probes)
        self._swap = _Swap(name, lane, dict(warm_ups), self._clock())
        logger.info("model swap: loading %s beside the current model", name)

    def events(self) -> list[SwapEvent]:
        """The swaps that ended since the last call, in order."""
        events, self._events = self._events, []
        return events

    def progress(self) -> SwapProgress:
        """Where the swap under way has got ("idle" when none runs)."""
        swap = self._swap
        if swap is None:
            return SwapProgress("idle")
        if swap.state == "loading":
            loading = swap.lane.load_progress()
            return SwapProgress("loading", swap.name, 0.7 * loading.fraction, loading.stage)
        stage, fraction = _STAGES[swap.state]
        return SwapProgress(swap.state, swap.name, fraction, stage)

    def serving(self, tier: Tier) -> AiRuntime:
        """The runtime whose load progress the game sees: the old one until ModelSwapped."""
        swap = self._swap
        if swap is not None and swap.old is not None:
            return swap.old
        return tier.lanes[0]

    @property
    def in_flight(self) -> int:
        """The game's line the old model is finishing, if any (0 or 1)."""
        swap = self._swap
        return 0 if swap is None or swap.old is None or swap.retired else swap.old.in_flight

    # -- each poll -----------------------------------------------------------

    def advance(self, tier: Tier, legs: LegTable, route: Route) -> None:
        """Move the swap under way on by what its runtimes have done since the last poll."""
        swap = self._swap
        if swap is not None:
            if swap.old is None:
                self._prepare(swap, tier, legs)
            else:
                self._finish(swap, legs, route)
        for lane in self._refused[:]:
            lane.poll()  # a refused model's events never reach the game
            if lane.stopped:
                lane.shutdown()
                self._refused.remove(lane)
        for lane in self._leaving[:]:
            for event in lane.poll():
                route(lane, event)
            if lane.stopped:
                self._leaving.remove(lane)

    def _prepare(self, swap: _Swap, tier: Tier, legs: LegTable) -> None:
        lane = swap.lane
        for event in lane.poll():
            if isinstance(event, TERMINAL_EVENTS) and event.handle == swap.test:
                self._tested(swap, event)
        if self._swap is not swap:
            return
        if swap.state == "loading":
            loading = lane.load_progress()
            if loading.state == "degraded":
                self._give_up(swap, loading.error or "the model could not be loaded")
            elif loading.state == "ready":
                self._test(swap)
        elif swap.state == "warming" and not lane.warming:
            self._switch(swap, tier, legs)

    def _test(self, swap: _Swap) -> None:
        swap.tries += 1
        swap.state = "testing"
        swap.test = swap.lane.submit(
            LineRequest(
                npc_id=-1,
                priority=Priority.PLAYER_CHAT,
                signature=f"{TEST_SIGNATURE}:{swap.tries}",
                prompt=SELF_TEST_PROMPT,
                snapshot=None,
                deadline_s=_TEST_BUDGET_S,
                timeout_s=_TEST_BUDGET_S,
                max_tokens=SELF_TEST_TOKENS,
            )
        )

    def _tested(self, swap: _Swap, event: TerminalEvent) -> None:
        if isinstance(event, LineCompleted):
            logger.info("model swap: %s wrote %r as its test line", swap.name, event.text)
            swap.state = "warming"
            warm_up = swap.warm_ups.get(swap.lane.load_progress().prompt_style)
            if warm_up is not None:
                swap.lane.warm(warm_up)
            return
        swap.failures.append("timeout" if isinstance(event, RequestTimedOut) else event.reason)
        if swap.tries < _TEST_TRIES:
            self._test(swap)
        else:
            failures = ", ".join(swap.failures)
            self._give_up(swap, f"its test line failed {swap.tries} times ({failures})")

    def _switch(self, swap: _Swap, tier: Tier, legs: LegTable) -> None:
        """The new runtime takes the local tier's new work and the old one's queue."""
        old, new = tier.lanes[0], swap.lane
        on_old = {leg.handle.id: (key, leg) for key, (_, leg) in legs.items() if leg.lane is old}
        moved = new.take_over(old, [leg.handle for _, leg in on_old.values()])
        for old_id, handle in moved.items():
            key, leg = on_old[old_id]
            routed, _ = legs.pop(key)
            now_on_new = Leg(tier, new, handle, leg.submitted_at)
            routed.legs[routed.legs.index(leg)] = now_on_new
            legs[(id(new), handle.id)] = (routed, now_on_new)
        tier.lanes[0] = new
        swap.old, swap.moved, swap.state = old, len(moved), "finishing"
        logger.info(
            "model swap: %s takes over; %d queued requests moved to it", swap.name, len(moved)
        )

    def _finish(self, swap: _Swap, legs: LegTable, route: Route) -> None:
        old = swap.old
        assert old is not None
        for event in old.poll():
            route(old, event)
        if not swap.retired:
            if any(leg.lane is old for _, leg in legs.values()):
                return  # its line is not written yet
            # What is left there is the old model's own cache work: it goes with it.
            old.retire(successor=swap.lane)
            swap.retired = True
        if not old.stopped:
            return
        old.poll()
        old.shutdown()  # the thread has ended: this only tidies up
        self.retired.append(old.metrics())
        self._swap = None
        style = swap.lane.load_progress().prompt_style
        seconds = self._clock() - swap.began
        self._events.append(ModelSwapped(swap.name, style, seconds, swap.moved))
        logger.info(
            "model swap: %s serves every line now (%.1f s; prompt style %r); old model freed",
            swap.name,
            seconds,
            style,
        )

    def _give_up(self, swap: _Swap, reason: str) -> None:
        self._swap = None
        swap.lane.retire()
        self._refused.append(swap.lane)
        self._refuse(swap.name, reason)

    def _refuse(self, name: str, reason: str) -> None:
        self._events.append(SwapRefused(name, reason))
        logger.warning("model swap to %s refused; the current model serves on: %s", name, reason)

    # -- lifecycle -----------------------------------------------------------

    def shutdown(self) -> None:
        """Stop every runtime a swap brought up or is retiring; the next polls report them."""
        self._closed = True
        swap, self._swap = self._swap, None
        if swap is not None and swap.old is None:
            self._refused.append(swap.lane)
        elif swap is not None and swap.old is not None:
            # The new runtime, stopped after this one, puts the switch interval back.
            swap.old.retire(successor=swap.lane)
            self._leaving.append(swap.old)  # its line's end still goes to the game
        for lane in self._refused + self._leaving:
            lane.shutdown()
