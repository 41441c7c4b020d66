"""The player's body: walking and jumping by forces, picking props up, carrying, throwing."""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass

import pymunk

from game.sim.categories import (
    FOOTING_FILTER,
    GRAB_FILTER,
    HELD_FILTER,
    NPC_QUERY_FILTER,
    PLAYER_FILTER,
    PLAYER_GHOST_FILTER,
    PROP_FILTER,
    CollisionType,
)
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
THROW_SPEED = (650.0, 420.0)
JUMP_COOLDOWN = 12
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

    ``move`` is -1, 0 or 1. ``jump`` may be held. ``grab`` and ``throw`` act on the tick
    they turn on: grab picks up the nearest prop in reach, or drops the carried one;
    throw launches the carried prop forward and up.
    """

    move: int = 0
    jump: bool = False
    grab: bool = False
    throw: bool = False


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
        self._ghost_from = -1
        self._ghost_until = -1

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
        body.apply_force_at_local_point((max(-limit, min(limit, force)), 0.0))
        if intent.jump and self.grounded and tick >= self._jump_ready:
            body.velocity = (vx, JUMP_SPEED)
            self._jump_ready = tick + JUMP_COOLDOWN

        grab_edge = intent.grab and not self._grab_was
        throw_edge = intent.throw and not self._throw_was
        self._grab_was, self._throw_was = intent.grab, intent.throw
        if throw_edge and self.carrying is not None:
            self._release(
                tick, (self.facing * THROW_SPEED[0] + vx * 0.5, THROW_SPEED[1] + max(vy, 0.0))
            )
        elif grab_edge:
            if self.carrying is not None:
                self._release(tick, (vx, vy))
            else:
                self._pick_up(space, props_by_shape, x, y)
        self._carry(tick)
        self._rejoin(tick)

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

    def _pick_up(
        self, space: pymunk.Space, props_by_shape: Mapping[pymunk.Shape, Prop], x: float, y: float
    ) -> None:
        bb = pymunk.BB(x - REACH, y - REACH, x + REACH, y + REACH)
        best: tuple[float, int, Prop] | None = None
        for shape in space.bb_query(bb, GRAB_FILTER):
            prop = props_by_shape.get(shape)
            if prop is None or prop.held:
                continue
            px, py = prop.body.position
            d2 = (px - x) ** 2 + (py - y) ** 2
            if d2 <= REACH * REACH and (best is None or (d2, prop.id) < best[:2]):
                best = (d2, prop.id, prop)
        if best is None:
            return
        prop = best[2]
        prop.held = True
        prop.airborne_since = -1
        prop.hit_npc = False
        prop.shape.filter = HELD_FILTER
        prop.body.activate()
        self.carrying = prop
        logger.debug("player picked up prop %d", prop.id)

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
        self.released.append(prop)
        logger.debug("player released prop %d", prop.id)

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
