"""The player's body: walking and jumping by forces, picking props up, carrying, throwing."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass

import pymunk

from game.sim.categories import (
    CARRIED_FILTER,
    FOOTING_FILTER,
    GRAB_FILTER,
    HELD_FILTER,
    INTO_FILTER,
    NPC_QUERY_FILTER,
    PLAYER_FILTER,
    PLAYER_GHOST_FILTER,
    PROP_FILTER,
    STACK_FILTER,
    CollisionType,
)
from game.sim.placing import Placement, Placing
from game.sim.props import Prop

logger = logging.getLogger(__name__)

PLAYER_W = 30.0
PLAYER_H = 60.0
PLAYER_MASS = 8.0
CORNER = 6.0
WALK_SPEED = 300.0
JUMP_SPEED = 620.0
GROUND_ACCEL = 2400.0
AIR_ACCEL = 900.0
REACH = 80.0
THROW_MIN_SPEED = 330.0
THROW_MAX_SPEED = 900.0
CHARGE_TICKS = 45
"""Holding throw this many ticks charges it fully."""
MASS_REF = 1.5
"""A prop of this mass flies at 1/sqrt(2) of the speed of a weightless one."""
AIM_DEFAULT = 0.6
AIM_MIN = -0.35
AIM_MAX = 1.45
AIM_STEP = 0.035
"""Radians per tick the aim turns while up or down is held."""
DROP_GAP = 3.0
SQUARE_TILT = 0.2
"""A box tilted less than this (radians off square) gets another set squarely on top."""
JUMP_COOLDOWN = 12
EASE_DISTANCE = 60.0
"""Within this of the stack being rebuilt, a player carrying something walks no faster
than they could stop from, braking at half their grip, in the room left: they come to
lean on the stack instead of shoving it."""
HELD_SLACK = 160.0
"""A carried prop further than this from the hold point (snagged on a wall) is dropped."""
REJOIN_TICKS = 20
"""Ticks before a released prop collides with the player again."""
GHOST_AFTER = 12
GHOST_TICKS = 45
"""After pushing into a villager for GHOST_AFTER ticks the player slips past for GHOST_TICKS."""


@dataclass(frozen=True, slots=True)
class PlayerIntent:
    """What the player wants this tick.

    ``move`` is -1, 0 or 1. ``jump`` may be held. ``grab`` acts on the tick it turns on:
    it picks up the highlighted prop, or puts the carried one down in front. ``throw`` is
    held to charge and the throw flies on the tick it is let go. ``aim`` sets the throw's
    angle (radians above the horizontal, facing forward) when given; ``tilt`` (-1, 0, 1)
    turns it while held. ``cycle`` (-1, 0, 1) moves the highlight to the previous or next
    prop in reach, on the tick it is nonzero.
    """

    move: int = 0
    jump: bool = False
    grab: bool = False
    throw: bool = False
    aim: float | None = None
    tilt: int = 0
    cycle: int = 0


class Player:
    """The player's body and what it carries."""

    def __init__(self, player_id: int, x: float, y: float) -> None:
        self.id = player_id
        self.body = pymunk.Body(PLAYER_MASS, math.inf)
        self.body.position = (x, y)
        # Rounded corners let the player slide up slopes instead of catching on creases.
        self.shape = pymunk.Poly.create_box(
            self.body, (PLAYER_W - 2 * CORNER, PLAYER_H - 2 * CORNER), radius=CORNER
        )
        self.shape.friction = 0.4
        self.shape.elasticity = 0.0
        self.shape.filter = PLAYER_FILTER
        self.shape.collision_type = CollisionType.PLAYER
        self.facing = 1
        self.grounded = False
        self.carrying: Prop | None = None
        self.released: list[Prop] = []
        self._jump_ready = 0
        self._grab_was = False
        self._throw_was = False
        self.aim = AIM_DEFAULT
        self.charge_ticks = 0
        self.candidates: tuple[Prop, ...] = ()
        """Props in reach, nearest first; ``target`` is the one grab would take."""
        self.target: Prop | None = None
        self._ghost_from = -1
        self._ghost_until = -1
        self.placing: Placing | None = None
        """Where put-downs into a basket or onto the stack being rebuilt go, if anywhere."""

    def control(
        self,
        intent: PlayerIntent,
        tick: int,
        space: pymunk.Space,
        props_by_shape: Mapping[pymunk.Shape, Prop],
    ) -> None:
        """Apply the intent: forces for walking and jumping, then grab, drop or throw."""
        self._update_ghost(tick, space)
        body = self.body
        x, y = body.position
        vx, vy = body.velocity
        self.grounded = self._on_ground(space, x, y)
        move = max(-1, min(1, intent.move))
        if move:
            self.facing = move
        accel = GROUND_ACCEL if self.grounded else AIR_ACCEL
        force = PLAYER_MASS * (move * WALK_SPEED - vx) * 12.0
        limit = PLAYER_MASS * accel
        if move and vx * move > 0.0 and self.carrying is not None:
            # Carrying, brake hard enough to stop short of the stack being rebuilt and
            # lean on it while aiming; empty-handed, walking into it still shoves it.
            allowed = math.sqrt(accel * self._room_ahead(space, move))
            if vx * move > allowed:
                force = -move * limit
            else:
                force = min(force * move, PLAYER_MASS * (allowed - vx * move) * 12.0) * move
        body.apply_force_at_local_point((max(-limit, min(limit, force)), 0.0))
        if intent.jump and self.grounded and tick >= self._jump_ready:
            body.velocity = (vx, JUMP_SPEED)
            self._jump_ready = tick + JUMP_COOLDOWN

        self._steer_aim(intent)
        grab_edge = intent.grab and not self._grab_was
        thrown = self._throw_was and not intent.throw
        self._grab_was, self._throw_was = intent.grab, intent.throw
        if self.carrying is not None and intent.throw:
            self.charge_ticks = min(CHARGE_TICKS, self.charge_ticks + 1)
        if thrown and self.carrying is not None:
            tvx, tvy = self.throw_velocity(self.carrying)
            self._release(tick, (tvx + vx * 0.5, tvy + max(vy, 0.0) * 0.5))
        elif grab_edge:
            if self.carrying is not None:
                self._put_down(tick, space)
            elif self.target is not None:
                self._pick_up(self.target)
        if not intent.throw:
            self.charge_ticks = 0
        self._carry(tick)
        self._rejoin(tick)

    @property
    def charge(self) -> float:
        """How charged the throw is, 0..1 (0 when throw is not held)."""
        return self.charge_ticks / CHARGE_TICKS

    def throw_velocity(self, prop: Prop) -> tuple[float, float]:
        """The launch velocity a throw would give ``prop`` now (the player's own motion aside).

        Charge sets the effort and the prop's mass how much of it turns into speed: an
        apple flies far, a barrel barely clears the player's feet.
        """
        effort = THROW_MIN_SPEED + (THROW_MAX_SPEED - THROW_MIN_SPEED) * self.charge
        speed = effort / math.sqrt(1.0 + prop.kind.mass / MASS_REF)
        return (self.facing * speed * math.cos(self.aim), speed * math.sin(self.aim))

    def drop_point(self, prop: Prop) -> tuple[float, float]:
        """Where a prop put down starts from: in front of the player, at carrying height."""
        x, _ = self.body.position
        _, hy = self.hold_point(prop)
        reach = PLAYER_W / 2 + max(prop.kind.w, prop.kind.h) / 2 + DROP_GAP
        return (x + self.facing * reach, hy)

    def put_down_spot(self, space: pymunk.Space, prop: Prop) -> Placement:
        """Where ``prop`` would go if put down now: into a basket or onto the stack's top
        when the player means that, else in front (squared up on a box below)."""
        return self._helped_spot(space, prop) or Placement(
            *self._square_up(space, prop, self.drop_point(prop))
        )

    def _helped_spot(self, space: pymunk.Space, prop: Prop) -> Placement | None:
        if self.placing is None:
            return None
        x, y = self.body.position
        stand = (x, y - PLAYER_H / 2)
        return self.placing.spot(space, prop, stand, self.facing, self.drop_point(prop))

    def _steer_aim(self, intent: PlayerIntent) -> None:
        if intent.aim is not None:
            self.aim = intent.aim
        self.aim += AIM_STEP * max(-1, min(1, intent.tilt))
        self.aim = max(AIM_MIN, min(AIM_MAX, self.aim))

    @property
    def slipping_past(self) -> bool:
        """Whether the player is passing through villagers just now (see ``touched_npc``)."""
        return self.shape.filter == PLAYER_GHOST_FILTER

    def touched_npc(self, tick: int) -> None:
        """Note a first contact with a villager; keep pushing and the player slips past."""
        if tick >= self._ghost_until:
            self._ghost_from = tick + GHOST_AFTER
            self._ghost_until = tick + GHOST_AFTER + GHOST_TICKS

    def _update_ghost(self, tick: int, space: pymunk.Space) -> None:
        ghost = self._ghost_from <= tick < self._ghost_until
        # Never turn solid inside a villager: the solver would fling them apart.
        if (
            not ghost
            and self.shape.filter == PLAYER_GHOST_FILTER
            and space.bb_query(self.shape.bb, NPC_QUERY_FILTER)
        ):
            self._ghost_until = tick + 5
            ghost = True
        wanted = PLAYER_GHOST_FILTER if ghost else PLAYER_FILTER
        if self.shape.filter != wanted:
            self.shape.filter = wanted

    def _room_ahead(self, space: pymunk.Space, move: int) -> float:
        """How far the player can walk ``move``-wards before touching the stack being
        rebuilt (infinite if it is not ahead)."""
        column = self.placing.column if self.placing is not None else None
        if column is None or not column.crates:
            return math.inf
        x, y = self.body.position
        front = x + move * PLAYER_W / 2
        room = math.inf
        for dy in (CORNER - PLAYER_H / 2, 0.0, PLAYER_H / 2 - CORNER):
            start, end = (front, y + dy), (front + move * EASE_DISTANCE, y + dy)
            for hit in space.segment_query(start, end, 0.0, GRAB_FILTER):
                if column.has_shape(hit.shape):
                    room = min(room, hit.alpha * EASE_DISTANCE)
        return room

    def hold_point(self, prop: Prop) -> tuple[float, float]:
        """Where a carried prop rides: just above the player's head."""
        x, y = self.body.position
        return (x, y + PLAYER_H / 2 + prop.kind.h / 2 + 6.0)

    def _on_ground(self, space: pymunk.Space, x: float, y: float) -> bool:
        # A short flat probe under the feet, narrower than the body so walls don't count.
        feet = y - PLAYER_H / 2 - 4.0
        half = PLAYER_W / 2 - 6.0
        hit = space.segment_query_first((x - half, feet), (x + half, feet), 3.0, FOOTING_FILTER)
        return hit is not None and (self.carrying is None or hit.shape is not self.carrying.shape)

    def find_candidates(
        self, space: pymunk.Space, props_by_shape: Mapping[pymunk.Shape, Prop], cycle: int
    ) -> None:
        """Find the props in reach, nearest first, and which of them a grab would take.

        Called after the physics step, so the highlight shows the world as it now is.
        """
        if self.carrying is not None:
            self.candidates, self.target = (), None
            return
        x, y = self.body.position
        bb = pymunk.BB(x - REACH, y - REACH, x + REACH, y + REACH)
        found: list[tuple[float, int, Prop]] = []
        for shape in space.bb_query(bb, GRAB_FILTER):
            prop = props_by_shape.get(shape)
            if prop is None or prop.held or self._stacked(prop):
                continue
            px, py = prop.body.position
            d2 = (px - x) ** 2 + (py - y) ** 2
            if d2 <= REACH * REACH:
                found.append((d2, prop.id, prop))
        found.sort(key=lambda item: (item[0], item[1]))
        self.candidates = tuple(p for _, _, p in found)
        if not self.candidates:
            self.target = None
            return
        # The highlight stays on the prop the player chose while it is still in reach.
        index = self.candidates.index(self.target) if self.target in self.candidates else 0
        if cycle:
            index = (index + (1 if cycle > 0 else -1)) % len(self.candidates)
        self.target = self.candidates[index]

    def _stacked(self, prop: Prop) -> bool:
        """Whether ``prop`` counts towards the stack being rebuilt (the hand leaves those)."""
        return self.placing is not None and self.placing.column.holds(prop)

    def take(self, prop: Prop) -> None:
        """Hold ``prop`` from now on, as if just grabbed (a continued game hands it back)."""
        if self.carrying is None and not prop.held:
            self._pick_up(prop)

    def _pick_up(self, prop: Prop) -> None:
        prop.held = True
        prop.airborne_since = -1
        prop.hit_npc = False
        prop.shape.filter = CARRIED_FILTER
        prop.body.activate()
        self.carrying = prop
        self.target = None
        logger.debug("player picked up prop %d", prop.id)

    def _put_down(self, tick: int, space: pymunk.Space) -> None:
        """Set the carried prop down in front, or let it fall where it is if that is blocked.

        Into a basket or onto the stack's top when the player means that (``placing``):
        those spots are judged free there.
        """
        prop = self.carrying
        if prop is None:
            return
        body = prop.body
        # Judge spots as the prop will be once let go of: solid to the stack's crates.
        prop.shape.filter = HELD_FILTER
        helped = self._helped_spot(space, prop)
        if helped is not None:
            body.position, body.angle = (helped.x, helped.y), helped.angle
            prop.shape.cache_bb()
            vx = 0.0
        else:
            was = body.position
            body.position = self._square_up(space, prop, self.drop_point(prop))
            prop.shape.cache_bb()
            blocked = any(
                not hit.shape.sensor and hit.shape is not self.shape
                for hit in space.shape_query(prop.shape)
            )
            if blocked:
                body.position = was
                prop.shape.cache_bb()
            vx = self.body.velocity.x * 0.3
        self._release(tick, (vx, 0.0))
        if helped is None:
            body.angle = 0.0
        elif helped.into:
            prop.shape.filter = INTO_FILTER
        body.angular_velocity = 0.0

    def _release(self, tick: int, velocity: tuple[float, float]) -> None:
        prop = self.carrying
        if prop is None:
            return
        self.carrying = None
        prop.held = False
        prop.thrown_by_player = True
        prop.airborne_since = tick
        prop.hit_npc = False
        prop.rest_ticks = 0
        prop.release_tick = tick
        prop.peak_speed = 0.0
        prop.body.velocity = velocity
        prop.shape.filter = HELD_FILTER
        if self.placing is not None:
            self.placing.clear_of_column(prop, self.body.position.x)
        self.released.append(prop)
        logger.debug("player released prop %d", prop.id)

    @staticmethod
    def _square_up(space: pymunk.Space, prop: Prop, at: tuple[float, float]) -> tuple[float, float]:
        """Line a box up with a box it is being set down on, so stacking does what it means."""
        if prop.kind.shape != "box":
            return at
        x, y = at
        half = prop.kind.w / 2
        hit = space.segment_query_first((x, y), (x, y - 400.0), half * 0.8, STACK_FILTER)
        below = hit.shape.body if hit is not None and hit.shape is not None else None
        if below is None or below.body_type != pymunk.Body.DYNAMIC:
            return at
        quarter = math.pi / 2
        tilt = below.angle % quarter
        if min(tilt, quarter - tilt) > SQUARE_TILT or abs(below.position.x - x) > half:
            return at
        return (below.position.x, y)

    def _carry(self, tick: int) -> None:
        prop = self.carrying
        if prop is None:
            return
        hx, hy = self.hold_point(prop)
        px, py = prop.body.position
        dx, dy = hx - px, hy - py
        if dx * dx + dy * dy > HELD_SLACK * HELD_SLACK:
            self._release(tick, prop.body.velocity)
            return
        pvx, pvy = self.body.velocity
        # Close most of the gap each tick; the carried prop stays a real body that can
        # still bump into walls and villagers.
        prop.body.velocity = (pvx + dx * 20.0, pvy + dy * 20.0)
        prop.body.angular_velocity = -prop.body.angle * 10.0

    def _rejoin(self, tick: int) -> None:
        """Let released props collide with the player again once clear of them."""
        keep: list[Prop] = []
        for prop in self.released:
            if prop.held:
                continue
            if tick - prop.release_tick >= REJOIN_TICKS:
                prop.shape.filter = PROP_FILTER
            else:
                keep.append(prop)
        self.released = keep
