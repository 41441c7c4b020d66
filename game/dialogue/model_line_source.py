"""Lines written by the language model, without the game ever waiting for them.

This is the game's side of the AI runtime. Each tick it predicts encounters and asks for
greetings ahead of time, drains the runtime's events, streams chat replies, and holds
every finished line against the live world before handing it on. In "sync" mode it is
the naive design instead: the tick submits and blocks until the line is done. That mode
exists only to show, side by side, the stall the async design avoids.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ai import (
    AiEvent,
    AiRuntime,
    FallbackUsed,
    Handle,
    LineCompleted,
    RequestStarted,
    SchedulerConfig,
    TokenStreamed,
)
from game.dialogue.request_builder import Asker, Timing, live_facts
from game.dialogue.line_source import LineAsk, LineCut, LineEvent, LineOrigin, LinePartial, LineReady
from game.dialogue.memory import Memories
from game.dialogue.model_report import hud_rows, runtime_report
from game.dialogue.prediction import EncounterPredictor
from game.dialogue.prepared import PreparedLine, PreparedLines
from game.dialogue.persona_prompt import Persona
from game.dialogue.templates import TemplateLines
from game.dialogue.validation import Limits, LineSnapshot, validate
from game.views import LoadView
from game.sim.events import GameEvent, NpcKnockedDown, PropHitNpc, StackToppled, Trigger
from game.sim.status import Motion
from game.sim.world import World

logger = logging.getLogger(__name__)

AiMode = Literal["async", "sync"]

_STREAM_EVERY = 3  # re-render a streaming bubble at most every few tokens
# Encounters are predicted seconds ahead, so 20 updates a second are plenty; the ticks
# in between spend nothing on prediction.
_PREDICT_EVERY = 3
# One event seen by a whole crowd (a toppled stack) must not flood the queue: the first
# few onlookers get model lines, the rest answer at once from their templates.
_CROWD_TRIGGERS = frozenset({Trigger.TOPPLED})
_MODEL_VOICES_PER_EVENT = 2
# A topple further away than this goes unnoticed: beyond any villager's notice radius.
_ONLOOKER_REACH = 500.0


@dataclass(slots=True)
class _Pending:
    ask: LineAsk | None  # None while a prediction waits for its trigger
    snapshot: LineSnapshot
    tokens: int = 0


class ModelLineSource:
    """A ``LineSource`` backed by the AI runtime; see the module docstring."""

    def __init__(
        self,
        runtime: AiRuntime,
        world: World,
        personas: Mapping[int, Persona],
        context: str,
        memories: Memories,
        templates: TemplateLines,
        scheduler: SchedulerConfig,
        mode: AiMode = "async",
        timing: Timing | None = None,
        sync_wait_s: float = 5.0,
    ) -> None:
        self.runtime = runtime
        self.world = world
        self._asker = Asker(world, personas, context, memories, scheduler)
        self._rate_limit_s = scheduler.rate_limit_s
        self._templates = templates
        self._mode: AiMode = mode
        self._timing = timing or Timing()
        self._sync_wait_s = sync_wait_s
        self._predictor = EncounterPredictor(
            world.talk_radius, horizon_s=2.5, confirm_updates=2, withdraw_updates=7
        )
        self.prepared = PreparedLines()
        self._pending: dict[int, _Pending] = {}
        self._chats: dict[int, Handle] = {}
        self._promoted: dict[int, LineAsk] = {}
        self._disrupted: dict[int, int] = {}
        self._voices: dict[tuple[int, Trigger], int] = {}
        self._issued: dict[int, int] = {}
        self._warmed = False
        self.record_facts = False
        self._out: list[LineEvent] = []
        self.stale: Counter[str] = Counter()
        self.template_while_loading = 0

    # -- LineSource ----------------------------------------------------------

    @property
    def mode(self) -> str:
        """ "async" (zero-stall) or "sync" (the naive baseline)."""
        return self._mode

    def toggle_mode(self) -> str:
        """Swap async and sync. Both go through the one worker, so switching is safe."""
        self._mode = "sync" if self._mode == "async" else "async"
        return self._mode

    def notice(self, tick: int, events: Sequence[GameEvent]) -> None:
        """Remember disruptive events: a prepared line made before one no longer fits.

        A ready prepared line is discarded at once, so that a fresh one can be asked
        for while the player is still on the way (once the rate limit allows it).
        """
        for event in events:
            if isinstance(event, PropHitNpc | NpcKnockedDown):
                self._disrupt(event.npc_id, tick)
            elif isinstance(event, StackToppled):
                for npc_id in self._onlookers(event.prop_ids):
                    self._disrupt(npc_id, tick)

    def _onlookers(self, prop_ids: tuple[int, ...]) -> list[int]:
        """Villagers close enough to a toppled stack for it to change their mood."""
        where = self.world.entity_position(prop_ids[0]) if prop_ids else None
        if where is None:
            return []
        reach = _ONLOOKER_REACH
        out = []
        for npc_id in self.world.npc_ids():
            npc = self.world.npc(npc_id)
            if npc is not None and abs(npc.x - where[0]) <= reach:
                out.append(npc_id)
        return out

    def _disrupt(self, npc_id: int, tick: int) -> None:
        self._disrupted[npc_id] = tick
        if self.prepared.take(npc_id) is not None:
            self.prepared.settle(npc_id, "stale")
            self.stale["topic_changed"] += 1

    def request(self, ask: LineAsk) -> None:
        """Answer from a prepared line, a prediction in flight, or a new request."""
        if self.runtime.load_progress().state != "ready":
            # Loading or degraded: the template answers now rather than after a queue.
            self.template_while_loading += 1
            self._out.append(LineReady(ask, self._template(ask), "template"))
            return
        if ask.trigger in _CROWD_TRIGGERS:
            key = (ask.tick, ask.trigger)
            self._voices[key] = self._voices.get(key, 0) + 1
            if self._voices[key] > _MODEL_VOICES_PER_EVENT:
                self._out.append(LineReady(ask, self._template(ask), "template"))
                return
        if ask.trigger is Trigger.GREET and self._mode == "async":
            self._predictor.forget(ask.npc_id)
            if self._use_prediction(ask):
                return
        snapshot = self._asker.snapshot(ask, predictive=False)
        handle = self.runtime.submit(self._asker.request(ask, snapshot))
        pending = self._pending.get(handle.id)
        if pending is None:
            self._pending[handle.id] = _Pending(ask, snapshot)
            if ask.trigger is Trigger.CHAT:
                self._chats[handle.id] = handle
        elif pending.ask is None:
            # Merged into this villager's prediction, still running from before a switch
            # to sync mode: its line answers the ask, as a promoted prediction does.
            self._promoted[ask.npc_id] = ask
        if ask.trigger is Trigger.CHAT:
            self._out.append(LinePartial(ask.npc_id, ""))
        if self._mode == "sync":
            for event in self.runtime.wait(handle, self._sync_wait_s):
                self._handle(event, ask.tick)

    def poll(self, tick: int) -> list[LineEvent]:
        """Predict, expire, drain the runtime, and return what is ready to show."""
        ready = self.runtime.load_progress().state == "ready"
        if ready and not self._warmed:
            self._warm_up(tick)
        if self._mode == "async" and ready and tick % _PREDICT_EVERY == 0:
            self._predict(tick)
        self.prepared.expire(tick)
        self._voices.clear()
        for event in self.runtime.poll():
            self._handle(event, tick)
        self._watch_chats(tick)
        out, self._out = self._out, []
        return out

    def _watch_chats(self, tick: int) -> None:
        """Cut a chat reply the moment it stops fitting, even between tokens."""
        for handle_id, handle in list(self._chats.items()):
            pending = self._pending.get(handle_id)
            if pending is None:
                del self._chats[handle_id]
                continue
            reason = self._check(pending.snapshot, tick)
            if reason is not None:
                self._cut(handle, pending, reason)

    def _warm_up(self, tick: int) -> None:
        """Put the shared prompt prefix into the model's cache before anyone needs it.

        The first prompt pays for reading the whole shared context (over a second on a
        small CPU); every later one reuses it. Its answer is never shown.
        """
        self._warmed = True
        npc_id = self.world.npc_ids()[0]
        ask = LineAsk(tick, npc_id, Trigger.AMBIENT, None)
        request = self._asker.request(ask, self._asker.snapshot(ask, predictive=False))
        self.runtime.submit(replace(request, signature="warm-up", max_tokens=1))

    # -- prediction ----------------------------------------------------------

    def _predict(self, tick: int) -> None:
        world = self.world
        player = world.player_status()
        me = Motion(player.id, player.x, player.y, player.vx, player.vy)
        for change in self._predictor.update(me, world.greeter_motions()):
            npc_id = change.npc_id
            if not change.started and npc_id in self.prepared.in_flight:
                handle = self.prepared.in_flight[npc_id]
                self.runtime.cancel(handle)
                self._pending.pop(handle.id, None)
                self.prepared.settle(npc_id, "cancelled")
        # Ask for every confident prediction that has nothing yet, respecting the runtime's
        # per-villager rate limit so that a quick re-approach retries instead of failing.
        gap = round(self._rate_limit_s * self._timing.hz) + 1
        for npc_id in self._predictor.active:
            if self.prepared.wants(npc_id) and tick - self._issued.get(npc_id, -gap) >= gap:
                self._issued[npc_id] = tick
                ask = LineAsk(tick, npc_id, Trigger.GREET, player.id)
                snapshot = self._asker.snapshot(ask, predictive=True)
                handle = self.runtime.submit(self._asker.request(ask, snapshot, predictive=True))
                self._pending[handle.id] = _Pending(None, snapshot)
                self.prepared.issue(npc_id, handle)

    def _use_prediction(self, ask: LineAsk) -> bool:
        """Show a prepared line now, or wait for one in flight; False if there is none."""
        prepared = self.prepared.take(ask.npc_id)
        if prepared is not None:
            reason = self._check(prepared.snapshot, ask.tick)
            if reason is None:
                self.prepared.settle(ask.npc_id, "used")
                self._out.append(
                    LineReady(
                        ask,
                        prepared.text,
                        "prepared",
                        prepared.snapshot,
                        self._live(prepared.snapshot),
                    )
                )
                return True
            self.prepared.settle(ask.npc_id, "stale")
            self.stale[reason] += 1
            return False
        if ask.npc_id in self.prepared.in_flight:
            self._promoted[ask.npc_id] = ask
            return True
        return False

    # -- runtime events ------------------------------------------------------

    def _handle(self, event: AiEvent, tick: int) -> None:
        pending = self._pending.get(event.handle.id)
        if pending is None:
            return
        snapshot = pending.snapshot
        npc_id = snapshot.npc_id
        if isinstance(event, TokenStreamed):
            self._stream(event, pending, tick)
        elif isinstance(event, RequestStarted):
            return
        elif isinstance(event, LineCompleted | FallbackUsed):
            del self._pending[event.handle.id]
            origin = "model" if isinstance(event, LineCompleted) else "fallback"
            if pending.ask is None:
                self._settle_prediction(npc_id, event.text, snapshot, origin, tick)
            else:
                self._finish(pending.ask, event.text, snapshot, origin, tick)

    def _stream(self, event: TokenStreamed, pending: _Pending, tick: int) -> None:
        ask = pending.ask
        if ask is None or ask.trigger is not Trigger.CHAT:
            return
        pending.tokens += 1
        reason = self._check(pending.snapshot, tick)
        if reason is not None:
            self._cut(event.handle, pending, reason)
        elif pending.tokens % _STREAM_EVERY == 1 and event.text_so_far:
            self._out.append(LinePartial(ask.npc_id, event.text_so_far))

    def _cut(self, handle: Handle, pending: _Pending, reason: str) -> None:
        """Stop a chat reply that no longer fits: cancel it and take its bubble down."""
        self.runtime.cancel(handle)
        self._pending.pop(handle.id, None)
        self._chats.pop(handle.id, None)
        self.stale[reason] += 1
        if pending.ask is not None:
            self._out.append(LineCut(pending.ask.npc_id, reason))

    def _settle_prediction(
        self, npc_id: int, text: str, snapshot: LineSnapshot, origin: str, tick: int
    ) -> None:
        promoted = self._promoted.pop(npc_id, None)
        if origin == "fallback":
            self.prepared.settle(npc_id, "failed")
            if promoted is not None:
                self._finish(promoted, text, snapshot, "fallback", tick)
            return
        if promoted is None:
            expires = snapshot.tick + self._timing.ttl_ticks(Trigger.GREET, predictive=True)
            self.prepared.store(npc_id, PreparedLine(text, snapshot, expires))
            return
        reason = self._check(snapshot, tick)
        if reason is None:
            self.prepared.settle(npc_id, "used")
            self._out.append(LineReady(promoted, text, "prepared", snapshot, self._live(snapshot)))
        else:
            self.prepared.settle(npc_id, "stale")
            self.stale[reason] += 1

    def _finish(
        self, ask: LineAsk, text: str, snapshot: LineSnapshot, origin: str, tick: int
    ) -> None:
        reason = self._check(snapshot, tick)
        if reason is not None:
            self.stale[reason] += 1
            logger.debug("dropped stale %s line for npc %d: %s", ask.trigger, ask.npc_id, reason)
            if ask.trigger is Trigger.CHAT:
                self._out.append(LineCut(ask.npc_id, reason))
            return
        shown_as: LineOrigin = "model" if origin == "model" else "fallback"
        self._out.append(LineReady(ask, text, shown_as, snapshot, self._live(snapshot)))

    # -- checks --------------------------------------------------------------

    def _limits(self, snapshot: LineSnapshot) -> Limits:
        return Limits(
            talk_radius=self.world.talk_radius,
            ttl_ticks=self._timing.ttl_ticks(snapshot.trigger, snapshot.predictive),
            last_disruption_tick=self._disrupted.get(snapshot.npc_id, -1),
        )

    def _check(self, snapshot: LineSnapshot, tick: int) -> str | None:
        return validate(snapshot, self.world, tick, self._limits(snapshot))

    def _live(self, snapshot: LineSnapshot) -> dict[str, object] | None:
        """The raw facts a check reads, for the bubble log (only gathered when logging)."""
        if not self.record_facts:
            return None
        return live_facts(self.world, snapshot, self._limits(snapshot))

    def _template(self, ask: LineAsk) -> str:
        listener = self._asker.listener_name(ask.listener_id)
        return self._templates.line(ask.npc_id, ask.trigger, listener)

    # -- status --------------------------------------------------------------

    def load_view(self) -> LoadView | None:
        """The model's load progress for the HUD."""
        progress = self.runtime.load_progress()
        return LoadView(progress.fraction, progress.stage, progress.state)

    def hud_stats(self) -> tuple[tuple[str, str], ...]:
        """Queue, latency and prediction figures for the HUD."""
        predictive = self.prepared.report()
        return hud_rows(self.runtime.metrics(), predictive, sum(self.stale.values()))

    def report(self) -> dict[str, object]:
        """The ``ai`` section of the headless report."""
        return {
            "mode": self._mode,
            **runtime_report(self.runtime.metrics()),
            "stale_dropped": dict(self.stale),
            "predictive": self.prepared.report(),
            "template_while_loading": self.template_while_loading,
            "load": self.runtime.load_progress().state,
        }

    def wait_ready(self, timeout_s: float) -> str:
        """Block until the model has loaded or failed to; for headless runs, never in a tick."""
        end = time.monotonic() + timeout_s
        while self.runtime.load_progress().state == "loading" and time.monotonic() < end:
            time.sleep(0.02)
        if self.runtime.load_progress().state == "ready":
            self.poll(self.world.tick)  # starts the warm-up
            while self.runtime.metrics().in_flight and time.monotonic() < end:
                time.sleep(0.02)
                self.poll(self.world.tick)
        return self.runtime.load_progress().state

    def close(self) -> None:
        """Stop the worker."""
        self.runtime.shutdown()
