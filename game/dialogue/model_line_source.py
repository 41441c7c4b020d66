"""Lines written by the language model, without the game ever waiting for them.

This is the game's side of the AI runtime. Each request it makes is one record in a
table (``records``). Each tick it drains the runtime's events and hands each to the
part that owns its kind of line: greetings prepared ahead (``greetings``), chat replies
streaming in (``chat_streams``), or reactions, which are checked against the live world
and shown. How the tick treats a request it just submitted, moving on or waiting, is a
separate strategy (``pacing``), so the naive sync mode is a swap, not a branch.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from ai import (
    PLAYER_TEXT_UNFIT,
    AiConfig,
    AiEvent,
    ConfigurableRuntime,
    FallbackUsed,
    LineCompleted,
    LineRequest,
    LineRuntime,
    ModelConfig,
    RequestStarted,
    SchedulerConfig,
    TokenStreamed,
)
from ai.events import TERMINAL_EVENTS, RequestTimedOut
from game.dialogue.admission import Admission, WorkerTime, worker_report
from game.dialogue.chat_streams import ChatStreams, goes_on_from
from game.dialogue.disruptions import Disruptions
from game.dialogue.greetings import GreetingPreparer
from game.dialogue.line_plan import LinePlanner
from game.dialogue.line_source import (
    LineAsk,
    LineCut,
    LineEvent,
    LineOrigin,
    LinePartial,
    LineReady,
    ModelChoice,
)
from game.dialogue.memory import PLAYER_SPEAKER, Memories
from game.dialogue.model_report import hud_rows, model_report, tier_rows
from game.dialogue.pacing import AsyncPacing, Pacing, SyncPacing, wait_until_ready
from game.dialogue.persona_prompt import Persona
from game.dialogue.records import LineKind, LineRecord, LineRecords, snapshot_of
from game.dialogue.request_builder import RequestBuilder
from game.dialogue.templates import TEMPLATE_ONLY, TemplateLines
from game.dialogue.timing import Timing
from game.dialogue.validation import Checker
from game.dialogue.voice_swap import VoiceSwap
from game.headless.report import ModelReport, WorkerReport
from game.sim.events import Trigger
from game.sim.world import World
from game.ui.views import LoadView

logger = logging.getLogger(__name__)

# Encounters are predicted seconds ahead, so 20 updates a second are plenty. The ticks
# in between ask for the lines prepared ahead: an update and a prompt's build in the same
# tick were the dialogue's slowest ticks.
_PREDICT_EVERY = 3
# One event seen by a whole crowd (a toppled stack) must not flood the queue: the first
# few onlookers get model lines, the rest answer at once from their templates.
_CROWD_TRIGGERS = frozenset({Trigger.TOPPLED})
_MODEL_VOICES_PER_EVENT = 2
_NO_SWAP = "Only the local model can be swapped"


def _why(event: LineCompleted | FallbackUsed) -> str:
    """Why a reply with words on screen did not finish as it began, for the log."""
    return "rewritten when finished" if isinstance(event, LineCompleted) else event.reason


class ModelLineSource:
    """A ``LineSource`` (and ``SourceStatus``) backed by the AI runtime."""

    def __init__(
        self,
        runtime: LineRuntime,
        world: World,
        personas: Mapping[int, Persona],
        planner: LinePlanner,
        memories: Memories,
        templates: TemplateLines,
        scheduler: SchedulerConfig,
        disruptions: Disruptions,
        mode: str = "async",
        timing: Timing | None = None,
        sync_wait_s: float = 5.0,
        admission: str = "value",
        view_half_width: float = 640.0,
        voice: VoiceSwap | None = None,
        greet_ahead: bool = True,
    ) -> None:
        self.runtime = runtime
        self.world = world
        self._planner = planner
        self._view_half_width = view_half_width
        self._configured_mode = mode
        self.voice = voice  # the village adapter on and off while the game runs
        timing = timing or Timing()
        self.worker_time = WorkerTime()
        # "queue" keeps the scheduler as it was before value admission, for comparison.
        self.admission = (
            Admission(world, view_half_width, runtime) if admission == "value" else None
        )
        self.late: Counter[str] = Counter()
        """Model lines dropped because their moment had passed, by trigger."""
        self._player_id = world.player_status().id
        self._builder = RequestBuilder(world, personas, planner, memories, scheduler)
        self._templates = templates
        self._async: Pacing = AsyncPacing()
        self._sync = SyncPacing(sync_wait_s)
        self._pacing: Pacing = self._sync if mode == "sync" else self._async
        self.checker = Checker(
            world,
            world.talk_radius,
            lambda snapshot: timing.ttl_ticks(snapshot.trigger, snapshot.predictive),
            disruptions.last,
        )
        self.records = LineRecords()
        self._out: list[LineEvent] = []
        self.greetings = GreetingPreparer(
            runtime,
            world,
            self._builder,
            self.records,
            self.checker,
            disruptions,
            timing,
            scheduler.rate_limit_s,
            self._out.append,
            self.admission,
            self.worker_time,
            ahead=greet_ahead,
        )
        self.chats = ChatStreams(runtime, self.records, self.checker, self._out.append)
        self._voices: dict[tuple[int, Trigger], int] = {}
        self._warmed = False
        self.serving_from_tick: int | None = None
        self.template_while_loading = 0
        self.lines_by_tier: Counter[str] = Counter()
        self._choices: dict[int, Callable[[str | None, str], None]] = {}

    # -- LineSource ----------------------------------------------------------

    def request(self, ask: LineAsk) -> None:
        """Answer from a prepared greeting, a prediction in flight, or a new request."""
        if not self._ready():
            # Loading or degraded: the template answers now rather than after a queue.
            self.template_while_loading += 1
            self._out.append(LineReady(ask, self._template(ask), "template"))
            return
        if ask.trigger in TEMPLATE_ONLY or self._crowded(ask):
            self._out.append(LineReady(ask, self._template(ask), "template"))
            return
        if ask.trigger is Trigger.GREET and self._pacing.predicts:
            if self.admission is not None:
                # A greeting is never late: the prepared line, or a template in this tick.
                if not self.greetings.use(ask):
                    self._out.append(LineReady(ask, self._template(ask), "template"))
                return
            if self.greetings.use_or_wait(ask):
                return
        if (
            ask.trigger is Trigger.FAREWELL
            and self.admission is not None
            and self._pacing.predicts
            and self.greetings.use_parting(ask)
        ):
            return
        request = self._builder.request(ask)
        if self.admission is not None and self._pacing.predicts:
            admitted = self._admit(ask, request)
            if admitted is None:
                return
            request = admitted
        handle = self.runtime.submit(request)
        record = self.records.get(handle)
        if record is None:
            kind = LineKind.CHAT if ask.trigger is Trigger.CHAT else LineKind.REACTION
            self.records.add(LineRecord(kind, handle, request, ask))
        elif record.ask is None:
            # Merged into this villager's prediction (still running from before a switch
            # to sync mode): its line answers the ask, as a promoted prediction does.
            record.promote(ask)
        if ask.trigger is Trigger.CHAT and not self.chats.speaking(ask.npc_id):
            # "Thinking", unless the villager is still typing an earlier reply: its words stay.
            self._out.append(LinePartial(ask.npc_id, ""))
        for event in self._pacing.after_submit(self.runtime, handle):
            self._handle(event, ask.tick)

    def _admit(self, ask: LineAsk, request: LineRequest) -> LineRequest | None:
        """The request with its value, or None (and a template now, or silence for
        chatter) when its line would not be seen in time."""
        assert self.admission is not None
        to_player = ask.listener_id == self._player_id
        admitted = self.admission.admit(request, ask.trigger, to_player)
        if admitted is None and ask.trigger is not Trigger.AMBIENT:
            self._out.append(LineReady(ask, self._template(ask), "template"))
        return admitted

    def prepare(self, ask: LineAsk) -> None:
        """Have the reply's prompt read into the model's cache while the player types.

        When the line is sent unchanged, the reply starts without reading its prompt.
        The sync baseline reads nothing ahead, as it predicts nothing.
        """
        if ask.trigger is not Trigger.CHAT or not self._pacing.predicts or not self._ready():
            return
        self.runtime.prefill(self._builder.reply_request(ask, PLAYER_SPEAKER))

    def poll(self, tick: int) -> list[LineEvent]:
        """Predict, expire, drain the runtime, and return what is ready to show."""
        if self._ready():
            if not self._warmed:
                self._warm_up(tick)
            elif self.serving_from_tick is None and not self.runtime.warming:
                self.serving_from_tick = tick
                logger.info("model lines from tick %d", tick)
            if self._pacing.predicts and tick % _PREDICT_EVERY == 0:
                self.greetings.predict(tick)
                self._withdraw_lost(tick)
            elif self._pacing.predicts:
                self.greetings.ask_next(tick)
        self.greetings.drop_outdated(tick)
        self._voices.clear()
        for event in self.runtime.poll():
            self._handle(event, tick)
        if self.voice is not None:
            self.voice.drain(self._builder)
        self.chats.watch(tick)
        out = self._out[:]
        self._out.clear()
        return out

    def _withdraw_lost(self, tick: int) -> None:
        """Stop writing reactions and chatter the world has already moved past.

        A villager who has walked on from the idle moment their chatter was asked in
        would have it dropped on arrival: stopped now, the worker's time goes to a line
        that can still be seen. Chat is never withdrawn here (its stream has rules of
        its own).
        """
        for record in self.records.of_kind(LineKind.REACTION):
            reason = self.checker.lost(record.snapshot, tick)
            if reason is None:
                continue
            logger.debug(
                "withdrew %s line for npc %d: %s", record.snapshot.trigger, record.npc_id, reason
            )
            self.runtime.cancel(record.handle)
            self.records.remove(record.handle)
            self.worker_time.settle(record.handle.id, "cancelled")

    def close(self) -> None:
        """Stop the worker."""
        self.runtime.shutdown()

    # -- live settings ------------------------------------------------------------

    def reconfigure(
        self,
        ai: AiConfig,
        mode: str,
        sync_wait_s: float,
        admission: str,
        greet_ahead: bool = True,
    ) -> None:
        """Use settings reloaded while the game runs, from the next ask on.

        The runtime takes the AI's live settings (see ``AiConfig.with_live_settings``);
        here the budgets, the candidates, the rate limit, the admission and the pacing
        change. ``mode`` switches async and sync only when the file changed it, so an F5
        switch stands until then; "off" is not a mode of this source.
        """
        if isinstance(self.runtime, ConfigurableRuntime):
            self.runtime.reconfigure(ai)
        self._builder.use_budgets(ai.scheduler)
        self._planner.use_generation(ai.generation)
        if (admission == "value") != (self.admission is not None):
            self.admission = (
                Admission(self.world, self._view_half_width, self.runtime)
                if admission == "value"
                else None
            )
        self.greetings.use_settings(ai.scheduler.rate_limit_s, self.admission, greet_ahead)
        self._sync.wait_s = sync_wait_s
        if mode != self._configured_mode and mode in ("async", "sync"):
            self._configured_mode = mode
            self._pacing = self._sync if mode == "sync" else self._async

    # -- hot swap ---------------------------------------------------------------

    def toggle_adapter(self) -> str:
        """Swap the village adapter on or off while the game runs (see ``voice_swap``)."""
        if self.voice is None:
            return _NO_SWAP
        return self.voice.toggle(self._builder, self.world)

    def model_choices(self) -> list[ModelChoice]:
        """The GGUFs in the models folder, for the pause menu (none if nothing swaps)."""
        voice = self.voice
        if voice is None:
            return []
        return [ModelChoice(path, voice.serving(path)) for path in voice.choices()]

    def use_model_file(self, path: Path) -> str:
        """Switch to the GGUF at ``path`` while the game runs (see ``voice_swap``)."""
        if self.voice is None:
            return _NO_SWAP
        return self.voice.use_file(path, self._builder, self.world)

    def use_model(self, model: ModelConfig) -> str:
        """Switch to ``model`` (an edit to ``ai.model``) while the game runs."""
        if self.voice is None:
            return _NO_SWAP
        return self.voice.use(model, self._builder, self.world)

    def take_notices(self) -> list[str]:
        """Messages for the player since the last call (a model swap done or refused)."""
        return self.voice.take_notices() if self.voice is not None else []

    # -- closed choices (decisions) ---------------------------------------------

    def can_choose(self) -> bool:
        """Whether the loaded model was tuned for decisions (the village style) and serves."""
        return (
            self._ready()
            and self._warmed
            and self._pacing is self._async
            and self.runtime.load_progress().prompt_style == "village"
        )

    def choose(self, request: LineRequest, done: Callable[[str | None, str], None]) -> None:
        """Submit a closed choice; ``done`` gets the chosen text, or None and why not."""
        handle = self.runtime.submit(request)
        self._choices[handle.id] = done

    def _ready(self) -> bool:
        return self.runtime.load_progress().state == "ready"

    def _crowded(self, ask: LineAsk) -> bool:
        """Whether enough villagers already answer this crowd event with model lines."""
        if ask.trigger not in _CROWD_TRIGGERS:
            return False
        key = (ask.tick, ask.trigger)
        self._voices[key] = self._voices.get(key, 0) + 1
        return self._voices[key] > _MODEL_VOICES_PER_EVENT

    def _warm_up(self, tick: int) -> None:
        """Choose the prompt style the model was tuned for, and warm the model's cache.

        With the few-shot style the first prompt pays for reading the whole shared
        context (seconds on a small CPU) and every later one reuses it, so it is read
        once here and its answer is never shown. The village style has no shared context:
        a warm-up would read a prompt nobody uses (about 0.45 s on one thread) ahead of
        the first real line, and the load's self-test has already made llama.cpp's first,
        slow decode, so lines are served at once.
        """
        self._warmed = True
        tuned = self.runtime.load_progress().prompt_style == "village"
        self._builder.use_style("village" if tuned else "fewshot")
        if tuned:
            return
        ask = LineAsk(tick, self.world.npc_ids()[0], Trigger.AMBIENT, None)
        request = self._builder.request(ask)
        self.runtime.warm(replace(request, signature="warm-up", max_tokens=1, plan=None))

    # -- runtime events ------------------------------------------------------

    def _handle(self, event: AiEvent, tick: int) -> None:
        if isinstance(event, RequestStarted):
            self.worker_time.started(event.handle.id, event.preempted_s)
            return
        done = self._choices.get(event.handle.id)
        if done is not None:
            if isinstance(event, TERMINAL_EVENTS):
                self.worker_time.settle_decision(event.handle.id)
                del self._choices[event.handle.id]
                if isinstance(event, LineCompleted):
                    done(event.text, "")
                elif isinstance(event, RequestTimedOut):
                    done(None, "timed out")
                else:
                    done(None, event.reason)
            return
        record = self.records.get(event.handle)
        if record is None:
            if isinstance(event, TERMINAL_EVENTS):
                self.worker_time.settle(event.handle.id, "cancelled")
            return
        if isinstance(event, TokenStreamed):
            if record.kind is LineKind.CHAT:
                self.chats.stream(record, event, tick)
        elif isinstance(event, LineCompleted | FallbackUsed):
            self.records.remove(event.handle)
            seconds = self.worker_time.ended(event.handle.id)
            if self.admission is not None and isinstance(event, LineCompleted):
                self.admission.cost.observe(seconds)
            if isinstance(event, FallbackUsed) and event.reason == "timeout":
                # The model ran out of its moment; the template stands in now.
                self.late[record.snapshot.trigger.value] += 1
                self.worker_time.settle(event.handle.id, "late")
            tier = event.tier if isinstance(event, LineCompleted) else ""
            if tier:
                self.lines_by_tier[tier] += 1
            if record.kind in (LineKind.PREDICTION, LineKind.PARTING):
                origin: LineOrigin = "model" if isinstance(event, LineCompleted) else "fallback"
                self.greetings.settle(record, event.text, origin, tier, tick)
            elif record.ask is not None:
                self._finish(record, record.ask, event, tick)

    def _finish(
        self, record: LineRecord, ask: LineAsk, event: LineCompleted | FallbackUsed, tick: int
    ) -> None:
        """Show a finished reaction or reply if it still fits the world.

        A reply the player has started to read is never replaced: stale, failed or
        timed out, it ends where it stopped; finished, it shows only if it goes on from
        the words on screen.
        """
        snapshot = snapshot_of(event.request)
        reason = self.checker.reject(snapshot, tick)
        if reason is not None:
            logger.debug("dropped stale %s line for npc %d: %s", ask.trigger, ask.npc_id, reason)
            self.worker_time.settle(event.handle.id, "rejected")
            if record.streamed:
                self._out.append(self.chats.unfinished(record))
            elif ask.trigger is Trigger.CHAT:
                self._out.append(LineCut(ask.npc_id, reason))
            return
        if record.streamed and not (
            isinstance(event, LineCompleted) and goes_on_from(event.text, record.streamed)
        ):
            logger.debug("reply of npc %d ends unfinished: %s", ask.npc_id, _why(event))
            self.worker_time.settle(event.handle.id, "failed")
            tier = event.tier if isinstance(event, LineCompleted) else ""
            self._out.append(self.chats.unfinished(record, tier))
            return
        origin: LineOrigin = "model" if isinstance(event, LineCompleted) else "fallback"
        if isinstance(event, FallbackUsed) and event.reason == PLAYER_TEXT_UNFIT:
            origin = "refusal"  # the player's words failed the semantic layer
        self.worker_time.settle(event.handle.id, "shown" if origin == "model" else "failed")
        tier = event.tier if isinstance(event, LineCompleted) else ""
        live = self.checker.live(snapshot)
        self._out.append(LineReady(ask, event.text, origin, snapshot, live, tier, event.handle.id))

    def _template(self, ask: LineAsk) -> str:
        listener = self._builder.listener_name(ask.listener_id)
        return self._templates.line(ask.npc_id, ask.trigger, listener, ask.player_text)

    # -- SourceStatus --------------------------------------------------------

    @property
    def mode(self) -> str:
        """ "async" (zero-stall) or "sync" (the naive baseline)."""
        return self._pacing.name

    def toggle_mode(self) -> str:
        """Swap async and sync. Both go through the one worker, so switching is safe."""
        self._pacing = self._sync if self._pacing is self._async else self._async
        return self._pacing.name

    def load_view(self) -> LoadView | None:
        """The model's load progress for the HUD."""
        progress = self.runtime.load_progress()
        return LoadView(progress.fraction, progress.stage, progress.state)

    def load_error(self) -> str | None:
        """The runtime's reason for not loading the model, once it has given up."""
        return self.runtime.load_progress().error

    def voices_loading(self) -> bool:
        """Until the first tick the model serves from (its warm-up done), unless it failed."""
        return self.serving_from_tick is None and self.load_error() is None

    def hud_stats(self) -> tuple[tuple[str, str], ...]:
        """Queue, latency and prediction figures for the HUD."""
        stale = sum(self.checker.stale.values())
        rows = hud_rows(self.runtime.metrics(), self.greetings.report(), stale, self.worker())
        if self.runtime.multi_tier:
            rows += tier_rows(self.runtime.tiers())
        return rows

    def report(self) -> ModelReport:
        """The model's part of the headless report's ``ai`` section."""
        return model_report(
            self.mode,
            self.runtime.metrics(),
            self.runtime.tiers(),
            stale_dropped=dict(self.checker.stale),
            predictive=self.greetings.report(),
            lines_by_tier=dict(self.lines_by_tier),
            template_while_loading=self.template_while_loading,
            load=self.runtime.load_progress().state,
            worker=self.worker(),
        )

    def worker(self) -> WorkerReport:
        """Where the worker's time went, and what was shed or late."""
        late = Counter(self.late)
        late[Trigger.GREET.value] += self.greetings.outcomes["late"]
        return worker_report(self.admission, self.worker_time, late)

    def wait_ready(self, timeout_s: float) -> str:
        """Block until the model has loaded and its warm-up has finished, or failed to load.

        For headless runs, never in a tick. Returns the load state, or "warming" when the
        time ran out with the warm-up still queued or running.
        """
        runtime = self.runtime
        # ``warming`` holds from the warm-up's submission, queued or running, to its end.
        # Lines asked for meanwhile are not waited for: they are the game's first work.
        return wait_until_ready(
            runtime, lambda: self.poll(self.world.tick), lambda: runtime.warming, timeout_s
        )
