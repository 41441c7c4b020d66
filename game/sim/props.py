"""Dynamic props: the kinds the level can place, and the live record of each one."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import pymunk

from game.sim.categories import PROP_FILTER, CollisionType

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PropKind:
    """Size, mass and surface of one kind of prop. ``w``/``h`` are the diameter for circles."""

    name: str
    shape: Literal["box", "circle"]
    w: float
    h: float
    mass: float
    friction: float
    elasticity: float
    material: str


PROP_KINDS: dict[str, PropKind] = {
    "crate": PropKind("crate", "box", 40.0, 40.0, 3.0, 0.7, 0.05, "wood"),
    "barrel": PropKind("barrel", "box", 34.0, 46.0, 4.0, 0.6, 0.1, "oak"),
    "ball": PropKind("ball", "circle", 28.0, 28.0, 0.5, 0.6, 0.7, "leather"),
    "apple": PropKind("apple", "circle", 14.0, 14.0, 0.2, 0.8, 0.3, "apple"),
}


@dataclass(slots=True)
class Prop:
    """A live prop: its body, shape and what the rules remember about it.

    ``airborne_since`` is the tick it was thrown, dropped or knocked flying (or -1);
    ``hit_npc`` says whether it struck a villager during that flight, which decides
    between a hit and a near miss once it lands.
    """

    id: int
    kind: PropKind
    body: pymunk.Body
    shape: pymunk.Shape
    tag: str = ""
    held: bool = False
    thrown_by_player: bool = False
    airborne_since: int = -1
    hit_npc: bool = False
    rest_ticks: int = 0
    release_tick: int = -1
    peak_speed: float = 0.0


def make_prop(prop_id: int, kind: PropKind, x: float, y: float, tag: str = "") -> Prop:
    """Create the body and shape of a prop at (x, y); the caller adds them to the space."""
    if kind.shape == "circle":
        radius = kind.w / 2
        body = pymunk.Body(kind.mass, pymunk.moment_for_circle(kind.mass, 0, radius))
        shape: pymunk.Shape = pymunk.Circle(body, radius)
    else:
        body = pymunk.Body(kind.mass, pymunk.moment_for_box(kind.mass, (kind.w, kind.h)))
        shape = pymunk.Poly.create_box(body, (kind.w - 1.0, kind.h - 1.0), radius=0.5)
    body.position = (x, y)
    shape.friction = kind.friction
    shape.elasticity = kind.elasticity
    shape.filter = PROP_FILTER
    shape.collision_type = CollisionType.PROP
    return Prop(prop_id, kind, body, shape, tag)
