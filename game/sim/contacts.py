"""Collision callbacks that write down facts, and one that sets a contact's friction.

pymunk calls these inside ``Space.step``. They never touch the space or game state; the
world reads ``ContactLog`` after the step and turns the facts into game events. The one
exception changes only the contact it is handed (:func:`_no_drag_underfoot`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pymunk

from game.sim.categories import CollisionType

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Touch:
    """A first contact between a prop or the player (``shape``) and a villager.

    ``speed`` is the relative speed when contact began (before the solver acted);
    ``impulse`` is the solver's total impulse on the first contact step.
    """

    shape: pymunk.Shape
    npc_shape: pymunk.Shape
    speed: float
    impulse: float


@dataclass(frozen=True, slots=True)
class ZoneCrossing:
    """A prop entered or left a sensor zone."""

    zone_shape: pymunk.Shape
    prop_shape: pymunk.Shape
    entered: bool


@dataclass(slots=True)
class ContactLog:
    """Facts recorded during one ``Space.step``, cleared by the world before the next."""

    prop_touches: list[Touch] = field(default_factory=list)
    player_touches: list[Touch] = field(default_factory=list)
    crossings: list[ZoneCrossing] = field(default_factory=list)
    _speeds: dict[tuple[int, int], float] = field(default_factory=dict)

    def clear(self) -> None:
        """Forget the previous step's facts."""
        self.prop_touches.clear()
        self.player_touches.clear()
        self.crossings.clear()
        self._speeds.clear()


def install(space: pymunk.Space, log: ContactLog) -> None:
    """Register the callbacks that feed ``log``."""
    space.on_collision(
        CollisionType.PROP, CollisionType.NPC, begin=_begin, post_solve=_post_solve, data=log
    )
    space.on_collision(
        CollisionType.PLAYER, CollisionType.NPC, begin=_begin, post_solve=_post_solve, data=log
    )
    space.on_collision(
        CollisionType.ZONE, CollisionType.PROP, begin=_enter, separate=_leave, data=log
    )
    space.on_collision(CollisionType.PLAYER, CollisionType.PROP, pre_solve=_no_drag_underfoot)


def _ordered(arbiter: pymunk.Arbiter) -> tuple[pymunk.Shape, pymunk.Shape]:
    """(other, npc) whatever order pymunk hands the shapes in."""
    a, b = arbiter.shapes
    if a.collision_type == CollisionType.NPC:
        return b, a
    return a, b


def _begin(arbiter: pymunk.Arbiter, _space: pymunk.Space, data: Any) -> None:
    log: ContactLog = data
    a, b = arbiter.bodies
    other, npc = _ordered(arbiter)
    if other.body is not a:
        a, b = b, a
    log._speeds[(id(other), id(npc))] = (a.velocity - b.velocity).length


def _post_solve(arbiter: pymunk.Arbiter, _space: pymunk.Space, data: Any) -> None:
    if not arbiter.is_first_contact:
        return
    log: ContactLog = data
    other, npc = _ordered(arbiter)
    speed = log._speeds.get((id(other), id(npc)), 0.0)
    touch = Touch(other, npc, speed, arbiter.total_impulse.length)
    if other.collision_type == CollisionType.PLAYER:
        log.player_touches.append(touch)
    else:
        log.prop_touches.append(touch)


def _crossing(arbiter: pymunk.Arbiter, data: Any, entered: bool) -> None:
    log: ContactLog = data
    zone, prop = arbiter.shapes
    if zone.collision_type != CollisionType.ZONE:
        zone, prop = prop, zone
    log.crossings.append(ZoneCrossing(zone, prop, entered=entered))


def _enter(arbiter: pymunk.Arbiter, _space: pymunk.Space, data: Any) -> None:
    _crossing(arbiter, data, entered=True)


def _leave(arbiter: pymunk.Arbiter, _space: pymunk.Space, data: Any) -> None:
    _crossing(arbiter, data, entered=False)


#: A contact whose normal is this close to vertical has one shape standing on the other.
_UNDERFOOT = 0.7


def _no_drag_underfoot(arbiter: pymunk.Arbiter, _space: pymunk.Space, _data: Any) -> None:
    """A prop the player stands on slides freely under their feet.

    The player walks by force, not by friction, so nothing is lost; and walking across a
    column of crates no longer drags its top crate along. Against the side of a prop,
    friction stays as the shapes set it.
    """
    if abs(arbiter.normal.y) >= _UNDERFOOT:
        arbiter.friction = 0.0
