"""A continued game: the world's lasting state as plain data, and putting it back.

``capture_world`` copies where everything is (props, villagers, the player), what the
errands and their givers know, and how the crate stacks stand, into frozen records that
hold no pymunk object, so another thread may write them. ``restore_world`` puts such a
record into a freshly built world before its first step. Entities are named by stable
keys, not ids, so a save still fits a village with more or fewer generated extras.

Villagers come back at their places in a calm state and let their routine carry on from
there; what they were doing (an action, a flight, lying on the ground) is not kept, and a
prop one of them held is saved set down beside them.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from game.sim.actions import STATIC_QUERY
from game.sim.population import errand_refs
from game.sim.props import Prop
from game.sim.villager import NPC_H, NPC_W, Villager
from game.sim.world import World

logger = logging.getLogger(__name__)

STANDING_SINK = 2.0
"""How far below its resting height on open ground a standing villager's centre may sit
(the solver lets bodies sink into the ground by up to its slop)."""


@dataclass(frozen=True, slots=True)
class BodyState:
    """Where a body is and how it moves: position, angle, velocity and spin."""

    x: float
    y: float
    angle: float = 0.0
    vx: float = 0.0
    vy: float = 0.0
    spin: float = 0.0


@dataclass(frozen=True, slots=True)
class ErrandState:
    """An errand's tally and what its giver knows of it.

    ``open`` and ``offered`` are None when the save did not record them (older saves);
    the fresh world's own values then stand.
    """

    progress: int
    done: bool
    open: bool | None = None
    offered: bool | None = None


@dataclass(frozen=True, slots=True)
class StackState:
    """A crate stack: which props make it (by key), where it stands, whether it stands."""

    standing: bool
    x: float
    top_y: float
    props: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class WorldState:
    """Everything of the world a save keeps. Anything missing stays as the level has it."""

    player: tuple[float, float] | None = None
    errands: Mapping[str, ErrandState] = field(default_factory=dict)
    props: Mapping[str, BodyState] = field(default_factory=dict)
    carried: str = ""
    """The key of the prop in the player's hands, or ""."""
    villagers: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    stacks: Mapping[str, StackState] = field(default_factory=dict)


def villager_keys(villagers: Sequence[Villager]) -> dict[int, str]:
    """A stable key per villager: its cast id, numbered when generated ones repeat it."""
    seen: Counter[str] = Counter()
    keys: dict[int, str] = {}
    for v in villagers:
        seen[v.spec.id] += 1
        keys[v.id] = v.spec.id if seen[v.spec.id] == 1 else f"{v.spec.id}#{seen[v.spec.id]}"
    return keys


def prop_keys(props: Sequence[Prop]) -> dict[int, str]:
    """A stable key per prop: its tag, else its kind numbered in level order ("apple3")."""
    seen: Counter[str] = Counter()
    keys: dict[int, str] = {}
    for p in props:
        if p.tag:
            keys[p.id] = p.tag
        else:
            seen[p.kind.name] += 1
            keys[p.id] = f"{p.kind.name}{seen[p.kind.name]}"
    return keys


def capture_world(world: World) -> WorldState:
    """The world's lasting state now; plain data only, safe to hand to another thread."""
    return WorldRecorder(world).capture()


class WorldRecorder:
    """Captures one world again and again, as the autosave does, at a small cost per tick.

    The keys are worked out once, and a prop asleep where it lay at the last capture is
    not read again: a sleeping body does not move, and moving one wakes it.
    """

    def __init__(self, world: World) -> None:
        self._world = world
        self._props = prop_keys(world.props)
        self._villagers = villager_keys(world.villagers)
        self._givers = {v.id: v for v in world.villagers}
        self._asleep: dict[int, BodyState] = {}

    def capture(self) -> WorldState:
        """The world's lasting state now (on the main thread: it reads pymunk bodies)."""
        world, props = self._world, self._props
        errands = {
            e.spec.id: ErrandState(
                e.progress, e.done, e.open, e.spec.id in self._givers[e.giver_id].brain.offered
            )
            for e in world.errands.errands
        }
        bodies = {props[p.id]: self._body(p) for p in world.props}
        for v in world.villagers:
            if v.carrying is not None:
                bodies[props[v.carrying.id]] = _set_down(world, v, v.carrying)
        stacks = {
            s.id: StackState(
                s.standing, _plain(s.x), _plain(s.top_y), tuple(props[p.id] for p in s.props)
            )
            for s in world.stacks
        }
        carried = world.player.carrying
        player = world.player.body.position
        villagers = self._villagers
        return WorldState(
            player=(_plain(player.x), _plain(player.y)),
            errands=errands,
            props=bodies,
            carried=props[carried.id] if carried is not None else "",
            villagers={villagers[v.id]: (_plain(v.x), _plain(v.y)) for v in world.villagers},
            stacks=stacks,
        )

    def _body(self, prop: Prop) -> BodyState:
        body = prop.body
        x, y = body.position
        # + 0.0 turns -0.0 into 0.0, which SQLite would store as 0 (see _plain).
        x, y = x + 0.0, y + 0.0
        if body.is_sleeping:
            last = self._asleep.get(prop.id)
            if last is not None and last.x == x and last.y == y:
                return last
        vx, vy = body.velocity
        state = BodyState(x, y, body.angle + 0.0, vx + 0.0, vy + 0.0, body.angular_velocity + 0.0)
        if body.is_sleeping:
            self._asleep[prop.id] = state
        return state


def _set_down(world: World, villager: Villager, prop: Prop) -> BodyState:
    """Where a prop a villager holds goes in the save: set down beside them, at rest.

    The villager comes back calm, with empty hands; left over their head, the prop
    would drop on it.
    """
    radius = max(prop.kind.w, prop.kind.h) / 2
    x = villager.x + villager.brain.facing * (NPC_W / 2 + radius + 2.0)
    y = villager.y - NPC_H / 2 + radius + 1.0
    if world.space.point_query_nearest((x, y), radius, STATIC_QUERY) is not None:
        x, y = prop.body.position
    return BodyState(_plain(x), _plain(y))


def _plain(value: float) -> float:
    """``value`` as a float that survives storage unchanged: SQLite reads -0.0 back as 0.0."""
    return float(value) + 0.0


def restore_world(world: World, state: WorldState) -> None:
    """Put ``state`` into a world that has not stepped yet; keys it does not know are skipped.

    Props go back first, so the errand zones find them inside on the first step; the
    stacks and errands then take up the state that goes with where the props are.
    """
    world.skip_welcome()
    keys = prop_keys(world.props)
    props = {keys[p.id]: p for p in world.props}
    for key, body in state.props.items():
        prop = props.get(key)
        if prop is not None:
            _place_prop(world, prop, body)
    carried = props.get(state.carried) if state.carried in state.props else None
    if carried is not None:
        world.player.take(carried)
    for stack in world.stacks:
        saved = state.stacks.get(stack.id)
        column = [props[k] for k in saved.props if k in props] if saved is not None else []
        if saved is not None and column:
            stack.props, stack.x, stack.top_y = column, saved.x, saved.top_y
            stack.standing = saved.standing
    names = villager_keys(world.villagers)
    villagers = {names[v.id]: v for v in world.villagers}
    for key, (x, y) in state.villagers.items():
        villager = villagers.get(key)
        if villager is not None:
            _place_villager(world, villager, x, y)
    _restore_errands(world, state.errands, props_known=bool(state.props))
    if state.player is not None:
        world.place_player(*state.player)


def _place_prop(world: World, prop: Prop, state: BodyState) -> None:
    """Put the prop back as it was, kept within the level's box (walls to roof height)."""
    level = world.level
    bottom = min(y for _, y in level.ground)
    x = min(max(state.x, 0.0), level.width)
    y = min(max(state.y, bottom), level.height)
    body = prop.body
    body.position = (x, y)
    body.angle = state.angle
    body.velocity = (state.vx, state.vy)
    body.angular_velocity = state.spin
    world.space.reindex_shapes_for_body(body)


def _place_villager(world: World, villager: Villager, x: float, y: float) -> None:
    """Stand the villager up at their place, at rest; their brain starts calm from there."""
    level = world.level
    x = min(max(x, 0.0), level.width)
    # Not below standing height: one saved lying down gets up where they lay.
    y = min(max(y, level.ground_y(x) + NPC_H / 2 - STANDING_SINK), level.height)
    body = villager.body
    body.position = (x, y)
    body.angle = 0.0
    body.velocity = (0.0, 0.0)
    body.angular_velocity = 0.0
    world.space.reindex_shapes_for_body(body)
    villager.sense()
    villager.brain.observe_position(x)


def _restore_errands(world: World, saved: Mapping[str, ErrandState], *, props_known: bool) -> None:
    """Tallies, whether each errand is open, and what its giver still means to offer.

    A tally not yet done is taken only when the props came back too: without them the
    next recount would take it away again.
    """
    givers = {v.id: v for v in world.villagers}
    tagged = {p.tag: p for p in world.props if p.tag}
    for errand in world.errands.errands:
        errand_id = errand.spec.id
        state = saved.get(errand_id)
        if state is None:
            continue
        if state.open is not None:
            errand.open = state.open
        if state.done:
            errand.progress, errand.done = errand.spec.goal, True
        elif props_known:
            errand.progress = min(state.progress, errand.spec.goal)
        brain = givers[errand.giver_id].brain
        if errand.done or not errand.open or state.offered:
            brain.withdraw_errand(errand_id)
            if state.offered and errand_id not in brain.offered:
                brain.offered.append(errand_id)
        else:
            brain.offer_errand(errand_id, errand_refs(errand, tagged, world.stacks))
