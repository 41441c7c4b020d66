"""A villager's body: a box that walks by forces, stands upright, and tips over when
knocked down.

The brain (``npc.NpcBrain``) decides; this module only turns its wishes into forces.
"""

from __future__ import annotations

import logging
import math

import pymunk

from game.sim.cast import NpcSpec
from game.sim.categories import NPC_ASIDE_FILTER, NPC_FILTER, CollisionType
from game.sim.npc import NpcBrain
from game.sim.npc_states import NpcState
from game.sim.props import Prop

logger = logging.getLogger(__name__)

NPC_W = 28.0
NPC_H = 58.0
NPC_MASS = 10.0
CORNER = 6.0
STAND_FRICTION = 0.6
"""Feet that grip: a standing villager is not slid about by a nudge."""
WALK_FRICTION = 0.0
"""While walking on an errand for the traveller the drive alone sets the pace: gripping
feet hold a villager to the spot (the walking force is smaller than standing friction),
and they only get along by hopping. Routine walks keep the gripping feet for now; the
village's errands are balanced around how those villagers move."""

UPRIGHT_RATE = 10.0
"""How fast (per second, as a fraction of the lean) a standing villager straightens up."""
UPRIGHT_MAX_SPIN = 4.0
FALL_SPIN = 6.0
"""Radians per second a knocked-down villager topples at, away from the blow, ..."""
FALLEN_TILT = 1.4
"""... until they lean this far (radians), or for at most ``FALL_TICKS``: a crate still
on their head or a wall beside them does not keep them standing."""
FALL_TICKS = 30
WALK_GAIN = 8.0
WALK_MAX_ACCEL = 1300.0
STUCK_TICKS = 45
RIGHTING_TIMEOUT = 150
ASIDE_TICKS = 60
"""How long a villager stays stepped back (in depth) after making way for the player."""
SLIDE_SPEED = 90.0
"""How fast a villager who landed on someone's head slides off sideways."""
ON_TOP_SLACK = 8.0
"""Feet this close to the top of someone beneath (or a little below it, on their rounded
shoulders) are standing on them."""


def normalize_angle(angle: float) -> float:
    """``angle`` wrapped into [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


class Villager:
    """A villager in the world: identity, body and brain.

    ``x, y, vx, vy, angle`` are read once per tick after the physics step and reused by
    perception, motor control and queries, so the per-tick cost stays flat.
    """

    def __init__(
        self, npc_id: int, spec: NpcSpec, persona_id: str, brain: NpcBrain, x: float, y: float
    ) -> None:
        self.id = npc_id
        self.spec = spec
        self.persona_id = persona_id
        self.brain = brain
        self._moment = pymunk.moment_for_box(NPC_MASS, (NPC_W, NPC_H))
        # On their feet a villager cannot be turned by what touches them (a slope, a
        # crowd, a crate); the moment is given back only while they are knocked down.
        self.body = pymunk.Body(NPC_MASS, math.inf)
        self.body.position = (x, y)
        # Rounded corners, as the player's: perched on a ball or a crate's edge by one
        # corner, a villager who cannot tip slides off instead of standing on air.
        self.shape = pymunk.Poly.create_box(
            self.body, (NPC_W - 2 * CORNER, NPC_H - 2 * CORNER), radius=CORNER
        )
        self.shape.friction = STAND_FRICTION
        self.shape.elasticity = 0.0
        self.shape.filter = NPC_FILTER
        self.shape.collision_type = CollisionType.NPC
        self.x, self.y, self.vx, self.vy, self.angle = x, y, 0.0, 0.0, 0.0
        self.index = 0
        self.sees_player = False
        self.neighbour: int | None = None
        self._stuck = 0
        self.aside_until = -1
        self.carrying: Prop | None = None
        brain.observe_position(x)

    @property
    def aside(self) -> bool:
        """Whether the villager has stepped back to let the player pass."""
        return self.shape.filter == NPC_ASIDE_FILTER

    def step_aside(self, tick: int) -> None:
        """Step back (in depth) for a moment so the player can walk past."""
        self.aside_until = tick + ASIDE_TICKS
        if self.shape.filter != NPC_ASIDE_FILTER:
            self.shape.filter = NPC_ASIDE_FILTER

    def step_back_in(self, tick: int, clear: bool) -> None:
        """Step back into the street once the time is up and the player is clear."""
        if self.shape.filter == NPC_ASIDE_FILTER and tick >= self.aside_until and clear:
            self.shape.filter = NPC_FILTER

    def rests_on(self, x: float, top: float, half_width: float) -> bool:
        """Whether the villager stands on a body centred at ``x`` whose top is at ``top``."""
        feet = self.y - NPC_H / 2
        return abs(self.x - x) < half_width + NPC_W / 2 and -ON_TOP_SLACK < feet - top < 4.0

    def slide_off(self, x: float, tick: int) -> None:
        """Get down from someone's head: step back (in depth) and slide away from ``x``."""
        self.step_aside(tick)
        vx, vy = self.body.velocity
        side = 1.0 if self.x >= x else -1.0
        self.body.velocity = (side * max(SLIDE_SPEED, side * vx), min(vy, 0.0))

    def sense(self) -> None:
        """Read the body's state once for this tick."""
        body = self.body
        self.x, self.y = body.position
        self.vx, self.vy = body.velocity
        self.angle = normalize_angle(body.angle)

    @property
    def standing(self) -> bool:
        """Whether the body is held upright (False while knocked down or getting up)."""
        return self.body.moment == math.inf

    def drive(self, tick: int) -> None:
        """Apply this tick's forces and spin for the brain's current wish."""
        body = self.body
        brain = self.brain
        if brain.state is NpcState.KNOCKED_DOWN:
            self._fall(tick)
            return
        if brain.state is NpcState.RECOVER:
            self._right_itself(tick)
            return
        if not self.standing:
            body.moment = math.inf
        # Collisions cannot turn a body of infinite moment; only this spin does.
        spin = -self.angle * UPRIGHT_RATE
        body.angular_velocity = max(-UPRIGHT_MAX_SPIN, min(UPRIGHT_MAX_SPIN, spin))
        target = 0.0
        if brain.goal_x is not None:
            dx = brain.goal_x - self.x
            # Ease in over the last few units instead of overshooting the spot.
            target = math.copysign(min(brain.speed, abs(dx) * 4.0), dx)
        walking = abs(target) > 1.0 and brain.acting
        friction = WALK_FRICTION if walking else STAND_FRICTION
        if self.shape.friction != friction:  # set only when it changes
            self.shape.friction = friction
        limit = NPC_MASS * WALK_MAX_ACCEL
        force = max(-limit, min(limit, NPC_MASS * (target - self.vx) * WALK_GAIN))
        body.apply_force_at_world_point((force, 0.0), (self.x, self.y))
        self._unstick(target)

    def _fall(self, tick: int) -> None:
        """Give the body back its moment and tip it over, away from what knocked it down."""
        body = self.body
        if self.standing:
            body.moment = self._moment
            body.activate()
        side = self.brain.fall_side
        if side and abs(self.angle) < FALLEN_TILT and tick - self.brain.entered_tick < FALL_TICKS:
            spin = -side * FALL_SPIN
            if body.angular_velocity * side > spin * side:
                body.angular_velocity = spin

    def _unstick(self, target: float) -> None:
        """Hop over a small obstacle after pushing against it for a while."""
        if abs(target) > 20.0 and abs(self.vx) < 5.0 and abs(self.vy) < 5.0:
            self._stuck += 1
            if self._stuck >= STUCK_TICKS:
                self._stuck = 0
                impulse = (math.copysign(80.0, target) * NPC_MASS, 380.0 * NPC_MASS)
                self.body.apply_impulse_at_world_point(impulse, (self.x, self.y))
        else:
            self._stuck = 0

    def _right_itself(self, tick: int) -> None:
        body = self.body
        if tick - self.brain.entered_tick > RIGHTING_TIMEOUT:
            # Wedged somewhere odd: stand up on the spot rather than lie there forever.
            body.angle = 0.0
            body.angular_velocity = 0.0
            body.position = (self.x, self.y + NPC_H / 2)
            body.velocity = (0.0, 0.0)
            return
        body.angular_velocity = max(-4.0, min(4.0, -self.angle * 5.0))
        body.apply_force_at_world_point((0.0, NPC_MASS * 900.0), (self.x, self.y))
