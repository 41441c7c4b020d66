"""Filling the village at start: the cast's villagers and generated ones, the level's props
and crate stacks and generated props (each taking the next entity id in that order), and
the level's errands posted to the villagers who give them."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import pymunk

from game.sim import builder, extras
from game.sim.cast import Cast, NpcSpec
from game.sim.errands import Errand
from game.sim.level import Level, PropSpec
from game.sim.npc import NpcBrain
from game.sim.props import PROP_KINDS, Prop, make_prop
from game.sim.routine import Routine
from game.sim.stack import CrateStack
from game.sim.tuning import Tuning
from game.sim.villager import NPC_H, Villager

logger = logging.getLogger(__name__)

SPAWN_JITTER = 0.4


@dataclass(frozen=True, slots=True)
class Population:
    """Everything that moves, besides the player, in entity id order."""

    villagers: list[Villager]
    props: list[Prop]
    stacks: list[CrateStack]


def populate(
    space: pymunk.Space,
    level: Level,
    cast: Cast,
    rng: random.Random,
    ids: Iterator[int],
    *,
    player_id: int,
    tuning: Tuning,
    extra_npcs: int = 0,
    extra_props: int = 0,
) -> Population:
    """Add the villagers, then the props and stacks, to ``space``.

    ``rng`` is the world's: the jitter, the schedules and the generated extras all come
    from it, in a fixed order, so the same seed places everything the same way.
    """
    filler = _Filler(space, level, rng, ids)
    villagers: list[Villager] = []
    for spec in cast.npcs:
        villagers.append(filler.villager(spec, spec.id, "routine", player_id, tuning))
    for persona_id, spec in extras.extra_villagers(cast, extra_npcs, rng, level):
        villagers.append(filler.villager(spec, persona_id, "wander", player_id, tuning))
    for index, villager in enumerate(villagers):
        villager.index = index
    for placed in level.props:
        jitter = rng.uniform(-SPAWN_JITTER, SPAWN_JITTER)
        filler.prop(placed.kind, placed.x + jitter, placed.y, placed.tag)
    stacks: list[CrateStack] = []
    for stack in level.stacks:
        kind = PROP_KINDS[stack.kind]
        base = level.ground_y(stack.x) + kind.h / 2 + 0.5
        column = [
            filler.prop(stack.kind, stack.x, base + i * (kind.h + 0.5)) for i in range(stack.count)
        ]
        stacks.append(CrateStack(stack.id, column, stack.x))
    for extra in extras.extra_props(extra_props, rng, level):
        filler.generated_prop(extra)
    return Population(villagers, filler.props, stacks)


def post_errands(
    level: Level, villagers: Sequence[Villager], refs: Callable[[Errand], tuple[int, ...]]
) -> list[Errand]:
    """The level's errands, each offered by its giver once it is open (the restack opens
    only when the stack falls); an errand whose giver is not in the cast is skipped."""
    errands: list[Errand] = []
    for spec in level.errands:
        giver = next((v for v in villagers if v.spec.id == spec.giver), None)
        if giver is None:
            logger.warning("errand %s: no villager %r in the cast; skipped", spec.id, spec.giver)
            continue
        errand = Errand(spec, giver.id, open=spec.kind != "restack")
        errands.append(errand)
        if errand.open:
            giver.brain.offer_errand(spec.id, refs(errand))
    return errands


def errand_refs(
    errand: Errand, tagged: Mapping[str, Prop], stacks: Sequence[CrateStack]
) -> tuple[int, ...]:
    """The props a line about the errand may mention: the tagged prop to fetch, or the
    crates of the stack to rebuild."""
    spec = errand.spec
    if spec.kind == "fetch" and spec.prop_tag in tagged:
        return (tagged[spec.prop_tag].id,)
    if spec.kind == "restack":
        return tuple(p.id for s in stacks for p in s.props)
    return ()


class _Filler:
    """Makes bodies with the next ids and adds them to the space."""

    def __init__(
        self, space: pymunk.Space, level: Level, rng: random.Random, ids: Iterator[int]
    ) -> None:
        self._space = space
        self._level = level
        self._rng = rng
        self._ids = ids
        self.props: list[Prop] = []

    def villager(
        self, spec: NpcSpec, persona_id: str, mode: str, player_id: int, tuning: Tuning
    ) -> Villager:
        npc_id = next(self._ids)
        routine = Routine(
            home_x=spec.home_x,
            work_x=spec.work_x,
            mode=mode,
            phase_offset=self._rng.randrange(900),
            max_x=extras.street_end(self._level),
        )
        brain = NpcBrain(
            npc_id, player_id, routine, random.Random(self._rng.getrandbits(64)), tuning
        )
        x = spec.work_x if mode == "routine" else spec.home_x
        y = self._level.ground_y(x) + NPC_H / 2 + 0.5
        villager = Villager(npc_id, spec, persona_id, brain, x, y)
        self._space.add(villager.body, villager.shape)
        return villager

    def prop(self, kind: str, x: float, y: float, tag: str = "") -> Prop:
        prop = make_prop(next(self._ids), PROP_KINDS[kind], x, y, tag)
        self.props.append(prop)
        self._space.add(prop.body, prop.shape)
        return prop

    def generated_prop(self, spec: PropSpec) -> None:
        kind = PROP_KINDS[spec.kind]
        y = self._level.ground_y(spec.x) + kind.h / 2 + 1.0
        y = builder.free_height(self._space, spec.x, y, max(kind.w, kind.h) * 1.42)
        self.prop(spec.kind, spec.x, y)
