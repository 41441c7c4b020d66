"""Actions a villager carries out with their body: follow, fetch, show the way, call, ...

A decision (``game.decisions``) becomes an ``Order``; the villager's brain enters the
action's state and this module steers them through it each tick: where to walk, when
to pick a prop up and where to set it down. Everything happens through forces on the
bodies (a carried prop is pulled to the villager's hands, as the player's is), never
by moving a body to where it should end up. Each action ends ``done``, ``gave_up``
(its time ran out, or what it needed went away) or ``interrupted`` (a hit, a fall),
and the brain reports that as an ``ActionEnded`` event.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping

import pymunk

from game.sim.categories import (
    DROPPED_FILTER,
    NPC_HELD_FILTER,
    PROP_FILTER,
    STACKED_FILTER,
    STATIC,
)
from game.sim.orders import ActionKind, Order
from game.sim.player import Player
from game.sim.props import Prop
from game.sim.villager import NPC_H, NPC_W, Villager

logger = logging.getLogger(__name__)


REACH_X = 20.0
"""How close in x a villager's middle must be to a prop to pick it up."""
REACH_ABOVE = 80.0
"""The highest a prop's middle may be over a villager's middle to be picked up: up on a
shelf or a cart, not on a roof."""
HAND_OVER_DISTANCE = 58.0
"""A fetched prop is set down once the villager is this close to the traveller."""
FOLLOW_GAP = 70.0
FOLLOW_LOST = 1200.0
GUIDE_WAIT = 260.0
"""A villager showing the way waits while the traveller is farther behind than this."""
GUIDE_ARRIVED = 18.0
GUIDE_TRAVELLER_NEAR = 220.0
COME_NEAR = 80.0
BASKET_AIM = 8.0
"""How close over the basket's middle a villager holds a prop before letting it go."""
CARRY_SLACK = 150.0
CARRY_PULL = 20.0
RUN_SPEED_GAP = 300.0
PASS_DISTANCE = NPC_W + 24.0
"""A villager walking somewhere this close behind the traveller steps aside to walk past."""


def hold_point(villager: Villager, prop: Prop) -> tuple[float, float]:
    """Where a villager carries a prop: over their head, a little to the front."""
    radius = max(prop.kind.w, prop.kind.h) / 2
    return (villager.x + villager.brain.facing * 4.0, villager.y + NPC_H / 2 + radius + 3.0)


def pick_up(villager: Villager, prop: Prop) -> None:
    """Take a prop in hand: it stops colliding with people and follows the villager."""
    prop.held = True
    prop.thrown_by_player = False
    prop.airborne_since = -1
    prop.hit_npc = False
    prop.shape.filter = NPC_HELD_FILTER
    prop.body.activate()
    villager.carrying = prop


def walk_past(tick: int, villager: Villager, goal: float, traveller: tuple[float, float]) -> None:
    """Step aside (in depth) if the traveller stands between a villager and ``goal``."""
    px, py = traveller
    ahead = (px - villager.x) * (1 if goal >= villager.x else -1)
    if (
        0.0 < ahead < PASS_DISTANCE
        and abs(goal - villager.x) > ahead
        and abs(py - villager.y) < NPC_H
    ):
        villager.step_aside(tick)


STATIC_QUERY = pymunk.ShapeFilter(mask=STATIC)
DROP_TICKS = 40
"""How long a prop a villager let go of falls past people."""


def let_go(villager: Villager, velocity: tuple[float, float] = (0.0, 0.0)) -> Prop | None:
    """Release the carried prop where it is, with ``velocity``; returns it.

    For a moment it passes through people, so it falls off the villager's head (into the
    basket, onto the ground) instead of resting on it; ``rejoin`` ends that.
    """
    prop = villager.carrying
    if prop is None:
        return None
    villager.carrying = None
    prop.held = False
    prop.shape.filter = DROPPED_FILTER
    prop.body.velocity = velocity
    prop.body.angular_velocity = 0.0
    return prop


def carry(villager: Villager) -> None:
    """Pull the carried prop towards the villager's hands (before the physics step)."""
    prop = villager.carrying
    if prop is None:
        return
    hx, hy = hold_point(villager, prop)
    px, py = prop.body.position
    dx, dy = hx - px, hy - py
    if dx * dx + dy * dy > CARRY_SLACK * CARRY_SLACK:
        let_go(villager, prop.body.velocity)
        logger.debug("npc %d lost hold of prop %d", villager.id, prop.id)
        return
    prop.body.velocity = (villager.vx + dx * CARRY_PULL, villager.vy + dy * CARRY_PULL)
    prop.body.angular_velocity = -prop.body.angle * 10.0


class ActionRunner:
    """Steers every villager who is carrying out an action, once per tick.

    ``steer`` runs after the villagers have sensed their bodies and before their brains
    think: it sets each one's walking goal and picks up or sets down props, and tells
    the brain when an action is done or must be given up.
    """

    def __init__(
        self,
        player: Player,
        villagers: Mapping[int, Villager],
        props: Mapping[int, Prop],
        ground_y: Callable[[float], float],
    ) -> None:
        self._player = player
        self._villagers = villagers
        self._props = props
        self._ground_y = ground_y
        self._dropped: dict[int, tuple[Prop, int]] = {}

    def rejoin(self, tick: int) -> None:
        """Props let go of a while ago collide with people again."""
        if not self._dropped:
            return
        for prop_id, (prop, at) in list(self._dropped.items()):
            if prop.held:
                del self._dropped[prop_id]
            elif tick - at >= DROP_TICKS:
                prop.shape.filter = PROP_FILTER
                del self._dropped[prop_id]

    def _let_go(self, tick: int, v: Villager, velocity: tuple[float, float] = (0.0, 0.0)) -> None:
        prop = let_go(v, velocity)
        if prop is not None:
            self._dropped[prop.id] = (prop, tick)

    def steer(self, tick: int, villager: Villager) -> None:
        """Move one villager's action along, or end it."""
        brain = villager.brain
        order = brain.order
        if order is None:
            if villager.carrying is not None:
                self._let_go(tick, villager)  # interrupted mid-carry: it drops where it is
            return
        px = self._player.body.position.x
        match order.kind:
            case ActionKind.FOLLOW:
                self._follow(tick, villager, px)
            case ActionKind.FETCH | ActionKind.PUT:
                self._fetch(tick, villager, order, px)
            case ActionKind.SHOW_WAY:
                self._guide(tick, villager, order, px)
            case ActionKind.COME:
                self._come(tick, villager, px)
            case ActionKind.CALL:
                other = self._villagers.get(order.other_id or -1)
                if other is not None:
                    brain.facing = 1 if other.x >= villager.x else -1
                brain.want(None)
            case ActionKind.TURN_AWAY:
                brain.facing = -1 if px >= villager.x else 1
                brain.want(None)
            case _:
                pass

    def _walk(self, tick: int, v: Villager, goal: float | None, fast: bool = False) -> None:
        """Walk towards ``goal``, stepping aside (in depth) past the traveller on the way."""
        v.brain.want(goal, fast)
        if goal is not None:
            px, py = self._player.body.position
            walk_past(tick, v, goal, (px, py))

    def _follow(self, tick: int, v: Villager, px: float) -> None:
        dx = px - v.x
        if abs(dx) > FOLLOW_LOST:
            v.brain.finish(tick, "gave_up", "lost the traveller")
            return
        side = 1.0 if dx >= 0 else -1.0
        if abs(dx) <= FOLLOW_GAP + 20.0:
            v.brain.want(None)
            v.brain.facing = int(side)
            return
        self._walk(tick, v, px - side * FOLLOW_GAP, abs(dx) > RUN_SPEED_GAP)

    def _fetch(self, tick: int, v: Villager, order: Order, px: float) -> None:
        brain = v.brain
        if v.carrying is None:
            prop = self._props.get(order.prop_id or -1)
            if prop is None or prop.held:
                brain.finish(tick, "gave_up", "the prop was taken")
                return
            if prop.shape.filter == STACKED_FILTER:
                brain.finish(tick, "gave_up", "the crate is in the stack")
                return
            x, y = prop.body.position
            if abs(x - v.x) <= REACH_X:
                if y - v.y > REACH_ABOVE:
                    brain.finish(tick, "gave_up", "out of reach")
                    return
                pick_up(v, prop)
                logger.debug("npc %d picked up prop %d", v.id, prop.id)
            else:
                self._walk(tick, v, x, abs(x - v.x) > RUN_SPEED_GAP)
            return
        prop = v.carrying
        if order.kind is ActionKind.PUT and order.place_x is not None:
            dx = order.place_x - v.x
            if abs(dx) <= BASKET_AIM and abs(v.vx) < 40.0:
                self._let_go(tick, v)  # from over their head it drops through the basket's net
                brain.finish(tick, "done", "put in the basket")
            else:
                self._walk(tick, v, order.place_x, abs(dx) > RUN_SPEED_GAP)
            return
        dx = px - v.x
        if abs(dx) <= HAND_OVER_DISTANCE:
            side = 1.0 if dx >= 0 else -1.0
            brain.facing = int(side)
            # Set down in front, towards the traveller, if that spot is free.
            radius = max(prop.kind.w, prop.kind.h) / 2
            self._set_down(prop, (v.x + side * (NPC_W / 2 + radius + 2.0), v.y))
            self._let_go(tick, v, (side * 30.0, 0.0))
            brain.finish(tick, "done", "handed over")
            return
        goal = px - math.copysign(HAND_OVER_DISTANCE * 0.7, dx)
        self._walk(tick, v, goal, abs(dx) > RUN_SPEED_GAP)

    def _set_down(self, prop: Prop, at: tuple[float, float]) -> None:
        """Move a prop in hand to ``at`` unless something solid is there."""
        space = prop.body.space
        radius = max(prop.kind.w, prop.kind.h) / 2
        if space is None or space.point_query_nearest(at, radius, STATIC_QUERY) is None:
            prop.body.position = at

    def _guide(self, tick: int, v: Villager, order: Order, px: float) -> None:
        brain = v.brain
        goal = order.place_x if order.place_x is not None else v.x
        dx = goal - v.x
        behind = (px - v.x) * (1 if dx >= 0 else -1) < 0 and abs(px - v.x) > GUIDE_WAIT
        if abs(dx) <= GUIDE_ARRIVED:
            brain.want(None)
            brain.facing = 1 if px >= v.x else -1
            if abs(px - v.x) <= GUIDE_TRAVELLER_NEAR:
                brain.finish(tick, "done", "arrived")
        elif behind:
            brain.want(None)
            brain.facing = 1 if px >= v.x else -1
        else:
            self._walk(tick, v, goal)

    def _come(self, tick: int, v: Villager, px: float) -> None:
        dx = px - v.x
        if abs(dx) <= COME_NEAR:
            v.brain.facing = 1 if dx >= 0 else -1
            v.brain.finish(tick, "done", "came over")
            return
        self._walk(tick, v, px - math.copysign(COME_NEAR * 0.6, dx), abs(dx) > RUN_SPEED_GAP)
