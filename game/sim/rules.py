"""The rules that turn physics into game events after each step.

Collision callbacks only write facts into a ``ContactLog``; these rules read them, along
with props in flight, stacks and errand zones, and decide what happened: a hit, a bump,
a near miss, a toppled stack, errand progress. They run outside ``Space.step``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import pymunk

from game.sim.airborne import NEAR_MISS_SPEED, FlightTracker
from game.sim.contacts import ContactLog
from game.sim.errands import Errand, ErrandBoard
from game.sim.events import (
    ErrandCompleted,
    GameEvent,
    PlayerBumpedNpc,
    PropHitNpc,
    PropLandedNear,
)
from game.sim.perception import XIndex
from game.sim.player import Player
from game.sim.props import Prop
from game.sim.senses import Stimulus, StimulusKind
from game.sim.stack import CrateStack
from game.sim.villager import Villager

logger = logging.getLogger(__name__)

HIT_IMPULSE = 120.0
HIT_SPEED = 200.0
"""A touch is a hit only with this much impulse and closing speed (not a resting lean)."""
HIT_REPEAT_TICKS = 30
BUMP_IMPULSE = 150.0
BUMP_REPEAT_TICKS = 60
NEAR_MISS_RADIUS = 120.0
TOPPLE_HEARING = 1400.0
"""Four crates coming down are heard across the market, about a screen and a bit."""
TOPPLE_BLAME_RADIUS = 250.0


class Rules:
    """Per-world rule state: who was hit or bumped lately, what flies, what sits in zones."""

    def __init__(
        self,
        player: Player,
        villagers: Sequence[Villager],
        props: Sequence[Prop],
        stacks: Sequence[CrateStack],
        errands: ErrandBoard,
        zone_by_shape: dict[pymunk.Shape, str],
        errand_refs: Callable[[Errand], tuple[int, ...]],
        position: Callable[[int], tuple[float, float] | None],
    ) -> None:
        self._player = player
        self._villagers = list(villagers)
        self._props = list(props)
        self._stacks = list(stacks)
        self._errands = errands
        self._zone_by_shape = zone_by_shape
        self._errand_refs = errand_refs
        self._position = position
        self._villager_by_id = {v.id: v for v in self._villagers}
        self._villager_by_shape: dict[pymunk.Shape, Villager] = {
            v.shape: v for v in self._villagers
        }
        self._prop_by_shape: dict[pymunk.Shape, Prop] = {p.shape: p for p in self._props}
        self._tagged = {p.tag: p for p in self._props if p.tag}
        self._inside: dict[str, dict[int, Prop]] = {z: {} for z in zone_by_shape.values()}
        self.flights = FlightTracker()
        self._last_bump: dict[int, int] = {}
        self._last_hit: dict[tuple[int, int], int] = {}
        self._awake = XIndex()

    def resolve_contacts(
        self, tick: int, log: ContactLog, events: list[GameEvent], chatting: bool = False
    ) -> None:
        """Turn this step's recorded touches and zone crossings into events.

        While the player is ``chatting``, a bump is still reported but not taken up by
        the villager: nobody stops to complain about a nudge in a conversation.
        """
        px = self._player.body.position.x
        for touch in log.prop_touches:
            prop = self._prop_by_shape.get(touch.shape)
            villager = self._villager_by_shape.get(touch.npc_shape)
            if prop is None or villager is None or prop.held:
                continue
            if touch.impulse < HIT_IMPULSE or touch.speed < HIT_SPEED:
                continue
            key = (prop.id, villager.id)
            if tick - self._last_hit.get(key, -HIT_REPEAT_TICKS) < HIT_REPEAT_TICKS:
                continue
            self._last_hit[key] = tick
            prop.hit_npc = True
            events.append(
                PropHitNpc(
                    tick, prop.id, villager.id, touch.impulse, prop.thrown_by_player, prop.kind.name
                )
            )
            source = px if prop.thrown_by_player else prop.body.position.x
            villager.brain.notify(
                Stimulus(StimulusKind.HIT, (prop.id,), touch.impulse, prop.thrown_by_player, source)
            )
        for touch in log.player_touches:
            villager = self._villager_by_shape.get(touch.npc_shape)
            if villager is None:
                continue
            self._player.touched_npc(tick)
            if touch.impulse < BUMP_IMPULSE:
                continue
            if tick - self._last_bump.get(villager.id, -BUMP_REPEAT_TICKS) < BUMP_REPEAT_TICKS:
                continue
            self._last_bump[villager.id] = tick
            events.append(PlayerBumpedNpc(tick, villager.id, touch.impulse))
            if not chatting:
                villager.brain.notify(Stimulus(StimulusKind.BUMPED, (), touch.impulse, True, px))
        for crossing in log.crossings:
            zone_id = self._zone_by_shape.get(crossing.zone_shape)
            prop = self._prop_by_shape.get(crossing.prop_shape)
            if zone_id is None or prop is None:
                continue
            if crossing.entered:
                self._inside[zone_id][prop.id] = prop
            else:
                self._inside[zone_id].pop(prop.id, None)

    def resolve_flights(self, tick: int, events: list[GameEvent]) -> None:
        """Report props that came to rest near a villager without hitting anyone."""
        self.flights.sample(self._props, tick)
        if not len(self.flights):
            return
        landed = self.flights.landed(tick)
        if not landed:
            return
        self._awake.rebuild((v.x, v.id, v.y) for v in self._villagers if v.brain.conscious)
        for prop in landed:
            if not prop.hit_npc and prop.peak_speed >= NEAR_MISS_SPEED:
                x, y = prop.body.position
                near = self._awake.nearest(x, y, NEAR_MISS_RADIUS)
                if near is not None:
                    npc_id, distance = near
                    events.append(PropLandedNear(tick, prop.id, npc_id, distance))
                    self._villager_by_id[npc_id].brain.notify(
                        Stimulus(StimulusKind.NEAR_MISS, (prop.id,), 0.0, prop.thrown_by_player, x)
                    )
            prop.thrown_by_player = False
            prop.hit_npc = False

    def check_stacks(self, tick: int, events: list[GameEvent]) -> None:
        """Report stacks that fell, tell the villagers nearby and open the restack errand."""
        px = self._player.body.position.x
        for stack in self._stacks:
            toppled = stack.check(tick)
            if toppled is None:
                continue
            events.append(toppled)
            blame = abs(px - stack.x) <= TOPPLE_BLAME_RADIUS
            for villager in self._villagers:
                if abs(villager.x - stack.x) <= TOPPLE_HEARING:
                    villager.brain.notify(
                        Stimulus(StimulusKind.TOPPLED, toppled.prop_ids, 0.0, blame, stack.x)
                    )
            for errand in self._errands.errands:
                if errand.spec.kind == "restack" and not errand.open and not errand.done:
                    errand.open = True
                    giver = self._villager_by_id[errand.giver_id]
                    giver.brain.offer_errand(errand.spec.id, toppled.prop_ids)

    def building(self) -> tuple[Prop, ...]:
        """The crates that count towards the stack being rebuilt now, from the ground up."""
        return self._errands.building(lambda zone_id: list(self._inside.get(zone_id, {}).values()))

    def check_errands(self, tick: int, events: list[GameEvent]) -> None:
        """Recount errands; thank the player and rebuild the stack when one completes."""
        new = self._errands.evaluate(
            tick,
            lambda zone_id: list(self._inside.get(zone_id, {}).values()),
            self._tagged.get,
            self._position,
        )
        for event in new:
            events.append(event)
            if not isinstance(event, ErrandCompleted):
                continue
            errand = self._errands.get(event.errand_id)
            if errand is None:
                continue
            giver = self._villager_by_id[errand.giver_id]
            giver.brain.withdraw_errand(errand.spec.id)
            giver.brain.notify(
                Stimulus(StimulusKind.ERRAND_DONE, self._errand_refs(errand), 0.0, True)
            )
            if errand.spec.kind == "restack":
                crates = [
                    p for p in self._inside[errand.spec.zone].values() if p.kind.name == "crate"
                ]
                for stack in self._stacks:
                    stack.rebuild(crates, stack.x)
