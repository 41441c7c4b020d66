"""Greetings prepared before they are needed: notice, predict, use, settle.

Every few ticks the encounter predictor says which villagers the player is about to
reach. For each confident prediction worth the worker's time (``admission``) a greeting
is asked for at once, at predictive priority, and kept with its snapshot when it
arrives. While nothing waits for the worker, the nearest villager in view who has no
greeting ready gets one ahead of any approach, at ambient priority, so that any other
line goes first. When a villager greets the player, their farewell is asked for
the same way, and kept for the moment the player walks off. These prompts are built on
the main thread, a few tenths of a millisecond each: at most one in a tick, none in a
tick that built another line's, and none in a tick that updates the predictions, so
that their cost never piles up in one frame.

When the greeting's trigger fires the prepared line is shown in the same tick if it
still fits the world; if none is ready, the caller shows a template line in that tick,
and a request still in flight is cancelled and counted late: a greeting is never late.
A prediction that is withdrawn cancels its request, unless the worker is already
writing it for a villager in view: then it is kept for the next approach. A line nobody
needs expires; a line that a hit or a fall has made wrong, or that was written before
the villager's attitude, errand or memories changed, is dropped. Every outcome is
counted.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace

from ai import LineRuntime, Priority
from game.dialogue.admission import Admission, WorkerTime
from game.dialogue.disruptions import Disruptions
from game.dialogue.line_source import LineAsk, LineEvent, LineOrigin, LineReady
from game.dialogue.prediction import EncounterPredictor
from game.dialogue.records import LineKind, LineRecord, LineRecords
from game.dialogue.request_builder import RequestBuilder
from game.dialogue.timing import Timing
from game.dialogue.validation import Checker, LineSnapshot
from game.dialogue.worth import value
from game.headless.report import PredictionReport
from game.sim.events import Trigger
from game.sim.status import Motion
from game.sim.ticks import ticks
from game.sim.world import World

logger = logging.getLogger(__name__)

Emit = Callable[[LineEvent], None]


@dataclass(frozen=True, slots=True)
class PreparedLine:
    """A finished greeting waiting for its trigger, until ``expires_tick``."""

    text: str
    snapshot: LineSnapshot
    expires_tick: int
    tier: str
    request_id: int
    key: tuple[object, ...] = ()
    """What it was written from (:meth:`RequestBuilder.situation_key`)."""


#: The chance given to a greeting prepared ahead of any approach: most are used, later.
_AHEAD_CHANCE = 0.3
#: ... and to a farewell asked as the villager greets: the player leaves sooner or later.
_PARTING_CHANCE = 0.6


#: Greetings are prepared for villagers who may greet within this long: one whose wait
#: since their last greeting ends while the player is about greets the moment it does.
#: Prepared only once it had ended, those greetings were late: in village seed 23, four
#: villagers the player stayed near greeted 6 to 51 ticks after their wait ended.
_GREET_LEAD_TICKS = ticks(3.0)

#: A shed prediction is judged again this many ticks later (a fifth of a second).
_JUDGE_AGAIN_TICKS = 12

#: Faster than this (units per second) along x, the player is walking somewhere.
_WALKING = 20.0


def _reach(dx: float, heading: float) -> float:
    """How far the player is from a villager ``dx`` away, for ordering greetings ahead:
    one the player walks towards counts half as far."""
    return abs(dx) * (0.5 if dx * heading > 0.0 else 1.0)


class GreetingPreparer:
    """At most one greeting per villager: in flight (a record) or ready (here).

    Each prediction ends one way, and each way is counted: ``used`` (its trigger fired
    and the line was shown), ``expired`` (never needed within its time to live),
    ``cancelled`` (the prediction failed while the request was queued, or running for
    a villager out of view: one in view is left to finish, ``kept``),
    ``stale`` (it no longer fit the world when it was needed) or ``failed`` (the model
    gave no usable line).
    """

    def __init__(
        self,
        runtime: LineRuntime,
        world: World,
        builder: RequestBuilder,
        records: LineRecords,
        checker: Checker,
        disruptions: Disruptions,
        timing: Timing,
        rate_limit_s: float,
        emit: Emit,
        admission: Admission | None = None,
        worker_time: WorkerTime | None = None,
        ahead: bool = True,
    ) -> None:
        self._runtime = runtime
        self._admission = admission
        self._worker_time = worker_time or WorkerTime()
        self._world = world
        self._builder = builder
        self._records = records
        self._checker = checker
        self._disruptions = disruptions
        self._timing = timing
        self._emit = emit
        # Respect the runtime's per-villager rate limit, so a quick re-approach asks
        # again once it may instead of being refused.
        self._retry_ticks = ticks(rate_limit_s) + 1
        self._predictor = EncounterPredictor(
            world.talk_radius, horizon_s=4.0, confirm_updates=2, withdraw_updates=7
        )
        self.ready: dict[int, PreparedLine] = {}
        self.outcomes: Counter[str] = Counter()
        self.issued = 0
        self.ahead = 0
        self.ahead_enabled = ahead
        """Whether greetings (and farewells) are written ahead of any approach."""
        self._asked_tick: dict[int, int] = {}
        self._shed_until: dict[int, int] = {}
        """Villagers whose prediction was shed, and the tick it may be judged again."""
        self.raised = 0
        """Greetings written ahead that an approach raised to a prediction's priority."""
        self.kept = 0
        """Withdrawn predictions left to finish, as greetings ready for a later approach."""
        self._keys: dict[int, tuple[object, ...]] = {}
        self.partings: dict[int, PreparedLine] = {}
        """Farewells written while the player is with the villager, for when they leave."""
        self.parting_outcomes: Counter[str] = Counter()
        self.templates: Counter[str] = Counter()
        """Greetings that had no model line in their tick, by why (:meth:`_why_none`)."""
        self._ended: dict[int, str] = {}
        """How each villager's last greeting request ended, until the next is asked."""
        self._partings_due: dict[int, LineAsk] = {}
        """Villagers who have greeted the player and whose farewell is still to be asked."""
        self._shown_tick = -1
        """The tick a greeting or farewell fired last: it has work enough in that tick."""
        self._player_id = world.player_status().id
        self._motions: tuple[Motion, list[Motion]] | None = None
        """The player's and the greeters' motions at the last update, until a greeting
        written ahead has been considered from them (once per update)."""

    def use_settings(self, rate_limit_s: float, admission: Admission | None, ahead: bool) -> None:
        """Retry after the runtime's new rate limit; judge by ``admission`` (None: queue);
        write greetings ahead or not."""
        self._retry_ticks = ticks(rate_limit_s) + 1
        self._admission = admission
        self.ahead_enabled = ahead

    # -- notice and predict ---------------------------------------------------

    def _may_build(self, tick: int) -> bool:
        """Whether no line's prompt was built in ``tick`` yet, nor a prepared line shown:
        one prepared ahead may be."""
        return self._builder.built_tick != tick and self._shown_tick != tick

    def predict(self, tick: int) -> None:
        """Update the predictions: cancel withdrawn ones, raise greetings written ahead
        that the player now heads for. What is to be asked is asked by :meth:`ask_next`,
        in a later tick: the update and a prompt's build together made the dialogue's
        slowest ticks."""
        world = self._world
        player = world.player_status()
        me = Motion(player.id, player.x, player.y, player.vx, player.vy)
        greeters = world.greeter_motions(_GREET_LEAD_TICKS)
        self._motions = (me, greeters)
        for change in self._predictor.update(me, greeters):
            self._shed_until.pop(change.npc_id, None)
            record = None if change.started else self._records.prediction_for(change.npc_id)
            if record is None:
                continue
            if self._worth_finishing(record):
                self.kept += 1  # it becomes a greeting ready for the next approach
            else:
                self._withdraw(record, "cancelled")
        for npc_id, eta_s in self._predictor.active.items():
            if not self._may_ask(tick, npc_id):
                self._raise_ahead(npc_id, eta_s)

    def ask_next(self, tick: int) -> None:
        """Ask for the most pressing line still to be prepared, if no line's prompt was
        built in ``tick`` yet: a predicted encounter, then a farewell, then a greeting
        written ahead. One prompt at most, so that their cost never piles up in a frame;
        what is left is asked in a later tick."""
        if not self._may_build(tick):
            return
        for npc_id, eta_s in self._predictor.active.items():
            if self._may_ask(tick, npc_id):
                self._ask(tick, npc_id, self._player_id, eta_s)
                if not self._may_build(tick):
                    return
        if self._partings_due:
            npc_id, greeting = next(iter(self._partings_due.items()))
            del self._partings_due[npc_id]
            self._ask_parting(tick, greeting)
            if not self._may_build(tick):
                return
        motions, self._motions = self._motions, None
        if (
            motions is not None
            and self.ahead_enabled
            and self._admission is not None
            and self._room_ahead()
        ):
            self._ask_ahead(tick, *motions)

    def _aheads(self) -> list[LineRecord]:
        """The greetings in flight that are written ahead of any approach (ambient)."""
        return [
            record
            for record in self._records.of_kind(LineKind.PREDICTION)
            if record.request.priority is Priority.AMBIENT
        ]

    def _queued_aheads(self) -> int:
        """How many greetings written ahead wait for the worker (not yet started)."""
        return sum(1 for r in self._aheads() if not self._worker_time.running(r.handle.id))

    def _room_ahead(self) -> bool:
        """Whether a greeting may be written ahead now: nothing waits for the worker and
        no other is in flight. It may queue behind the line being written, as the
        worker's next job: whatever is asked meanwhile goes before it, and stops it
        if it has started (``ai.scheduler.preempts``). Asked only when the worker was
        idle, one in five greetings found none ready, mostly because the worker had
        been busy all along as the player walked up (village seed 3)."""
        runtime = self._runtime
        return not (runtime.warming or runtime.queue_depth or self._aheads())

    def _may_ask(self, tick: int, npc_id: int) -> bool:
        last_asked = self._asked_tick.get(npc_id, -self._retry_ticks)
        return (
            self._wants(npc_id)
            and tick - last_asked >= self._retry_ticks
            and tick >= self._shed_until.get(npc_id, 0)
        )

    def _worth_finishing(self, record: LineRecord) -> bool:
        """Whether a withdrawn prediction's request should run to its end anyway: the
        worker is already writing it and its villager is in view, so the line will
        likely greet the player's next approach, as one written ahead would. Stopping it
        would throw away the seconds spent; one still queued costs nothing to stop."""
        admission = self._admission
        return (
            admission is not None
            and self.ahead_enabled
            and self._worker_time.running(record.handle.id)
            and admission.sight(record.npc_id).on_screen
        )

    def _raise_ahead(self, npc_id: int, eta_s: float) -> None:
        """The player is now heading for a villager whose greeting is being written
        ahead, at ambient priority: give it the prediction's value and priority, so
        that it is neither stopped nor kept waiting for other villagers' lines."""
        record = self._records.prediction_for(npc_id)
        admission = self._admission
        if record is None or admission is None or record.request.priority > Priority.AMBIENT:
            return
        verdict = admission.judge(
            npc_id,
            Trigger.GREET,
            window_s=record.request.deadline_s,
            eta_s=eta_s,
            ttl_s=self._timing.prepared_ttl_s,
        )
        if verdict.admitted and self._runtime.promote(
            record.handle, Priority.PREDICTIVE, verdict.value
        ):
            record.request = replace(
                record.request, priority=Priority.PREDICTIVE, value=verdict.value
            )
            self.raised += 1

    def _ask_ahead(self, tick: int, me: Motion, greeters: list[Motion]) -> None:
        """Write the greeting of the villager in view the player will likely reach first,
        among those who have none: the nearest in view, counting one ahead of the
        player's walk as half as far as one behind.

        Judged from the motions of the last update, a tick or two old: a villager who
        has greeted since is no longer among the greeters, and is left out."""
        admission = self._admission
        assert admission is not None
        heading = 1.0 if me.vx > _WALKING else -1.0 if me.vx < -_WALKING else 0.0
        nearest = sorted(
            (_reach(motion.x - me.x, heading), motion.id)
            for motion in greeters
            if admission.in_view(motion.x - me.x) and self._may_ask(tick, motion.id)
        )
        world = self._world
        for _, npc_id in nearest:
            if world.would_greet(npc_id, _GREET_LEAD_TICKS):
                self._ask(tick, npc_id, me.id, None)
                return

    def _wants(self, npc_id: int) -> bool:
        return npc_id not in self.ready and self._records.prediction_for(npc_id) is None

    def _withdraw(self, record: LineRecord, outcome: str) -> None:
        """Stop a prediction's request; its worker time so far is booked as ``outcome``."""
        self._runtime.cancel(record.handle)
        self._records.remove(record.handle)
        self._keys.pop(record.handle.id, None)
        self._worker_time.settle(record.handle.id, outcome)
        self._end(self._outcomes_of(record.kind), record.npc_id, outcome)

    def _outcomes_of(self, kind: LineKind) -> Counter[str]:
        return self.parting_outcomes if kind is LineKind.PARTING else self.outcomes

    def _end(self, outcomes: Counter[str], npc_id: int, outcome: str) -> None:
        """Count how one prepared line ended; a greeting's is kept for :meth:`_why_none`."""
        outcomes[outcome] += 1
        if outcomes is self.outcomes:
            self._ended[npc_id] = outcome

    def _why_none(self, npc_id: int) -> str:
        """Why a villager greets with no model line ready: their last request was late
        (still being written), failed, stale, cancelled or expired; or none was asked
        since the last one was used ("unasked": shed, rate limited, or the worker had
        no time for it; "shed" when the approach was judged not worth it)."""
        ended = self._ended.pop(npc_id, "used")
        return "unasked" if ended == "used" else ended

    def _ask_parting(self, tick: int, greeting: LineAsk) -> None:
        """The villager has greeted: write their farewell while the player stays.

        Only when nothing but a greeting written ahead is waiting for the worker:
        behind a queue, it would be written after the player has gone (measured: most
        were, in the errand bot's village)."""
        npc_id = greeting.npc_id
        admission = self._admission
        if (
            admission is None
            or not self.ahead_enabled
            or self._runtime.queue_depth > self._queued_aheads()
            or npc_id in self.partings
            or self._records.prediction_for(npc_id, LineKind.PARTING) is not None
        ):
            return
        ask = LineAsk(tick, npc_id, Trigger.FAREWELL, greeting.listener_id)
        request = self._builder.request(ask, True, priority=Priority.AMBIENT)
        cost = admission.cost_s(request)
        request = replace(request, value=value(Trigger.FAREWELL, _PARTING_CHANCE, cost))
        handle = self._runtime.submit(request)
        self._records.add(LineRecord(LineKind.PARTING, handle, request, ask=None))
        self._keys[handle.id] = self._builder.situation_key(npc_id, Trigger.FAREWELL)
        self.parting_outcomes["issued"] += 1

    def _ask(self, tick: int, npc_id: int, player_id: int, eta_s: float | None) -> None:
        """Ask for a greeting: for a predicted encounter ``eta_s`` away, or ahead (None).

        A prediction shed (its line would not be seen) is judged again a moment later,
        not after the rate limit: nothing was submitted, and the villager may come into
        view or the queue clear while the player is still on the way. It is counted as
        shed once per prediction.
        """
        admission = self._admission
        ask = LineAsk(tick, npc_id, Trigger.GREET, player_id)
        if eta_s is None:
            assert admission is not None
            request = self._builder.request(ask, True, priority=Priority.AMBIENT)
            cost = admission.cost_s(request)
            request = replace(request, value=value(Trigger.GREET, _AHEAD_CHANCE, cost))
            self.ahead += 1
        elif admission is None:
            request = self._builder.request(ask, True)
        else:  # judged before its prompt is built: most judgements of a crowd shed
            verdict = admission.judge(
                npc_id,
                Trigger.GREET,
                window_s=self._builder.deadline_s(Priority.PREDICTIVE),
                eta_s=eta_s,
                ttl_s=self._timing.prepared_ttl_s,
            )
            if not verdict.admitted:
                self._shed(tick, npc_id, admission)
                return
            request = replace(self._builder.request(ask, True), value=verdict.value)
        self._asked_tick[npc_id] = tick
        self._shed_until.pop(npc_id, None)
        self._ended.pop(npc_id, None)
        handle = self._runtime.submit(request)
        self._records.add(LineRecord(LineKind.PREDICTION, handle, request, ask=None))
        self._keys[handle.id] = self._builder.situation_key(npc_id, Trigger.GREET)
        self.issued += 1

    def _shed(self, tick: int, npc_id: int, admission: Admission) -> None:
        """A prediction not worth the worker's time now: judged again a moment later,
        counted once."""
        if npc_id not in self._shed_until:
            admission.count_shed(Trigger.GREET)
        self._shed_until[npc_id] = tick + _JUDGE_AGAIN_TICKS

    def drop_outdated(self, tick: int) -> None:
        """Drop ready lines that were disrupted since they were asked for, or expired.

        A disrupted line goes at once, so that a fresh one can be asked for while the
        player is still on the way.
        """
        for lines, outcomes, trigger in (
            (self.ready, self.outcomes, Trigger.GREET),
            (self.partings, self.parting_outcomes, Trigger.FAREWELL),
        ):
            for npc_id, line in list(lines.items()):
                if (
                    self._disruptions.last(npc_id) >= line.snapshot.tick
                    or self._builder.situation_key(npc_id, trigger) != line.key
                ):
                    del lines[npc_id]
                    self._checker.stale["topic_changed"] += 1
                    self._end(outcomes, npc_id, "stale")
                    self._worker_time.settle(line.request_id, "rejected")
                elif tick > line.expires_tick:
                    del lines[npc_id]
                    self._end(outcomes, npc_id, "expired")
                    self._worker_time.settle(line.request_id, "expired")

    # -- use ------------------------------------------------------------------

    def use(self, ask: LineAsk) -> bool:
        """The greeting fired: show the prepared line if it is ready and still fits.

        Returns False when there is none, and the caller shows a template line in this
        tick. A request still in flight would be late: it is cancelled and counted.
        """
        self._predictor.forget(ask.npc_id)
        self._shown_tick = ask.tick
        shed = self._shed_until.pop(ask.npc_id, None) is not None
        if self._admission is not None and self.ahead_enabled:
            self._partings_due[ask.npc_id] = ask
        if self._use_ready(ask, self.ready, self.outcomes, LineKind.PREDICTION):
            return True
        why = self._why_none(ask.npc_id)
        self.templates["shed" if shed and why == "unasked" else why] += 1
        return False

    def use_parting(self, ask: LineAsk) -> bool:
        """The player walks off: show the farewell written while they stayed, if it fits.

        False when there is none, and the caller answers as for any farewell. One still
        being written would come after the player has gone: it is cancelled, counted late.
        """
        self._partings_due.pop(ask.npc_id, None)
        self._shown_tick = ask.tick
        return self._use_ready(ask, self.partings, self.parting_outcomes, LineKind.PARTING)

    def use_or_wait(self, ask: LineAsk) -> bool:
        """As before value admission: show the prepared line, or let the request in
        flight answer the greeting whenever it ends (a late line). False when neither."""
        self._predictor.forget(ask.npc_id)
        self._shed_until.pop(ask.npc_id, None)
        prepared = self.ready.pop(ask.npc_id, None)
        if prepared is not None:
            return self._show(ask, prepared, ask.tick, self.outcomes)
        record = self._records.prediction_for(ask.npc_id)
        if record is None:
            return False
        record.promote(ask)
        return True

    def _use_ready(
        self,
        ask: LineAsk,
        lines: dict[int, PreparedLine],
        outcomes: Counter[str],
        kind: LineKind,
    ) -> bool:
        """Show the line ready in ``lines`` for ``ask``'s villager; else cancel the one
        still being written, as late. Whether a line was shown."""
        prepared = lines.pop(ask.npc_id, None)
        if prepared is not None:
            return self._show(ask, prepared, ask.tick, outcomes)
        record = self._records.prediction_for(ask.npc_id, kind)
        if record is not None:
            logger.debug(
                "%s for npc %d late: asked at tick %d, %s at tick %d",
                kind.value,
                ask.npc_id,
                record.snapshot.tick,
                "running" if self._worker_time.running(record.handle.id) else "queued",
                ask.tick,
            )
            self._withdraw(record, "late")
        return False

    # -- settle ---------------------------------------------------------------

    def settle(
        self, record: LineRecord, text: str, origin: LineOrigin, tier: str, tick: int
    ) -> None:
        """A greeting request ended with ``text`` (by ``tier``): keep, show, or count why not."""
        snapshot = record.snapshot
        request_id = record.handle.id
        key = self._keys.pop(request_id, ())
        outcomes = self._outcomes_of(record.kind)
        if origin == "fallback":
            self._end(outcomes, record.npc_id, "failed")
            self._worker_time.settle(request_id, "failed")
            if record.ask is not None and self._checker.reject(snapshot, tick) is None:
                live = self._checker.live(snapshot)
                self._emit(
                    LineReady(record.ask, text, "fallback", snapshot, live, tier, request_id)
                )
        elif record.ask is None:
            expires = snapshot.tick + self._timing.ttl_ticks(Trigger.GREET, predictive=True)
            line = PreparedLine(text, snapshot, expires, tier, request_id, key)
            parting = record.kind is LineKind.PARTING
            trigger = Trigger.FAREWELL if parting else Trigger.GREET
            if key == self._builder.situation_key(record.npc_id, trigger):
                lines = self.partings if parting else self.ready
                lines[record.npc_id] = line
            else:  # written from what the villager no longer feels or remembers
                self._checker.stale["topic_changed"] += 1
                self._end(outcomes, record.npc_id, "stale")
                self._worker_time.settle(request_id, "rejected")
        else:
            line = PreparedLine(text, snapshot, 0, tier, request_id)
            self._show(record.ask, line, tick, outcomes)

    def _show(self, ask: LineAsk, line: PreparedLine, tick: int, outcomes: Counter[str]) -> bool:
        """Show a prepared line if it still fits the world; count the outcome in
        ``outcomes`` either way."""
        snapshot = line.snapshot
        stale = self._checker.reject(snapshot, tick) is not None
        if not stale and self._builder.echoes_recent(ask.npc_id, line.text):
            # Written before the villager's latest words were known: a farewell asked as
            # they greet came out as their greeting again ("Good day, friend." twice).
            self._checker.stale["echo"] += 1
            stale = True
        if stale:
            self._end(outcomes, ask.npc_id, "stale")
            self._worker_time.settle(line.request_id, "rejected")
            return False
        self._end(outcomes, ask.npc_id, "used")
        self._worker_time.settle(line.request_id, "shown")
        live = self._checker.live(snapshot)
        self._emit(
            LineReady(ask, line.text, "prepared", snapshot, live, line.tier, line.request_id)
        )
        return True

    def report(self) -> PredictionReport:
        """Counts for the headless report."""
        in_flight = sum(1 for _ in self._records.of_kind(LineKind.PREDICTION))
        outcomes = self.outcomes
        return PredictionReport(
            issued=self.issued,
            used=outcomes["used"],
            expired=outcomes["expired"],
            cancelled=outcomes["cancelled"],
            stale=outcomes["stale"],
            failed=outcomes["failed"],
            late=outcomes["late"],
            in_flight=in_flight,
            ready=len(self.ready),
            ahead=self.ahead,
            raised=self.raised,
            kept=self.kept,
            farewells={k: v for k, v in sorted(self.parting_outcomes.items()) if v},
            templates={k: v for k, v in sorted(self.templates.items()) if v},
        )
