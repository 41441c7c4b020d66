"""The simulated village: one pymunk space stepped at a fixed 60 Hz.

``World.step`` advances exactly one tick and returns that tick's events. Physics
callbacks only record facts; everything that changes game state happens after
``Space.step``, in a fixed order, so the same seed always gives the same world.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import math
import random

import pymunk

from game.sim import aim, builder
from game.sim.actions import ActionRunner, carry, walk_past
from game.sim.cast import Cast, NpcSpec
from game.sim.categories import CARRIED, HELD, PROP
from game.sim.contacts import ContactLog, install
from game.sim.depiction import actor_views, npc_status, player_status, prop_view
from game.sim.errands import Errand, ErrandBoard
from game.sim.events import GameEvent
from game.sim.hints import ErrandHints
from game.sim.level import Level
from game.sim.npc_states import CALM, NpcState
from game.sim.orders import ActionKind, Order
from game.sim.perception import EYE_HEIGHT, XIndex, line_of_sight
from game.sim.placing import Placing, openings
from game.sim.player import PLAYER_H, PLAYER_W, Player, PlayerIntent
from game.sim.population import errand_refs, populate, post_errands
from game.sim.props import Prop
from game.sim.rules import Rules
from game.sim.senses import Percept
from game.sim.snapshot import LevelView, PropView, WorldSnapshot
from game.sim.status import Motion, NpcStatus, PlayerStatus
from game.sim.ticks import DT
from game.sim.tuning import Tuning
from game.sim.villager import NPC_W
from game.sim.welcome import WELCOME_HOLD_TICKS, WELCOME_TICKS, welcomer

logger = logging.getLogger(__name__)

TALK_RADIUS = 140.0
CHAT_RANGE = 1.5
"""A chat goes on until the villager is this many talk radii away."""
PLAYER_ID = 1
AMBIENT_RADIUS = 160.0
PERCEPTION_STRIDE = 4
MAKE_WAY_DISTANCE = (PLAYER_W + NPC_W) / 2 + 14.0
"""A villager this close ahead of a walking player steps aside."""
BLOCKED_SPEED = 60.0
ERRAND_STRIDE = 6


class World:
    """The whole simulation: level, player, villagers, props, errands and their rules.

    Entity ids share one integer space: the player is 1, villagers follow in cast
    order (then generated ones), then props in level order (then generated ones).
    """

    def __init__(
        self, level: Level, cast: Cast, seed: int, extra_npcs: int = 0, extra_props: int = 0
    ) -> None:
        self.level = level
        self.cast = cast
        self.seed = seed
        self.dt = DT
        self.tick = 0
        self.talk_radius = TALK_RADIUS
        self._rng = random.Random(seed)
        self._ids = itertools.count(PLAYER_ID + 1)
        self.space = builder.make_space(level)
        self._log = ContactLog()
        install(self.space, self._log)
        builder.add_statics(self.space, level)

        self.player = Player(PLAYER_ID, *level.player_spawn)
        self._placing = Placing(openings(level))
        self.player.placing = self._placing
        self.space.add(self.player.body, self.player.shape)
        self._tuning = Tuning(talk_radius=self.talk_radius)
        population = populate(
            self.space,
            level,
            cast,
            self._rng,
            self._ids,
            player_id=PLAYER_ID,
            tuning=self._tuning,
            extra_npcs=extra_npcs,
            extra_props=extra_props,
        )
        self.villagers = population.villagers
        self._villager_by_id = {v.id: v for v in self.villagers}
        self.props = population.props
        self.stacks = population.stacks
        self._prop_by_id = {p.id: p for p in self.props}
        self._prop_by_shape: dict[pymunk.Shape, Prop] = {p.shape: p for p in self.props}
        self._tagged = {p.tag: p for p in self.props if p.tag}

        self._actions = ActionRunner(
            self.player, self._villager_by_id, self._prop_by_id, level.ground_y
        )
        self._zone_by_shape = {builder.add_zone(self.space, z): z.id for z in level.zones}
        errands = post_errands(level, self.villagers, self._errand_refs)
        self.errands = ErrandBoard(errands, {z.id: z for z in level.zones})
        self._rules = Rules(
            self.player,
            self.villagers,
            self.props,
            self.stacks,
            self.errands,
            self._zone_by_shape,
            self._errand_refs,
            self.entity_position,
        )
        self._hints = ErrandHints(self.errands, self._tagged, self.villagers, level.ground_y)
        self._pending: list[GameEvent] = []
        self._chat_partner: int | None = None
        """The villager the player's chat box is open with, if any."""
        self._idle = XIndex()
        self._welcome_due = True
        """A new game's first tick sends the nearest villager over to greet."""
        self.welcome_held = False
        """Set by the host while the villagers' voices are not ready yet: the welcome
        waits for them, up to ``WELCOME_HOLD_TICKS``."""
        for v in self.villagers:
            v.sense()
        logger.info(
            "world seed=%d: %d villagers, %d props", seed, len(self.villagers), len(self.props)
        )

    # -- construction ---------------------------------------------------------------

    def _errand_refs(self, errand: Errand) -> tuple[int, ...]:
        return errand_refs(errand, self._tagged, self.stacks)

    # -- stepping -------------------------------------------------------------------

    def step(self, intent: PlayerIntent) -> list[GameEvent]:
        """Advance exactly one fixed tick and return the events of that tick."""
        tick = self.tick + 1
        events, self._pending = self._pending, []
        if self._welcome_due and not (self.welcome_held and tick <= WELCOME_HOLD_TICKS):
            self._welcome_due = False
            host = welcomer(self.villagers, self.player.body.position.x, self.talk_radius)
            if host is not None:
                host.brain.welcome(tick + WELCOME_TICKS)
        carried = self.player.carrying
        self.player.control(intent, tick, self.space, self._prop_by_shape)
        if carried is not None and self.player.carrying is None:
            self._rules.flights.launch(carried, tick)
        self._make_way(intent.move, tick)
        for villager in self.villagers:
            villager.drive(tick)
            carry(villager)
        self._log.clear()
        self.space.step(self.dt)
        for villager in self.villagers:
            villager.sense()
        self._keep_off_player(tick)
        self._rules.resolve_contacts(tick, self._log, events, self._chat_partner is not None)
        self._placing.column.update(self._rules.building())
        self.player.find_candidates(self.space, self._prop_by_shape, intent.cycle)
        self._rules.resolve_flights(tick, events)
        self._rules.check_stacks(tick, events)
        if tick % ERRAND_STRIDE == 0:
            self._rules.check_errands(tick, events)
        px, py = self.player.body.position
        for villager in self.villagers:
            brain = villager.brain
            if brain.order is not None or villager.carrying is not None:
                self._actions.steer(tick, villager)
            elif brain.state in CALM and brain.goal_x is not None:
                walk_past(tick, villager, brain.goal_x, (px, py))
        self._actions.rejoin(tick)
        self._think(tick, events)
        events.extend(self._hints.check(tick, self.player))
        self.tick = tick
        return events

    def _make_way(self, move: int, tick: int) -> None:
        """A villager blocking a player who tries to walk on steps aside, then back in.

        Walking into someone still bumps them; it is the player held up against them
        who gets let past.
        """
        px, py = self.player.body.position
        blocked = abs(self.player.body.velocity.x) < BLOCKED_SPEED or self.player.slipping_past
        for v in self.villagers:
            ahead = (v.x - px) * move
            if (
                move
                and blocked
                and 0.0 < ahead < MAKE_WAY_DISTANCE
                and abs(v.y - py) < PLAYER_H / 2
                and v.brain.conscious
            ):
                v.step_aside(tick)
            elif v.aside:
                v.step_back_in(tick, abs(v.x - px) > (PLAYER_W + NPC_W) / 2 + 4.0)

    def _keep_off_player(self, tick: int) -> None:
        """A villager who landed on the player's head (or what they carry) gets down."""
        player = self.player
        px, py = player.body.position
        load = player.carrying
        for v in self.villagers:
            if not v.brain.conscious or abs(v.x - px) > PLAYER_W + NPC_W:
                continue
            if v.rests_on(px, py + PLAYER_H / 2, PLAYER_W / 2):
                v.slide_off(px, tick)
            elif load is not None:
                lx, ly = load.body.position
                if v.rests_on(lx, ly + load.kind.h / 2, load.kind.w / 2):
                    v.slide_off(lx, tick)

    def _think(self, tick: int, events: list[GameEvent]) -> None:
        px, py = self.player.body.position
        notice = self._tuning.notice_radius
        if tick % PERCEPTION_STRIDE == 0:
            self._idle.rebuild(
                (v.x, v.id, v.y) for v in self.villagers if v.brain.state is NpcState.IDLE
            )
        for v in self.villagers:
            dx = px - v.x
            distance = math.hypot(dx, py - v.y)
            # Each villager looks around every few ticks, staggered so a crowd spreads
            # its sight rays over the ticks instead of casting them all at once.
            if (tick + v.index) % PERCEPTION_STRIDE == 0:
                eye = (v.x, v.y + EYE_HEIGHT)
                v.sees_player = distance <= notice and line_of_sight(self.space, eye, (px, py))
                v.neighbour = None
                if v.brain.state is NpcState.IDLE:
                    near = self._idle.nearest(v.x, v.y, AMBIENT_RADIUS, exclude=v.id)
                    v.neighbour = near[0] if near is not None else None
            percept = Percept(
                tick, v.x, abs(v.angle), distance, dx, v.sees_player, v.neighbour, py - v.y
            )
            events.extend(v.brain.think(percept))

    # -- views and queries ----------------------------------------------------------

    def level_view(self) -> LevelView:
        """The static level, for the renderer to draw once."""
        return self.level.view()

    def snapshot(self) -> WorldSnapshot:
        """Everything that moves, as immutable views."""
        props = tuple(prop_view(p) for p in self.props)
        player = self.player
        actors = actor_views(player, self.villagers)
        target = player.target.id if player.target is not None else None
        errands = self.errands.views()
        aim_line = aim.aim_view(player, self.space, self.dt)
        return WorldSnapshot(self.tick, PLAYER_ID, props, actors, errands, target, aim_line)

    def world_hash(self) -> str:
        """sha256 over rounded body states, villager states and epochs, and errand tallies."""
        h = hashlib.sha256()
        bodies = (
            [self.player.body] + [v.body for v in self.villagers] + [p.body for p in self.props]
        )
        for body in bodies:
            x, y = body.position
            vx, vy = body.velocity
            h.update(f"{x:.3f},{y:.3f},{vx:.3f},{vy:.3f},{body.angle:.4f};".encode())
        for v in self.villagers:
            h.update(f"{v.id}:{v.brain.state.value}:{v.brain.epoch};".encode())
        for e in self.errands.errands:
            h.update(f"{e.spec.id}:{e.progress}:{e.done}:{e.open};".encode())
        return h.hexdigest()

    def npc_ids(self) -> tuple[int, ...]:
        """Ids of every villager, in id order."""
        return tuple(v.id for v in self.villagers)

    def npc(self, npc_id: int) -> NpcStatus | None:
        """A villager's live status, or None if there is no such villager."""
        v = self._villager_by_id.get(npc_id)
        if v is None:
            return None
        return npc_status(v, self.tick)

    def npc_spec(self, npc_id: int) -> NpcSpec | None:
        """The persona, spots and template lines a villager speaks with."""
        v = self._villager_by_id.get(npc_id)
        return v.spec if v is not None else None

    def greeter_motions(self, within_ticks: int = 0) -> list[Motion]:
        """Motion of every villager who would greet the player who walked up now, or
        ``within_ticks`` from now (their wait since the last greeting ends by then)."""
        tick = self.tick + within_ticks
        out = []
        for v in self.villagers:
            if v.brain.would_greet(tick):
                p, vel = v.body.position, v.body.velocity
                out.append(Motion(v.id, p.x, p.y, vel.x, vel.y))
        return out

    def would_greet(self, npc_id: int, within_ticks: int = 0) -> bool:
        """Whether one villager is among :meth:`greeter_motions` (``within_ticks``)."""
        v = self._villager_by_id.get(npc_id)
        return v is not None and v.brain.would_greet(self.tick + within_ticks)

    def player_dx(self, npc_id: int) -> float | None:
        """How far a villager stands from the player along x (None: no such villager)."""
        v = self._villager_by_id.get(npc_id)
        if v is None:
            return None
        return float(v.body.position.x - self.player.body.position.x)

    def player_status(self) -> PlayerStatus:
        """The player's id, position, velocity and carried prop id."""
        return player_status(self.player)

    def entity_exists(self, entity_id: int) -> bool:
        """Whether the id names the player, a villager or a prop."""
        return (
            entity_id == PLAYER_ID
            or entity_id in self._villager_by_id
            or entity_id in self._prop_by_id
        )

    def entity_kind(self, entity_id: int) -> str | None:
        """What an entity is, in a word: "player", a villager's role, or a prop's kind."""
        if entity_id == PLAYER_ID:
            return "player"
        v = self._villager_by_id.get(entity_id)
        if v is not None:
            return v.spec.role
        p = self._prop_by_id.get(entity_id)
        return p.kind.name if p is not None else None

    def entity_position(self, entity_id: int) -> tuple[float, float] | None:
        """Where an entity is now, or None if it does not exist."""
        if entity_id == PLAYER_ID:
            x, y = self.player.body.position
            return (x, y)
        v = self._villager_by_id.get(entity_id)
        if v is not None:
            return (v.x, v.y)
        p = self._prop_by_id.get(entity_id)
        if p is not None:
            px, py = p.body.position
            return (px, py)
        return None

    def distance(self, a_id: int, b_id: int) -> float | None:
        """Distance between two entities, or None if either does not exist."""
        a, b = self.entity_position(a_id), self.entity_position(b_id)
        if a is None or b is None:
            return None
        return math.hypot(a[0] - b[0], a[1] - b[1])

    def nearby_props(self, npc_id: int, radius: float) -> tuple[PropView, ...]:
        """Props within ``radius`` of a villager, nearest first (ties by id)."""
        v = self._villager_by_id.get(npc_id)
        if v is None:
            return ()
        bb = pymunk.BB(v.x - radius, v.y - radius, v.x + radius, v.y + radius)
        found: list[tuple[float, int, Prop]] = []
        for shape in self.space.bb_query(bb, pymunk.ShapeFilter(mask=PROP | HELD | CARRIED)):
            prop = self._prop_by_shape.get(shape)
            if prop is None:
                continue
            px, py = prop.body.position
            d = math.hypot(px - v.x, py - v.y)
            if d <= radius:
                found.append((d, prop.id, prop))
        found.sort(key=lambda item: (item[0], item[1]))
        return tuple(prop_view(p) for _, _, p in found)

    def nearest_talker(self) -> int | None:
        """The villager nearest the player, within talk radius and able to talk (ties by id)."""
        px, py = self.player.body.position
        best: tuple[float, int] | None = None
        for v in self.villagers:
            if not v.brain.can_talk:
                continue
            d = math.hypot(v.x - px, v.y - py)
            if d <= self.talk_radius and (best is None or (d, v.id) < best):
                best = (d, v.id)
        return None if best is None else best[1]

    def in_chat_range(self, npc_id: int) -> bool:
        """Whether a chat with this villager can go on: they are near and able to talk."""
        v = self._villager_by_id.get(npc_id)
        if v is None or not v.brain.can_talk:
            return False
        px, py = self.player.body.position
        return math.hypot(v.x - px, v.y - py) <= self.talk_radius * CHAT_RANGE

    def set_talking(self, npc_id: int, talking: bool) -> bool:
        """Open or close a chat with a villager; False if they cannot talk now.

        The transition's events are returned by the next ``step``.
        """
        v = self._villager_by_id.get(npc_id)
        if v is None:
            return False
        if talking and not v.brain.can_talk:
            return False
        self._pending.extend(v.brain.set_talking(self.tick, talking))
        if not talking:
            if self._chat_partner == npc_id:
                self._chat_partner = None
            return True
        opened = v.brain.state is NpcState.TALK or v.brain.acting
        if opened:
            self._chat_partner = npc_id
        return opened

    def start_action(self, npc_id: int, order: Order) -> bool:
        """Have a villager carry out ``order`` from the next tick; False if they cannot.

        Calling another villager also sends that villager over to the traveller. The
        transitions come out of the next ``step``, as the brains' own do.
        """
        v = self._villager_by_id.get(npc_id)
        if v is None or not v.brain.can_talk:
            return False
        if order.kind is ActionKind.CALL:
            other = self._villager_by_id.get(order.other_id or -1)
            if other is None or not other.brain.can_talk or other is v:
                return False
            self._pending.extend(other.brain.answer_call(self.tick))
        started = v.brain.begin(self.tick, order, self.player.body.position.x)
        self._pending.extend(started)
        return bool(started) or order.kind is ActionKind.CARRY_ON

    def set_attitude(self, npc_id: int, attitude: int) -> None:
        """Tell a villager's brain how they now feel about the traveller (-2 to +2)."""
        v = self._villager_by_id.get(npc_id)
        if v is not None:
            v.brain.attitude = attitude

    def carried_by(self, npc_id: int) -> int | None:
        """The id of the prop a villager carries, or None."""
        v = self._villager_by_id.get(npc_id)
        return v.carrying.id if v is not None and v.carrying is not None else None

    @property
    def welcome_pending(self) -> bool:
        """Whether a new game's welcome has yet to be sent (it may be held meanwhile)."""
        return self._welcome_due

    def skip_welcome(self) -> None:
        """A continued game: nobody comes over to greet on the first tick."""
        self._welcome_due = False

    def place_player(self, x: float, y: float) -> None:
        """Put the player at ``(x, y)`` at rest (a continued game), inside the level."""
        level = self.level
        x = min(max(x, 0.0), level.width)
        y = min(max(y, level.ground_y(x)), level.height)
        self.player.body.position = (x, y)
        self.player.body.velocity = (0.0, 0.0)
        self.space.reindex_shapes_for_body(self.player.body)
