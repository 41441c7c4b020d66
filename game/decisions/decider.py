"""Villagers decide what to do, and the decision is checked against the world first.

After a chat reply is on screen, after a second hit and after an errand is done, the
villager asks for a decision. With the village model loaded, the worker scores each
option that is possible now (``LineRequest.choice``) and the likeliest is chosen; with
the model off, loading, failing or slow, the rules of ``game.decisions.rules`` decide
the same kind of thing at once. Either way the decision carries the snapshot it was
made from and is applied only when it is whole and still fits the live world: the
villager is up and undisturbed, the prop is where it was and nobody holds it, the
traveller is still near, and the decision is not too old. One that fails is dropped,
counted by its reason, and nothing of it is applied.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ai import Choice, LineRequest, Priority
from game.core.stats import ms_quantiles
from game.decisions.options import BASKET_ZONE, FETCH_RADIUS, Choices, OptionFinder
from game.decisions.policy import MOODS, Event, Mood, Option, resolve
from game.decisions.prompt import (
    action_continuations,
    decision_spec,
    mood_continuations,
    parse_mood,
)
from game.decisions.rules import rules_decision
from game.dialogue.disruptions import Disruptions
from game.dialogue.memory import Memories
from game.headless.report import DecisionsReport
from game.sim.attitude import clamp_attitude
from game.sim.events import (
    ActionEnded,
    ErrandCompleted,
    GameEvent,
    PropHitNpc,
    SpeechWanted,
    Trigger,
)
from game.sim.orders import ActionKind, Order
from game.sim.world import World

logger = logging.getLogger(__name__)

Source = Literal["model", "rules"]
ChoiceDone = Callable[[str | None, str], None]
"""Called with the chosen text, or None and why the model could not choose."""

DECISION_TTL_TICKS = 480
"""A decision older than this (8 s) when it would be applied is stale."""
TRAVELLER_RANGE = 420.0
"""Follow, fetch and show the way need the traveller within this distance."""
HIT_AGAIN_TICKS = 600
"""A second hit by the traveller within this long asks for a decision."""
DECISION_DEADLINE_S = 1.5
DECISION_TIMEOUT_S = 4.0
RECENT = 8
OFFER_ATTITUDE = 2
"""A villager this fond of the traveller helps with the basket unasked."""


class ChoiceLane(Protocol):
    """Where model decisions are made: the model's line source, when it can."""

    def can_choose(self) -> bool:
        """Whether a model tuned for decisions is loaded and serving."""

    def choose(self, request: LineRequest, done: ChoiceDone) -> None:
        """Submit a closed choice; ``done`` is called from a later poll, on the main thread."""


@dataclass(frozen=True, slots=True)
class DecisionSnapshot:
    """What a decision was made from: the tick, the options and the traveller's place."""

    tick: int
    npc_id: int
    event: Event
    choices: Choices
    player_x: float
    player_y: float


@dataclass(slots=True)
class Decision:
    """One decision on its way: made by the model or the rules, then applied or rejected."""

    snapshot: DecisionSnapshot
    source: Source
    asked_at: float
    option: Option | None = None
    mood: Mood = "unmoved"
    done_at: float | None = None
    outcome: str = ""
    fell_back: str = ""
    note: str = ""
    """Why a decision was made unasked ("offered help"), for F3."""

    @property
    def latency_ms(self) -> float:
        """Wall time from asking to having the whole decision."""
        return 0.0 if self.done_at is None else (self.done_at - self.asked_at) * 1000.0


class Decider:
    """Asks for, checks and applies every villager's decisions."""

    def __init__(
        self,
        world: World,
        finder: OptionFinder,
        memories: Memories,
        disruptions: Disruptions,
        lane: ChoiceLane | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._world = world
        self._finder = finder
        self._memories = memories
        self._disruptions = disruptions
        self._lane = lane
        self._clock = clock
        self._ready: list[Decision] = []
        self._hits: dict[int, list[int]] = {}
        self._seq = 0
        self.made: Counter[str] = Counter()
        self.applied: Counter[str] = Counter()
        self.rejected: Counter[str] = Counter()
        self.fallbacks: Counter[str] = Counter()
        self.latency: deque[float] = deque(maxlen=1024)
        self.recent: deque[Decision] = deque(maxlen=RECENT)
        self.outcomes: Counter[str] = Counter()

    # -- inputs ---------------------------------------------------------------------

    def handle_events(self, tick: int, events: Sequence[GameEvent]) -> None:
        """Hits, finished errands and ended actions: what changes attitude or asks."""
        for event in events:
            if isinstance(event, PropHitNpc) and event.thrown_by_player:
                hits = [t for t in self._hits.get(event.npc_id, []) if tick - t <= HIT_AGAIN_TICKS]
                hits.append(tick)
                self._hits[event.npc_id] = hits
                if len(hits) == 1:
                    self._nudge(event.npc_id, -1)  # the first hit: they think less of you
                else:
                    self.ask(tick, event.npc_id, "hit_again")
            elif isinstance(event, ErrandCompleted):
                self.ask(tick, event.giver_id, "errand_done")
            elif (
                isinstance(event, SpeechWanted)
                and event.trigger is Trigger.GREET
                and self._memories.of(event.npc_id).attitude >= OFFER_ATTITUDE
            ):
                self.offer_help(tick, event.npc_id)
            elif isinstance(event, ActionEnded):
                self.outcomes[f"{event.kind}:{event.outcome}"] += 1

    def offer_help(self, tick: int, npc_id: int) -> None:
        """A fond villager greeting the traveller lends a hand unasked: with an apple for
        the basket while that errand is open and one is within reach. Decided by rule."""
        if not any(
            e.spec.kind == "deliver" and e.spec.zone == BASKET_ZONE and not e.done
            for e in self._world.errands.errands
        ):
            return
        player = self._world.player_status()
        choices = self._finder.choices(npc_id)
        option = next((o for o in choices.options if o.kind is ActionKind.PUT), None)
        if option is None:
            return
        snapshot = DecisionSnapshot(tick, npc_id, "chat", choices, player.x, player.y)
        decision = Decision(snapshot, "rules", self._clock(), note="offered help")
        self._done(decision, option, "unmoved")

    def choices(self, npc_id: int) -> Choices:
        """What the villager could do now, and what they know of but cannot."""
        return self._finder.choices(npc_id)

    def chat_replied(self, tick: int, npc_id: int, player_text: str) -> None:
        """A reply to the traveller is on screen: the villager decides what to do about it."""
        self.ask(tick, npc_id, "chat", player_text)

    def ask(self, tick: int, npc_id: int, event: Event, player_text: str = "") -> None:
        """Ask for one decision, from the model if it can, else from the rules now."""
        status = self._world.npc(npc_id)
        if status is None:
            return
        player = self._world.player_status()
        snapshot = DecisionSnapshot(tick, npc_id, event, self.choices(npc_id), player.x, player.y)
        memory = self._memories.of(npc_id)
        lane = self._lane
        if lane is not None and lane.can_choose():
            decision = Decision(snapshot, "model", self._clock())
            cast_id = self._finder.cast_of.get(npc_id, "")
            label = self._finder.labels.get(cast_id, status.name)
            spec = decision_spec(
                status.name,
                label,
                memory.attitude,
                memory.facts,
                snapshot.choices.options,
                event,
                player_text,
            )
            self._seq += 1
            request = LineRequest(
                npc_id,
                Priority.REACTIVE,
                f"decide:{npc_id}:{self._seq}",
                spec,
                None,
                DECISION_DEADLINE_S,
                DECISION_TIMEOUT_S,
                choice=Choice(action_continuations(snapshot.choices.scored), mood_continuations()),
            )
            lane.choose(request, lambda text, why: self._chosen(decision, text, why, player_text))
            return
        self._by_rules(Decision(snapshot, "rules", self._clock()), player_text)

    def _chosen(self, decision: Decision, text: str | None, why: str, player_text: str) -> None:
        choices = decision.snapshot.choices
        scored = choices.scored
        if text is not None:
            for option, continuation in zip(scored, action_continuations(scored), strict=True):
                if text.startswith(continuation):
                    mood = parse_mood(text[len(continuation) :])
                    if mood is not None:
                        chosen = resolve(option, choices.options)
                        if chosen is not option:
                            decision.note = f"asked: {option.text}, not possible now"
                        self._done(decision, chosen, mood)
                        return
            why = "unparsed"
        # The model could not decide (failed, timed out, stopped): the rules decide now.
        decision.source = "rules"
        decision.fell_back = why
        self.fallbacks[why] += 1
        self._by_rules(decision, player_text)

    def _by_rules(self, decision: Decision, player_text: str) -> None:
        snapshot = decision.snapshot
        attitude = self._memories.of(snapshot.npc_id).attitude
        option, mood = rules_decision(
            player_text, attitude, snapshot.choices.options, snapshot.event
        )
        self._done(decision, option, mood)

    def _done(self, decision: Decision, option: Option, mood: Mood) -> None:
        decision.option, decision.mood = option, mood
        decision.done_at = self._clock()
        self.made[decision.source] += 1
        if decision.source == "model":
            self.latency.append(decision.latency_ms)
        self._ready.append(decision)

    # -- applying -------------------------------------------------------------------

    def update(self, tick: int) -> None:
        """Apply every whole decision that still fits the world; drop the rest."""
        ready, self._ready = self._ready, []
        for decision in ready:
            reason = self.reject_reason(decision, tick)
            if reason is not None:
                decision.outcome = f"rejected: {reason}"
                self.rejected[reason] += 1
                logger.debug("decision for npc %d dropped: %s", decision.snapshot.npc_id, reason)
            else:
                self._apply(decision)
            self.recent.append(decision)
            option = decision.option.text if decision.option is not None else "?"
            logger.info(
                "npc %d decided: %s, %s (%s, %.0f ms): %s",
                decision.snapshot.npc_id,
                option,
                decision.mood,
                decision.source,
                decision.latency_ms,
                decision.outcome,
            )

    def reject_reason(self, decision: Decision, tick: int) -> str | None:
        """Why a decision no longer fits the live world, or None if it does."""
        snap = decision.snapshot
        option = decision.option
        if option is None:
            return "undecided"
        if tick - snap.tick > DECISION_TTL_TICKS:
            return "too old"
        status = self._world.npc(snap.npc_id)
        if status is None or not status.conscious or not status.can_talk:
            return "villager down"
        if self._disruptions.last(snap.npc_id) > snap.tick:
            return "disrupted"
        kind = option.kind
        if kind in (ActionKind.FETCH, ActionKind.PUT):
            prop_id = snap.choices.props.get(option.target)
            if prop_id is None:
                return "no such prop"
            moved = self._prop_reason(snap, prop_id)
            if moved is not None:
                return moved
        if kind in (ActionKind.FOLLOW, ActionKind.FETCH, ActionKind.SHOW_WAY):
            player = self._world.player_status()
            if math.hypot(player.x - status.x, player.y - status.y) > TRAVELLER_RANGE:
                return "traveller gone"
        if kind is ActionKind.CALL:
            other = self._world.npc(snap.choices.villagers.get(option.target, -1))
            if other is None or not other.can_talk:
                return "callee unavailable"
        return None

    def _prop_reason(self, snap: DecisionSnapshot, prop_id: int) -> str | None:
        if not self._world.entity_exists(prop_id):
            return "prop gone"
        nearby = {p.id: p for p in self._world.nearby_props(snap.npc_id, FETCH_RADIUS)}
        prop = nearby.get(prop_id)
        if prop is None:
            return "prop out of reach"
        if prop.held:
            return "prop carried"
        if not self._finder.fetchable(prop):
            return "prop put away"  # in the basket or the stack since the choice was made
        return None

    def _apply(self, decision: Decision) -> None:
        snap = decision.snapshot
        option = decision.option
        assert option is not None
        order = self._order(snap, option)
        if order is not None and not self._world.start_action(snap.npc_id, order):
            decision.outcome = "rejected: could not start"
            self.rejected["could not start"] += 1
            return
        self._nudge(snap.npc_id, MOODS[decision.mood])
        decision.outcome = "applied"
        self.applied[option.kind.value] += 1

    def _order(self, snap: DecisionSnapshot, option: Option) -> Order | None:
        kind = option.kind
        if kind is ActionKind.CARRY_ON:
            return None
        if kind in (ActionKind.FETCH, ActionKind.PUT):
            place = self._finder.place_x("baker's basket") if kind is ActionKind.PUT else None
            return Order(kind, prop_id=snap.choices.props[option.target], place_x=place)
        if kind is ActionKind.SHOW_WAY:
            return Order(kind, place_x=self._finder.place_x(option.target))
        if kind is ActionKind.CALL:
            return Order(kind, other_id=snap.choices.villagers[option.target])
        return Order(kind)

    def _nudge(self, npc_id: int, delta: int) -> None:
        if not delta:
            return
        memory = self._memories.of(npc_id)
        memory.attitude = clamp_attitude(memory.attitude + delta)
        self._world.set_attitude(npc_id, memory.attitude)

    # -- figures --------------------------------------------------------------------

    def report(self) -> DecisionsReport:
        """Decisions made, applied and rejected by reason, and how long the model took."""
        return DecisionsReport(
            made=dict(self.made),
            applied=dict(self.applied),
            applied_total=sum(self.applied.values()),
            rejected=dict(self.rejected),
            fell_back_to_rules=dict(self.fallbacks),
            actions_ended=dict(self.outcomes),
            latency_ms=ms_quantiles(list(self.latency)),
        )

    def hud_rows(self) -> tuple[tuple[str, str], ...]:
        """F3 rows: the totals, then the latest decisions with their source and outcome."""
        made = sum(self.made.values())
        rows = [
            (
                "decisions",
                f"{sum(self.applied.values())}/{made} applied, "
                f"{sum(self.rejected.values())} rejected",
            )
        ]
        for d in list(self.recent)[-5:]:
            status = self._world.npc(d.snapshot.npc_id)
            name = status.name if status is not None else "?"
            option = d.option.text if d.option is not None else "?"
            source = d.source + (f" after {d.fell_back}" if d.fell_back else "")
            source += f", {d.note}" if d.note else ""
            rows.append((name, f"{option}, {d.mood} · {source} · {d.outcome}"))
        return tuple(rows)
