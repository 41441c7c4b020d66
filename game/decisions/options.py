"""What a villager could do right now, read from the live world.

Only what is possible goes into a decision: the props of each fetchable kind that lie
within reach (not carried, not in the basket or the stack, not up on a roof), the places
of the level, and the other villagers who are up and about.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from game.decisions.policy import (
    BASKET_PLACE,
    FETCHABLE,
    Option,
    absent_options,
    options_for,
    place_name,
)
from game.sim.actions import REACH_ABOVE
from game.sim.level import Level
from game.sim.snapshot import PropView
from game.sim.villager import NPC_H
from game.sim.world import World

FETCH_RADIUS = 600.0
"""How far a villager will walk for a prop."""
BASKET_ZONE = "basket"


@dataclass(frozen=True, slots=True)
class Place:
    """A place a villager can show the way to."""

    name: str
    x: float


@dataclass(frozen=True, slots=True)
class Choices:
    """The options open to one villager, with what each one's target is in the world.

    ``props`` maps a prop kind to the id of the prop the villager would fetch;
    ``villagers`` maps a cast id to the villager's entity id. ``absent`` are the asks the
    villager knows of but cannot carry out now (a prop out of reach, a villager who is
    down): the model scores them too, and choosing one comes to carrying on.
    """

    options: tuple[Option, ...]
    props: Mapping[str, int]
    villagers: Mapping[str, int]
    absent: tuple[Option, ...] = ()

    @property
    def scored(self) -> tuple[Option, ...]:
        """Everything the model chooses among: the options, then the absent asks."""
        return (*self.options, *self.absent)


class OptionFinder:
    """Builds each villager's options from the world; places and names are read once."""

    def __init__(self, world: World, level: Level) -> None:
        self._world = world
        self._level = level
        self.places = tuple(
            Place(place_name(d.label), d.x + d.w / 2) for d in level.decor if d.label
        )
        self._place_x = {p.name: p.x for p in self.places}
        zones = {z.id: z for z in level.zones}
        basket = zones.get(BASKET_ZONE)
        if basket is not None:
            self._place_x[BASKET_PLACE] = basket.x + basket.w / 2
        self._zones = tuple(zones.values())
        self.cast_of: dict[int, str] = {}
        first: dict[str, int] = {}
        self.labels = {spec.id: f"{spec.name} the {spec.role}" for spec in world.cast.npcs}
        for npc_id in world.npc_ids():
            spec = world.npc_spec(npc_id)
            if spec is not None:
                self.cast_of[npc_id] = spec.id
                first.setdefault(spec.id, npc_id)
                # A crowd's extra villagers ("baker#2") are not in the cast file.
                self.labels.setdefault(spec.id, f"{spec.name} the {spec.role}")
        self._entity_of_cast = first

    def place_x(self, name: str) -> float | None:
        """Where a place is along the street."""
        return self._place_x.get(name)

    def choices(self, npc_id: int) -> Choices:
        """What the villager could do now."""
        props: dict[str, int] = {}
        for prop in self._world.nearby_props(npc_id, FETCH_RADIUS):
            if prop.kind in FETCHABLE and prop.kind not in props and self.fetchable(prop):
                props[prop.kind] = prop.id
        own = self.cast_of.get(npc_id, "")
        villagers: dict[str, int] = {}
        for cast_id, entity in self._entity_of_cast.items():
            status = self._world.npc(entity)
            if cast_id != own and status is not None and status.can_talk:
                villagers[cast_id] = entity
        places = tuple(p.name for p in self.places)
        options = options_for(tuple(props), places, tuple((c, self.labels[c]) for c in villagers))
        others = tuple((c, label) for c, label in self.labels.items() if c != own)
        return Choices(options, props, villagers, absent_options(options, places, others))

    def fetchable(self, prop: PropView) -> bool:
        """Whether a villager may go and take ``prop``: not in anyone's hands, within
        reach of the ground, and not in an errand's zone (the basket, the crate stack)."""
        if prop.held:
            return False
        if prop.y - self._level.ground_y(prop.x) > NPC_H / 2 + REACH_ABOVE:
            return False  # up on a roof
        return not any(
            z.x <= prop.x <= z.x + z.w and z.y <= prop.y <= z.y + z.h for z in self._zones
        )
