"""A scripted player for headless runs, demos and tests.

Routes:
- ``"village"``: a tour that drops apples in the baker's basket, meets every villager
  (waiting by each until they greet), throws props at and near villagers and knocks
  the crate stack over, then keeps wandering and throwing at random.
- ``"ambush"``: walks at villagers and turns away just outside talk range (so predicted
  greetings never happen), throws props at them and walks off.

The bot reads only snapshots (plus the static level view, for zone positions; the
default level's when none is given) and its own seeded random generator, so a run is
reproducible.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

from game.assets import AssetError
from game.input.errand_bot import ErrandRunner
from game.input.village_map import VillageMap
from game.sim.level import load_level
from game.sim.player import PlayerIntent
from game.sim.snapshot import ActorView, LevelView, PropView, WorldSnapshot
from game.sim.world import TALK_RADIUS

logger = logging.getLogger(__name__)

ROUTES = ("village", "ambush", "crowd", "errands")
"""``"crowd"`` runs the village tour; the crowd itself comes from the world's extras.
``"errands"`` does the village's three errands (see ``errand_bot``)."""
DEFAULT_TALK_RADIUS = TALK_RADIUS
THROW_RANGE = 420.0
TASK_TIMEOUT = 420
GREET_WAIT = 90
GREET_MEMORY = 900
STUCK_TICKS = 8
IDLE = PlayerIntent()


@dataclass(slots=True)
class _Task:
    """One step of a plan: ``kind`` plus a target id, x or prop kind."""

    kind: str
    target: int = 0
    x: float = 0.0
    prop_kind: str = ""
    started: int = -1
    phase: int = 0


class Bot:
    """Turns snapshots into player intents along a scripted route."""

    def __init__(
        self,
        route: str,
        seed: int,
        level: LevelView | None = None,
        talk_radius: float = DEFAULT_TALK_RADIUS,
    ) -> None:
        if route not in ROUTES:
            raise ValueError(f"unknown bot route {route!r} (known: {', '.join(ROUTES)})")
        self.route = route
        self.talk_radius = talk_radius
        self._rng = random.Random(seed)
        if level is None:
            level = _default_level_view()
        self._zones = {z.id: z for z in level.zones} if level is not None else {}
        village = VillageMap.of(level) if level is not None else None
        self.errands = ErrandRunner(village) if route == "errands" and village else None
        self._plan: list[_Task] = []
        self._planned = False
        self._greeted: dict[int, int] = {}
        self._grab_last = False
        self._throw_last = False
        self._last_x = 0.0
        self._last_y = 0.0
        self._stuck = 0
        self._tries = 0
        self._backoff = 0
        self._backoff_dir = 0

    # -- public ---------------------------------------------------------------------

    def intent(self, snapshot: WorldSnapshot) -> PlayerIntent:
        """The intent for the tick after ``snapshot``."""
        me = _player(snapshot)
        for actor in snapshot.actors:
            if actor.state in ("greet", "talk"):
                self._greeted[actor.id] = snapshot.tick
        if self.errands is not None:
            intent = self.errands.intent(snapshot)
        else:
            intent = self._tour(snapshot, me)
        intent = self._unstick(intent, me)
        # grab and throw act on their rising edge: never press them two ticks running.
        if intent.grab and self._grab_last:
            intent = PlayerIntent(intent.move, intent.jump, False, intent.throw)
        if intent.throw and self._throw_last:
            intent = PlayerIntent(intent.move, intent.jump, intent.grab, False)
        self._grab_last, self._throw_last = intent.grab, intent.throw
        self._last_x, self._last_y = me.x, me.y
        return intent

    def _tour(self, snapshot: WorldSnapshot, me: ActorView) -> PlayerIntent:
        if not self._planned:
            self._planned = True
            self._plan = self._first_plan(snapshot, me)
        if not self._plan:
            self._plan = self._more_plan(snapshot, me)
        task = self._plan[0]
        if task.started < 0:
            task.started = snapshot.tick
        intent = self._do(task, snapshot, me)
        if intent is None or snapshot.tick - task.started > TASK_TIMEOUT:
            self._plan.pop(0)
            intent = IDLE
        return intent

    # -- planning -------------------------------------------------------------------

    def _first_plan(self, snap: WorldSnapshot, me: ActorView) -> list[_Task]:
        if self.route == "ambush":
            return []
        npcs = [a for a in snap.actors if not a.is_player]
        left = sorted((a for a in npcs if a.x < me.x), key=lambda a: -a.x)
        right = sorted((a for a in npcs if a.x >= me.x), key=lambda a: a.x)
        plan: list[_Task] = []
        basket = self._zones.get("basket")
        if basket is not None:
            plan += [_Task("fetch", prop_kind="apple"), _Task("drop_at", x=basket.x + basket.w / 2)]
        if left:
            # Throw something back along the street, at whoever stands about a throw away.
            mark = min(left, key=lambda a: (abs(me.x - a.x - THROW_RANGE), a.id))
            plan += [_Task("fetch"), _Task("throw_at", target=mark.id)]
        plan += [_Task("visit", target=a.id) for a in left]
        plan += [_Task("visit", target=a.id) for a in right]
        stack = self._zones.get("stack_zone")
        if stack is not None:
            # The stack stands past the far end of the street, where the tour ends.
            plan.append(_Task("topple", x=stack.x + stack.w / 2))
        return plan

    def _more_plan(self, snap: WorldSnapshot, me: ActorView) -> list[_Task]:
        npcs = sorted((a for a in snap.actors if not a.is_player), key=lambda a: a.id)
        if not npcs:
            return [_Task("wait", x=60)]
        target = self._rng.choice(npcs)
        if self.route == "ambush":
            victim = self._rng.choice(npcs)
            return [
                _Task("veer", target=target.id),
                _Task("retreat", target=target.id),
                _Task("fetch"),
                _Task("throw_at", target=victim.id),
                _Task("retreat", target=victim.id),
            ]
        return [
            _Task("fetch"),
            _Task("throw_at", target=target.id),
            _Task("visit", target=target.id),
        ]

    # -- tasks ----------------------------------------------------------------------

    def _do(self, task: _Task, snap: WorldSnapshot, me: ActorView) -> PlayerIntent | None:
        carrying = _carried(snap)
        age = snap.tick - task.started
        if task.kind == "wait":
            return IDLE if age < task.x else None
        if task.kind == "fetch":
            if carrying is not None:
                return None
            prop = self._nearest_prop(snap, me, task.prop_kind)
            if prop is None:
                return None
            if abs(prop.x - me.x) > 22:
                return PlayerIntent(move=_toward(me.x, prop.x))
            return PlayerIntent(grab=True)
        if task.kind == "drop_at":
            if carrying is None:
                return None
            if abs(task.x - me.x) > 30:
                return PlayerIntent(move=_toward(me.x, task.x))
            if abs(task.x - me.x) > 6 and abs(me.x - self._last_x) < 2.0:
                return PlayerIntent(move=_toward(me.x, task.x))
            if abs(me.x - self._last_x) > 0.3:
                return IDLE  # let the carried prop settle before letting go
            return PlayerIntent(grab=True)
        actor = _actor(snap, task.target)
        if task.kind == "topple":
            return self._topple(task, me, carrying, age)
        if actor is None:
            return None
        dx = actor.x - me.x
        if task.kind == "visit":
            if actor.id in self._greeted and self._greeted[actor.id] >= task.started - GREET_MEMORY:
                return None  # they greeted us recently (perhaps while we passed by)
            if task.x == 0.0:
                task.x = 1.0 if dx >= 0 else -1.0  # travel direction, fixed at the start
            if me.y - actor.y > 60 and abs(dx) < 120:
                # Up on a roof or a crate pile: walk on and drop down, then come back.
                return PlayerIntent(move=int(task.x))
            if abs(dx) > 90 and task.phase == 0:
                return PlayerIntent(move=_toward(me.x, actor.x))
            if task.phase == 0:
                task.phase = snap.tick
            if actor.state in ("greet", "talk") or actor.id in self._greeted:
                return None
            return IDLE if snap.tick - task.phase < GREET_WAIT else None
        if task.kind == "throw_at":
            if carrying is None:
                return None
            side = 1 if dx >= 0 else -1
            spot = actor.x - side * THROW_RANGE
            if abs(spot - me.x) > 25 and age < 240:
                return PlayerIntent(move=_toward(me.x, spot))
            if me.facing != side:
                return PlayerIntent(move=side)
            return PlayerIntent(throw=True)
        if task.kind == "veer":
            if abs(dx) > self.talk_radius * 1.3:
                return PlayerIntent(move=_toward(me.x, actor.x))
            return None
        if task.kind == "retreat":
            if abs(dx) < self.talk_radius * 1.3 + 260:
                return PlayerIntent(move=-1 if dx > 0 else 1)
            return None
        return None

    def _topple(
        self, task: _Task, me: ActorView, carrying: PropView | None, age: int
    ) -> PlayerIntent | None:
        if carrying is not None:
            return None
        spot = task.x - 48
        if task.phase == 0:
            if abs(spot - me.x) > 6:
                return PlayerIntent(move=_toward(me.x, spot))
            task.phase = 1
            return PlayerIntent(jump=True)
        if task.phase == 1:
            if me.y > self._last_y + 0.5:
                task.phase = 2
            return PlayerIntent(jump=age % 30 < 2)
        if me.y <= self._last_y:
            task.phase = 1
            return PlayerIntent(grab=True)
        return IDLE

    def _nearest_prop(self, snap: WorldSnapshot, me: ActorView, kind: str) -> PropView | None:
        """The closest prop within jumping-free reach that no errand zone holds."""
        best: tuple[float, int, PropView] | None = None
        for prop in snap.props:
            if prop.held or (kind and prop.kind != kind) or abs(prop.y - me.y) > 78:
                continue
            if any(
                z.x <= prop.x <= z.x + z.w and z.y <= prop.y <= z.y + z.h
                for z in self._zones.values()
            ):
                continue
            d = abs(prop.x - me.x)
            if best is None or (d, prop.id) < best[:2]:
                best = (d, prop.id, prop)
        return best[2] if best is not None else None

    def _unstick(self, intent: PlayerIntent, me: ActorView) -> PlayerIntent:
        """Jump when walking makes no headway; after a few tries, back off for a moment."""
        if self._backoff > 0:
            self._backoff -= 1
            return PlayerIntent(move=-self._backoff_dir)
        if intent.move and abs(me.x - self._last_x) < 1.5:
            self._stuck += 1
        elif intent.move:
            self._stuck = 0
            self._tries = 0
        else:
            self._stuck = 0  # standing still on purpose (or tapping toward a spot)
        if self._stuck >= STUCK_TICKS:
            self._stuck = 0
            self._tries += 1
            if self._tries > 3:
                self._tries = 0
                self._backoff, self._backoff_dir = 20, intent.move
            return PlayerIntent(intent.move, True, intent.grab, intent.throw)
        return intent


def _default_level_view() -> LevelView | None:
    """The default level's view, for callers that did not pass the world's own."""
    try:
        return load_level().view()
    except AssetError as exc:
        logger.warning("bot: no level view (%s); skipping basket and stack tasks", exc)
        return None


def _player(snap: WorldSnapshot) -> ActorView:
    for actor in snap.actors:
        if actor.is_player:
            return actor
    raise ValueError("snapshot has no player")


def _actor(snap: WorldSnapshot, actor_id: int) -> ActorView | None:
    for actor in snap.actors:
        if actor.id == actor_id:
            return actor
    return None


def _carried(snap: WorldSnapshot) -> PropView | None:
    for prop in snap.props:
        if prop.held:
            return prop
    return None


def _toward(x: float, target: float) -> int:
    return 1 if target > x else -1
