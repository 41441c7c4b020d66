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
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from ai import (
    AiEvent,
    AiRuntime,
    FallbackUsed,
    Handle,
    LineCompleted,
    LineRequest,
    Priority,
    RequestStarted,
    SchedulerConfig,
    TokenStreamed,
)
from game.dialogue.lines import LineAsk, LineCut, LineEvent, LineOrigin, LinePartial, LineReady
from game.dialogue.memory import Memories
from game.dialogue.prediction import EncounterPredictor
from game.dialogue.prepared import PreparedLine, PreparedLines
from game.dialogue.prompting import Persona, build_prompt
from game.dialogue.templates import TemplateLines
from game.dialogue.validation import Limits, LineSnapshot, RefSnapshot, validate
from game.overlay import LoadView
from game.sim.events import GameEvent, NpcKnockedDown, PropHitNpc, StackToppled, Trigger
from game.sim.status import Motion
from game.sim.world import World

logger = logging.getLogger(__name__)

AiMode = Literal["async", "sync"]

# Everything else is reactive. A farewell to someone already walking off matters less
# than the greeting prepared for the next villager they are about to meet.
_PRIORITY: dict[Trigger, Priority] = {
    Trigger.CHAT: Priority.PLAYER_CHAT,
    Trigger.AMBIENT: Priority.AMBIENT,
    Trigger.FAREWELL: Priority.AMBIENT,
}
_STREAM_EVERY = 3  # re-render a streaming bubble at most every few tokens
# Encounters are predicted seconds ahead, so 20 updates a second are plenty; the ticks
# in between spend nothing on prediction.
_PREDICT_EVERY = 3
# One event seen by a whole crowd (a toppled stack) must not flood the queue: the first
# few onlookers get model lines, the rest answer at once from their templates.
_CROWD_TRIGGERS = frozenset({Trigger.TOPPLED})
_MODEL_VOICES_PER_EVENT = 2


@dataclass(frozen=True, slots=True)
class Timing:
    """Time limits, in ticks, for each kind of line."""

    hz: int = 60
    chat_ttl_s: float = 10.0
    reactive_ttl_s: float = 3.0
    ambient_ttl_s: float = 4.0
    prepared_ttl_s: float = 5.0

    def ttl_ticks(self, trigger: Trigger, predictive: bool) -> int:
        """How old a line may be, in ticks, when it appears."""
        if predictive:
            seconds = self.prepared_ttl_s
        elif trigger is Trigger.CHAT:
            seconds = self.chat_ttl_s
        elif trigger is Trigger.AMBIENT:
            seconds = self.ambient_ttl_s
        else:
            seconds = self.reactive_ttl_s
        return round(seconds * self.hz)


@dataclass(slots=True)
class _Pending:
    ask: LineAsk | None  # None while a prediction waits for its trigger
    snapshot: LineSnapshot
    tokens: int = 0


class TemplateFallback:
    """The runtime's fallback: the speaker's template line for the request's trigger."""

    def __init__(self, templates: TemplateLines) -> None:
        self._templates = templates

    def fallback_line(self, request: LineRequest) -> str:
        """A template line for the villager and trigger the request was for."""
        snapshot = request.snapshot
        trigger = snapshot.trigger if isinstance(snapshot, LineSnapshot) else Trigger.CHAT
        return self._templates.line(request.npc_id, trigger, "traveller")


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
        self._scheduler = scheduler
        self._deadlines = _deadlines(scheduler)
        self._player_id = world.player_status().id
        self.world = world
        self._personas = personas
        self._context = context
        self._memories = memories
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
        self._errand_titles: dict[int, str] | None = None
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

    def notice(self, tick: int, events: list[GameEvent]) -> None:
        """Remember disruptive events: a prepared line made before one no longer fits.

        A ready prepared line is discarded at once, so that a fresh one can be asked
        for while the player is still on the way (once the rate limit allows it).
        """
        for event in events:
            if isinstance(event, PropHitNpc | NpcKnockedDown):
                self._disrupt(event.npc_id, tick)
            elif isinstance(event, StackToppled):
                for npc_id in self.world.npc_ids():
                    self._disrupt(npc_id, tick)

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
        snapshot = self._snapshot(ask, predictive=False)
        handle = self.runtime.submit(self._line_request(ask, snapshot))
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
        request = self._line_request(ask, self._snapshot(ask, predictive=False))
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
        gap = round(self._scheduler.rate_limit_s * self._timing.hz) + 1
        for npc_id in self._predictor.active:
            if self.prepared.wants(npc_id) and tick - self._issued.get(npc_id, -gap) >= gap:
                self._issued[npc_id] = tick
                ask = LineAsk(tick, npc_id, Trigger.GREET, player.id)
                snapshot = self._snapshot(ask, predictive=True)
                handle = self.runtime.submit(self._line_request(ask, snapshot, predictive=True))
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

    # -- snapshots and checks ------------------------------------------------

    def _snapshot(self, ask: LineAsk, predictive: bool) -> LineSnapshot:
        world = self.world
        npc = world.npc(ask.npc_id)
        refs = []
        for ref_id in ask.refs:
            where = world.entity_position(ref_id)
            if where is not None:
                refs.append(RefSnapshot(ref_id, where[0], where[1]))
        distance = None if ask.listener_id is None else world.distance(ask.npc_id, ask.listener_id)
        return LineSnapshot(
            tick=ask.tick,
            npc_id=ask.npc_id,
            epoch=-1 if npc is None else npc.epoch,
            state="gone" if npc is None else npc.state,
            trigger=ask.trigger,
            listener_id=ask.listener_id,
            distance=distance,
            refs=tuple(refs),
            predictive=predictive,
        )

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
        world = self.world
        npc = world.npc(snapshot.npc_id)
        limits = self._limits(snapshot)
        return {
            "tick": world.tick,
            "epoch": None if npc is None else npc.epoch,
            "conscious": None if npc is None else npc.conscious,
            "can_talk": None if npc is None else npc.can_talk,
            "listener_distance": None
            if snapshot.listener_id is None
            else world.distance(snapshot.npc_id, snapshot.listener_id),
            "refs": {str(r.id): world.entity_position(r.id) for r in snapshot.refs},
            "talk_radius": limits.talk_radius,
            "ttl_ticks": limits.ttl_ticks,
            "last_disruption_tick": limits.last_disruption_tick,
        }

    # -- requests ------------------------------------------------------------

    def _line_request(
        self, ask: LineAsk, snapshot: LineSnapshot, predictive: bool = False
    ) -> LineRequest:
        persona = self._personas[ask.npc_id]
        listener = self._listener_name(ask.listener_id)
        subject = errand = ""
        if ask.trigger in (Trigger.ERRAND_OFFER, Trigger.ERRAND_DONE):
            if self._errand_titles is None:  # errands never change giver or title
                errands = self.world.snapshot().errands
                self._errand_titles = {e.giver_id: e.title for e in reversed(errands)}
            errand = self._errand_titles.get(ask.npc_id, "")
        elif ask.refs:
            subject = self.world.entity_kind(ask.refs[0]) or ""
        prompt = build_prompt(
            self._context,
            persona,
            ask.trigger,
            listener,
            self._memories.of(ask.npc_id),
            subject=subject,
            errand=errand,
            player_text=ask.player_text,
        )
        priority = (
            Priority.PREDICTIVE if predictive else _PRIORITY.get(ask.trigger, Priority.REACTIVE)
        )
        deadline, timeout = self._deadlines[priority]
        signature = (
            f"{ask.npc_id}:{ask.trigger.value}:{ask.listener_id}:{ask.refs}:{ask.player_text}"
        )
        return LineRequest(ask.npc_id, priority, signature, prompt, snapshot, deadline, timeout)

    def _listener_name(self, listener_id: int | None) -> str:
        if listener_id is None or listener_id == self._player_id:
            return "traveller"
        persona = self._personas.get(listener_id)
        return "a neighbour" if persona is None else persona.label

    def _template(self, ask: LineAsk) -> str:
        return self._templates.line(ask.npc_id, ask.trigger, self._listener_name(ask.listener_id))

    # -- status --------------------------------------------------------------

    def load_view(self) -> LoadView | None:
        """The model's load progress for the HUD."""
        progress = self.runtime.load_progress()
        return LoadView(progress.fraction, progress.stage, progress.state)

    def hud_stats(self) -> tuple[tuple[str, str], ...]:
        """Queue, latency and prediction figures for the HUD."""
        m = self.runtime.metrics()
        p = self.prepared.report()
        used, issued = p["used"], max(1, p["issued"])
        return (
            ("queue / in flight", f"{m.queue_depth} / {m.in_flight}"),
            ("first token p50", f"{m.ttft_s.p50 * 1000:.0f} ms"),
            ("tokens/s p50", f"{m.tokens_per_s.p50:.0f}"),
            ("predictive hit rate", f"{used}/{p['issued']} ({100 * used / issued:.0f}%)"),
            ("stale drops", str(sum(self.stale.values()))),
            ("fallbacks", str(sum(m.fallbacks.values()))),
        )

    def report(self) -> dict[str, object]:
        """The ``ai`` section of the headless report."""
        m = self.runtime.metrics()
        return {
            "mode": self._mode,
            "requests": dict(m.by_priority),
            "submitted": m.submitted,
            "merged": m.merged_duplicates,
            "completed": m.completed,
            "cancelled": m.cancelled,
            "preempted": m.preempted,
            "timed_out": m.timed_out,
            "failed": dict(m.failed),
            "dropped": dict(m.dropped),
            "fallbacks": dict(m.fallbacks),
            "stale_dropped": dict(self.stale),
            "predictive": self.prepared.report(),
            "template_while_loading": self.template_while_loading,
            "max_queue_depth": m.max_queue_depth,
            "tokens": m.tokens,
            "ttft_ms": _ms(m.ttft_s),
            "queue_wait_ms": _ms(m.queue_wait_s),
            "total_ms": _ms(m.total_s),
            "tokens_per_s": {
                "p50": round(m.tokens_per_s.p50, 1),
                "p95": round(m.tokens_per_s.p95, 1),
            },
            "api_call_ms": _ms(m.api_call_s),
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


def _deadlines(config: SchedulerConfig) -> dict[Priority, tuple[float, float]]:
    """The start deadline and whole-request timeout, in seconds, for each priority class."""
    return {
        Priority.PLAYER_CHAT: (config.deadline_player_chat_s, config.timeout_player_chat_s),
        Priority.REACTIVE: (config.deadline_reactive_s, config.timeout_reactive_s),
        Priority.PREDICTIVE: (config.deadline_predictive_s, config.timeout_predictive_s),
        Priority.AMBIENT: (config.deadline_ambient_s, config.timeout_ambient_s),
    }


def _ms(p: object) -> dict[str, float]:
    return {key: round(float(getattr(p, key)) * 1000.0, 3) for key in ("p50", "p95", "p99", "max")}
