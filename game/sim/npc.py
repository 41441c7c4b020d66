"""A villager's state machine, free of physics so it can be tested on synthetic input.

The world feeds each brain a ``Percept`` every tick and ``Stimulus`` records when physics
reports something (a hit, a near miss, a bump, a toppled stack, a finished errand). The
brain answers with game events (``NpcTransitioned``, ``SpeechWanted``, ...) and leaves a
movement wish (``goal_x``, ``speed``, ``facing``) for the body to carry out.

Every transition bumps ``epoch``: a line prepared for one epoch is stale in the next.
"""

from __future__ import annotations

import logging
import math
import random

from game.sim.attitude import ATTITUDE_MIN
from game.sim.events import (
    ActionEnded,
    ActionStarted,
    GameEvent,
    NpcGotUp,
    NpcKnockedDown,
    NpcTransitioned,
    SpeechWanted,
    Trigger,
)
from game.sim.npc_states import ACTING, ACTION_STATES, CALM, DOWN, ENDS_CHAT, NpcState
from game.sim.orders import ACTION_TICKS, LASTING, ActionKind, Order, Outcome
from game.sim.routine import DailyRound, Routine
from game.sim.senses import Percept, Stimulus, StimulusKind
from game.sim.tuning import DEFAULT_TUNING, Tuning

logger = logging.getLogger(__name__)


#: What a villager busy with an action or a conversation shrugs off (a hit still stops them).
_SHRUGGED_OFF = frozenset({StimulusKind.TOPPLED, StimulusKind.NEAR_MISS, StimulusKind.BUMPED})


class NpcBrain:
    """One villager's state machine."""

    def __init__(
        self,
        npc_id: int,
        player_id: int,
        routine: Routine,
        rng: random.Random,
        tuning: Tuning = DEFAULT_TUNING,
    ) -> None:
        self.npc_id = npc_id
        self.player_id = player_id
        self.routine = routine
        self.tuning = tuning
        self._rng = rng
        self.state = NpcState.IDLE
        self.epoch = 0
        self.entered_tick = 0
        self.goal_x: float | None = None
        self.speed = tuning.walk_speed
        self.facing = 1
        self.engaged = False
        self.chatting = False
        """Whether the player's chat box is open with this villager: they stay for it."""
        self.fall_side = 0
        """Which way a blow knocks the villager over (+1 right, -1 left, 0 as they lean)."""
        self._inbox: list[Stimulus] = []
        self._hits: list[int] = []
        self._greet_ready = 0
        self._notice_ready = 0
        self._next_ambient = tuning.ambient_gap // 4 + rng.randrange(tuning.ambient_jitter)
        self._round = DailyRound(routine, rng)
        self._pending_offers: list[tuple[str, tuple[int, ...]]] = []
        self.offered: list[str] = []
        self._flee_from = 0.0
        self._x = routine.work_x
        self.order: Order | None = None
        self.attitude = 0
        """How the villager feels about the traveller; a cross one (-2) does not greet."""
        self._welcome_until = -1
        """Until this tick the villager's round is to walk up to the traveller and greet."""
        self._goal: float | None = None
        self._fast = False
        self._ending: tuple[Outcome, str] | None = None
        self._outbox: list[GameEvent] = []

    # -- inputs ---------------------------------------------------------------------

    @property
    def conscious(self) -> bool:
        """False while lying on the ground."""
        return self.state is not NpcState.KNOCKED_DOWN

    @property
    def can_talk(self) -> bool:
        """Whether a line from this villager makes sense right now."""
        return self.state not in DOWN

    def notify(self, stimulus: Stimulus) -> None:
        """Queue a stimulus; it is handled on the next ``think``."""
        self._inbox.append(stimulus)

    def offer_errand(self, errand_id: str, refs: tuple[int, ...] = ()) -> None:
        """Ask the villager to offer an errand to the player at the next greeting."""
        if errand_id not in self.offered and all(e != errand_id for e, _ in self._pending_offers):
            self._pending_offers.append((errand_id, refs))

    def withdraw_errand(self, errand_id: str) -> None:
        """Forget an errand that no longer needs offering."""
        self._pending_offers = [(e, r) for e, r in self._pending_offers if e != errand_id]

    @property
    def acting(self) -> bool:
        """Whether the villager is carrying out an action."""
        return self.state in ACTING

    def begin(self, tick: int, order: Order, player_x: float) -> list[GameEvent]:
        """Start carrying out ``order``; nothing happens while down or for "carry on"."""
        events: list[GameEvent] = []
        if self.state in DOWN or order.kind is ActionKind.CARRY_ON:
            return events
        if order.kind is ActionKind.RUN_AWAY:
            self._flee_from = player_x
            self.engaged = False
            self._greet_ready = tick + self.tuning.greet_cooldown
            self._go(NpcState.FLEE, tick, events)
        else:
            if self.order is not None:
                self._end_order(tick, events, ("interrupted", "another action"))
            if order.kind is ActionKind.TURN_AWAY:
                self.engaged = False
                self._greet_ready = tick + self.tuning.greet_cooldown
            self._go(ACTION_STATES[order.kind], tick, events)
            self.order, self._goal, self._fast = order, None, False
        target = order.prop_id if order.prop_id is not None else order.other_id
        events.append(ActionStarted(tick, self.npc_id, order.kind.value, target))
        return events

    def want(self, goal_x: float | None, fast: bool = False) -> None:
        """Where the action wants the villager to walk now (None: stand still)."""
        self._goal, self._fast = goal_x, fast

    def finish(self, tick: int, outcome: Outcome, reason: str = "") -> None:
        """End the current action; its events come out of the next ``think``."""
        if self.state not in ACTING:
            return
        self._ending = (outcome, reason)
        self._go(self._settled_state(tick), tick, self._outbox)

    def welcome(self, until_tick: int) -> None:
        """Leave the round to walk up to the traveller and greet them (a new game's start).

        The round takes over again after the greeting, once the traveller is out of
        sight range, or at ``until_tick``.
        """
        self._welcome_until = until_tick

    @property
    def welcoming(self) -> bool:
        """Whether the villager is on their way to welcome the traveller."""
        return self._welcome_until >= 0

    @property
    def can_hint(self) -> bool:
        """Whether the villager would call a hint across to the traveller now: about their
        day or already turned to them, and not cross with them."""
        turned = self.state in (NpcState.NOTICE, NpcState.GREET, NpcState.TALK)
        return self.attitude > ATTITUDE_MIN and (self.state in CALM or turned)

    def give_hint(self, tick: int, refs: tuple[int, ...]) -> list[GameEvent]:
        """Tell the traveller how to get an errand's prop (``refs``); nothing if unable."""
        events: list[GameEvent] = []
        if self.can_hint:
            self._say(tick, Trigger.ERRAND_HINT, self.player_id, refs, events)
        return events

    def answer_call(self, tick: int) -> list[GameEvent]:
        """Another villager called: come over to the traveller and be ready to greet."""
        self._greet_ready = 0
        self._notice_ready = 0
        return self.begin(tick, Order(ActionKind.COME), 0.0)

    def set_talking(self, tick: int, talking: bool) -> list[GameEvent]:
        """Enter or leave TALK, as the player's chat box opens or closes.

        While the chat is open the villager's rounds wait: whatever interrupts the chat
        (a light knock, thanks for an errand, an action the player asked for) ends back
        in TALK. Being knocked over, running off or turning away ends the chat.
        """
        events: list[GameEvent] = []
        if talking:
            if self.state in ENDS_CHAT:
                return events
            self.chatting = True
            self.engaged = True
            if self.state in ACTING:
                # Busy with something the player asked for: they can talk on the way.
                return events
            if self.state is not NpcState.TALK:
                self._go(NpcState.TALK, tick, events)
            return events
        self.chatting = False
        if self.state is NpcState.TALK:
            self._farewell(tick, events)
            self._go(self._calm_state(tick), tick, events)
        return events

    # -- the machine ----------------------------------------------------------------

    def think(self, p: Percept) -> list[GameEvent]:
        """Advance the machine by one tick and return the events it produced."""
        events, self._outbox = self._outbox, []
        t = self.tuning
        tick = p.tick
        in_state = tick - self.entered_tick
        self._x = p.x

        if self.state not in DOWN and p.tilt > t.knockdown_tilt:
            self._knock_down(tick, 0, events)
            return events
        if self.state is NpcState.KNOCKED_DOWN:
            self._inbox.clear()
            if in_state >= t.down_ticks:
                self._go(NpcState.RECOVER, tick, events)
            return events
        if self.state is NpcState.RECOVER:
            self._inbox.clear()
            if p.tilt < t.upright_tilt and in_state >= 10:
                events.append(NpcGotUp(tick, self.npc_id))
                self._go(self._calm_state(tick), tick, events)
            return events

        if self._inbox:
            self._react(p, events)
        if not any(isinstance(e, NpcTransitioned) for e in events):
            self._behave(p, in_state, events)
        self._move(p)
        return events

    def _react(self, p: Percept, events: list[GameEvent]) -> None:
        t = self.tuning
        stim = max(self._inbox, key=lambda s: s.kind)
        self._inbox.clear()
        listener = self.player_id if stim.by_player else None
        hard_hit = stim.impulse >= t.flee_impulse
        acting = self.state in ACTING
        if acting and not stim.by_player and stim.kind is StimulusKind.HIT and not hard_hit:
            return  # walked into a ball on the way: carry on
        if stim.source_x is not None:
            self.facing = 1 if stim.source_x >= p.x else -1
        if stim.kind is StimulusKind.HIT and stim.impulse >= t.knockdown_impulse:
            source = stim.source_x if stim.source_x is not None else p.x
            self._knock_down(p.tick, 1 if p.x >= source else -1, events)
            return
        if stim.kind is StimulusKind.HIT:
            self._hits = [h for h in self._hits if p.tick - h <= t.hit_memory] + [p.tick]
            hard = stim.impulse >= t.flee_impulse or len(self._hits) >= t.flee_repeat_hits
            self._flee_from = stim.source_x if stim.source_x is not None else p.x + p.player_dx
            self._go(NpcState.FLEE if hard else NpcState.REACT, p.tick, events)
            self._say(p.tick, Trigger.HIT, listener, stim.refs, events)
            return
        if self.state is NpcState.FLEE:
            return
        if (self.state in ACTING or self.chatting) and stim.kind in _SHRUGGED_OFF:
            return
        if stim.kind is StimulusKind.BUMPED:
            self._go(NpcState.REACT, p.tick, events)
            self._say(p.tick, Trigger.BUMPED, self.player_id, stim.refs, events)
        elif stim.kind is StimulusKind.NEAR_MISS:
            self._go(NpcState.REACT, p.tick, events)
            self._say(p.tick, Trigger.NEAR_MISS, listener, stim.refs, events)
        elif stim.kind is StimulusKind.TOPPLED:
            if self.state is NpcState.REACT:
                return
            self._go(NpcState.REACT, p.tick, events)
            self._say(p.tick, Trigger.TOPPLED, listener, stim.refs, events)
        else:
            self._go(NpcState.REACT, p.tick, events)
            self._say(p.tick, Trigger.ERRAND_DONE, self.player_id, stim.refs, events)

    def _knock_down(self, tick: int, side: int, events: list[GameEvent]) -> None:
        """Fall over (towards ``side``, or as the body leans when 0) and lie there a while."""
        self._inbox.clear()
        self.fall_side = side
        self._go(NpcState.KNOCKED_DOWN, tick, events)
        events.append(NpcKnockedDown(tick, self.npc_id))
        self.goal_x = None

    def _behave(self, p: Percept, in_state: int, events: list[GameEvent]) -> None:
        t = self.tuning
        tick = p.tick
        state = self.state
        if state in ACTING:
            order = self.order
            if order is not None and in_state >= ACTION_TICKS[order.kind]:
                done = order.kind in LASTING
                self._ending = ("done", "") if done else ("gave_up", "time ran out")
                self._go(self._settled_state(tick), tick, events)
        elif state is NpcState.REACT:
            if in_state >= t.react_ticks:
                self._go(self._settled_state(tick), tick, events)
        elif state is NpcState.FLEE:
            if in_state >= t.flee_ticks:
                self._go(self._calm_state(tick), tick, events)
        elif state is NpcState.TALK:
            self._face_player(p)
            if p.player_distance > t.leave_radius:
                self.chatting = False
                self._farewell(tick, events)
                self._go(self._calm_state(tick), tick, events)
        elif state is NpcState.GREET:
            self._face_player(p)
            if p.player_distance > t.leave_radius:
                self._farewell(tick, events)
                self._go(self._calm_state(tick), tick, events)
            elif self._pending_offers and in_state >= t.offer_delay:
                errand_id, refs = self._pending_offers.pop(0)
                self.offered.append(errand_id)
                self._say(tick, Trigger.ERRAND_OFFER, self.player_id, refs, events)
            elif in_state >= t.greet_hold:
                self._go(NpcState.IDLE, tick, events)
        elif state is NpcState.NOTICE:
            self._face_player(p)
            if p.player_distance <= t.talk_radius and in_state >= t.notice_delay:
                self._go(NpcState.GREET, tick, events)
                self.engaged = True
                self._greet_ready = tick + t.greet_cooldown
                self._say(tick, Trigger.GREET, self.player_id, (), events)
            elif self.welcoming and p.player_distance > t.talk_radius:
                # Sent over to welcome the traveller while watching them from afar (the
                # welcome waited for the host): walk up to them.
                self._go(NpcState.ROUTINE, tick, events)
            elif p.player_distance > t.notice_radius + t.notice_slack:
                self._notice_ready = tick + t.renotice_ticks
                self._go(self._calm_state(tick), tick, events)
            elif in_state >= t.notice_timeout:
                # Watched the player hang about without coming over: look away for a while.
                self._notice_ready = tick + t.greet_cooldown // 3
                self._go(self._calm_state(tick), tick, events)
        else:
            self._calm(p, events)

    def would_greet(self, tick: int) -> bool:
        """Whether the villager would greet the player who walked up now.

        Lets the dialogue skip preparing greetings that could never be used.
        """
        if self.engaged or tick < self._greet_ready or self.attitude <= ATTITUDE_MIN:
            return False
        return self.state in CALM or self.state in (NpcState.NOTICE, NpcState.REACT)

    def _calm(self, p: Percept, events: list[GameEvent]) -> None:
        t = self.tuning
        tick = p.tick
        if self.engaged and p.player_distance > t.leave_radius:
            self._farewell(tick, events)
        if self.welcoming and (
            tick >= self._welcome_until
            or self.engaged
            or p.player_distance > t.notice_radius + t.notice_slack
        ):
            self._welcome_until = -1
        if (
            not self.engaged
            and self.attitude > ATTITUDE_MIN
            and p.player_seen
            and p.player_distance <= t.notice_radius
            and tick >= self._greet_ready
            and (tick >= self._notice_ready or p.player_distance <= t.talk_radius)
            # On the way over to welcome them: stop to look only once close enough to greet.
            and (not self.welcoming or p.player_distance <= t.talk_radius)
        ):
            self._go(NpcState.NOTICE, tick, events)
            return
        wanted = NpcState.ROUTINE if self.welcoming else self._calm_state(tick)
        if wanted is not self.state:
            self._go(wanted, tick, events)
            return
        if (
            self.state is NpcState.IDLE
            and p.neighbour_id is not None
            and tick >= self._next_ambient
        ):
            self._next_ambient = tick + t.ambient_gap + self._rng.randrange(t.ambient_jitter)
            self._say(tick, Trigger.AMBIENT, p.neighbour_id, (), events)

    # -- helpers --------------------------------------------------------------------

    def _calm_state(self, tick: int) -> NpcState:
        """The state the villager's routine wants right now."""
        return self._round.calm_state(tick, self._x, self.tuning.arrive_eps)

    def _settled_state(self, tick: int) -> NpcState:
        """Where an interruption ends: back in the chat if it is still open, else calm."""
        return NpcState.TALK if self.chatting else self._calm_state(tick)

    def _move(self, p: Percept) -> None:
        """Turn the current state into a movement wish for the body."""
        t = self.tuning
        if self.state in (NpcState.ROUTINE, NpcState.WANDER):
            goal = p.x + p.player_dx if self.welcoming else self._round.goal(p.tick)
            self.goal_x = self._short_of_player(p, goal)
            self.speed = t.walk_speed
            self.facing = 1 if goal >= p.x else -1
        elif self.state in ACTING:
            self.goal_x = self._goal
            self.speed = t.run_speed if self._fast else t.walk_speed
            if self._goal is not None and abs(self._goal - p.x) > t.arrive_eps:
                self.facing = 1 if self._goal >= p.x else -1
        elif self.state is NpcState.FLEE:
            away = 1 if p.x >= self._flee_from else -1
            self.goal_x = min(max(p.x + away * 400.0, self.routine.min_x), self.routine.max_x)
            self.speed = t.run_speed
            self.facing = away
        else:
            self.goal_x = None

    def _short_of_player(self, p: Percept, goal: float) -> float | None:
        """Where to walk for ``goal`` without walking into the player.

        A spot within personal distance of the player is waited for a step short of
        them (None: already there, stand). A spot past the player is walked to; the
        world has the villager step round them on the way.
        """
        t = self.tuning
        player_x = p.x + p.player_dx
        towards = (goal - p.x) * p.player_dx > 0.0
        if (
            not towards
            or not -2.0 * t.personal_height <= p.player_dy <= t.personal_height
            or abs(goal - player_x) >= t.personal_gap
        ):
            return goal
        if abs(p.player_dx) <= t.personal_gap:
            return None
        return player_x - math.copysign(t.personal_gap, p.player_dx)

    def observe_position(self, x: float) -> None:
        """Tell the brain where its body is (used before the first ``think``)."""
        self._x = x

    def _face_player(self, p: Percept) -> None:
        self.facing = 1 if p.player_dx >= 0 else -1

    def _farewell(self, tick: int, events: list[GameEvent]) -> None:
        if self.engaged:
            self.engaged = False
            self._greet_ready = tick + self.tuning.greet_cooldown
            self._say(tick, Trigger.FAREWELL, self.player_id, (), events)

    def _say(
        self,
        tick: int,
        trigger: Trigger,
        listener: int | None,
        refs: tuple[int, ...],
        events: list[GameEvent],
    ) -> None:
        events.append(SpeechWanted(tick, self.npc_id, trigger, listener, refs))

    def _end_order(self, tick: int, events: list[GameEvent], ending: tuple[Outcome, str]) -> None:
        order = self.order
        if order is None:
            return
        outcome, reason = ending
        events.append(ActionEnded(tick, self.npc_id, order.kind.value, outcome, reason))
        logger.debug("npc %d: %s %s (%s)", self.npc_id, order.kind, outcome, reason)
        self.order, self._ending, self._goal = None, None, None

    def _go(self, new: NpcState, tick: int, events: list[GameEvent]) -> None:
        old = self.state
        if old in ACTING and new is not old and self.order is not None:
            self._end_order(tick, events, self._ending or ("interrupted", new.value))
        if new in ENDS_CHAT:
            self.chatting = False
        if new not in (NpcState.ROUTINE, NpcState.NOTICE):
            self._welcome_until = -1  # greeted, talking, hit or busy: the welcome is over
        self.state = new
        self.epoch += 1
        self.entered_tick = tick
        events.append(NpcTransitioned(tick, self.npc_id, old.value, new.value, self.epoch))
        logger.debug("npc %d: %s -> %s (epoch %d)", self.npc_id, old, new, self.epoch)
