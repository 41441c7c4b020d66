"""A scripted player that does the village's three errands, through the player's inputs only.

It reads snapshots, as any bot does, and knows the village the way a player who has
looked around does (``village_map.py``): where the basket is, that the forge hood is a
step up to the market hall roof, that the crate stack stands past the town wall. Each
errand is a generator that yields one ``PlayerIntent`` per tick and reads the newest
snapshot between yields, so the plan reads top to bottom like the instructions one would
give a new player.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterator

from game.input.village_map import (
    Step,
    VillageMap,
    loose_crate,
    nearest_reachable,
    player_of,
    roof_ball,
)
from game.sim.player import DROP_GAP, PLAYER_H, PLAYER_W, PlayerIntent
from game.sim.snapshot import ActorView, ErrandView, PropView, WorldSnapshot

logger = logging.getLogger(__name__)

IDLE = PlayerIntent()
Script = Iterator[PlayerIntent]

STOP_DISTANCE = 20.0
"""How far the player slides after letting go of a key at walking speed."""
ERRAND_BUDGET = 3600
"""Ticks an errand may take before the bot moves on to the next and comes back later."""
CREEP = 16.0
"""Within this distance the bot taps the keys instead of holding them."""
HAND_OVER = 72.0
"""How close to the giver the bot stops before setting a fetched prop down."""


class ErrandRunner:
    """Plays the apples, the roof ball and the crate stack, in that order, then idles."""

    def __init__(self, village: VillageMap) -> None:
        self.map = village
        self.snap: WorldSnapshot | None = None
        self.finished: dict[str, int] = {}
        """Errand id -> tick it was seen done."""
        self._vx = 0.0
        self._last_x: float | None = None
        self._ball: int | None = None
        self._script = self._play()

    def intent(self, snap: WorldSnapshot) -> PlayerIntent:
        """The next intent of the script, given the newest snapshot."""
        me = player_of(snap)
        if self._last_x is not None:
            self._vx = (me.x - self._last_x) * 60.0
        self._last_x = me.x
        self.snap = snap
        if self._ball is None:
            self._ball = self._roof_ball()
        self._note_done(snap)
        return next(self._script)

    def _note_done(self, snap: WorldSnapshot) -> None:
        for errand in snap.errands:
            if errand.done and errand.id not in self.finished:
                self.finished[errand.id] = snap.tick
                logger.info("bot: errand %s done at tick %d", errand.id, snap.tick)

    # -- the plan -------------------------------------------------------------------

    def _play(self) -> Script:
        order = ("apples", "ball", "restack")
        plays: dict[str, Callable[[], Script]] = {
            "apples": self._apples,
            "ball": self._fetch_ball,
            "restack": self._restack,
        }
        while True:
            todo = [e for e in order if not self._done(e)]
            if not todo:
                break
            for errand_id in todo:
                yield from self._budgeted(plays[errand_id](), errand_id)
        while True:
            yield IDLE

    def _budgeted(self, script: Script, errand_id: str) -> Script:
        start = self._snap().tick
        yield from self._let_go()
        for intent in script:
            if self._done(errand_id):
                break
            if self._snap().tick - start > ERRAND_BUDGET:
                logger.info("bot: errand %s over budget; moving on", errand_id)
                break
            yield intent
        yield from self._let_go()

    def _apples(self) -> Script:
        basket = self.map.basket_x
        while not self._done("apples"):
            carried = self._carried()
            if carried is None or carried.kind != "apple":
                if carried is not None:
                    yield from self._put_down_here()

                def loose(p: PropView) -> bool:
                    return p.kind == "apple" and not self._in_basket(p)

                apple = self._nearest(loose)
                if apple is None:
                    yield IDLE
                    continue
                yield from self._pick(apple.id, loose)
                continue
            # Face the basket from the right and set the apple down over its mouth.
            reach = PLAYER_W / 2 + carried.w / 2 + DROP_GAP
            yield from self._face_and_stand(basket + reach, -1)
            yield from self._press(PlayerIntent(grab=True))
            yield from self._wait(20)

    def _fetch_ball(self) -> Script:
        ball = self._ball
        if ball is None:
            return
        while not self._done("ball"):
            carried = self._carried()
            if carried is None or carried.id != ball:
                if carried is not None:
                    yield from self._put_down_here()
                prop = self._prop(ball)
                if prop is None:
                    return
                if prop.y > self.map.roof_y and self._feet() < self.map.roof_y - 10:
                    for step in self.map.roof_climb:
                        yield from self._climb(step)
                yield from self._pick(ball)
                continue
            yield from self._come_down()
            giver = self._giver("ball")
            if giver is None:
                return
            yield from self._approach(giver.id)
            yield from self._press(PlayerIntent(grab=True))
            yield from self._wait(30)

    def _restack(self) -> Script:
        column = self.map.stack_x
        if self._me().x < self.map.wall.land_x - 20:
            yield from self._climb(self.map.wall)
        if not self._open("restack"):
            # Pull the bottom crate out; the rest of the stack comes down with it.
            crate = self._nearest(lambda p: p.kind == "crate" and abs(p.x - column) < 30)
            if crate is not None:
                yield from self._pick(crate.id)
                yield from self._wait(40)
        while not self._done("restack"):
            carried = self._carried()
            if carried is None:
                wanted = loose_crate(self._column()[1])
                loose = self._nearest(wanted)
                if loose is None:
                    yield from self._come_down()
                    yield IDLE
                    continue
                yield from self._pick(loose.id, wanted)
                continue
            yield from self._place_on_column(carried)

    # -- moves ----------------------------------------------------------------------

    def _place_on_column(self, carried: PropView) -> Script:
        column, built = self._column()
        levels = len(built)
        reach = PLAYER_W / 2 + carried.w / 2 + DROP_GAP
        side = self._free_side(column, reach, built)
        # Crates get nudged about: if the spot is not reached soon, look again.
        if not (yield from self._face_and_stand(column + side * reach, -side, patience=150)):
            return
        # The crate leaves from carrying height; jump until it clears the column's top.
        top = self.map.stack_ground + levels * carried.h
        yield from self._put_down_above(top + 6.0 - (PLAYER_H + 6.0))
        yield from self._wait(45)

    def _put_down_above(self, need: float) -> Script:
        """Put the carried prop down once the feet are at ``need``, jumping if they are not."""
        if self._feet() + 2.0 < need:
            yield PlayerIntent(jump=True)
            for _ in range(40):
                if self._feet() >= need + 4.0:
                    break
                yield IDLE
        yield from self._press(PlayerIntent(grab=True))

    def _pick(self, prop_id: int, also: Callable[[PropView], bool] | None = None) -> Script:
        """Walk under a prop and grab it, cycling the highlight onto it if need be.

        A highlighted prop that ``also`` accepts is as good as the one asked for. Gives up
        when the prop cannot be highlighted from where the player stands.
        """
        cycles = 0
        for _ in range(600):
            prop = self._prop(prop_id)
            if prop is None or prop.held:
                return
            target = self._prop(self._snap().grab_target or -1)
            if target is not None and (target.id == prop_id or (also and also(target))):
                yield from self._press(PlayerIntent(grab=True))
                yield IDLE
                return
            if abs(prop.x - self._me().x) > 24.0 or target is None:
                yield from self._step_toward(prop.x, 18.0)
                continue
            cycles += 1
            if cycles > 6:
                return
            yield from self._press(PlayerIntent(cycle=1))
            yield IDLE

    def _face_and_stand(
        self, x: float, facing: int, patience: int = 900
    ) -> Generator[PlayerIntent, None, bool]:
        """Arrive at ``x`` facing ``facing``, coming from the far side if need be.

        Returns whether it got there within ``patience`` steps.
        """
        for _ in range(patience):
            me = self._me()
            ahead = (x - me.x) * facing
            if me.facing != facing:
                if ahead > 2.0:
                    yield PlayerIntent(move=facing)
                else:
                    yield from self._arrive(x - facing * 40.0)
                    yield PlayerIntent(move=facing)
                continue
            if abs(x - me.x) <= 6.0 and abs(self._vx) < 12.0:
                return True
            if ahead < -6.0:
                # Slid past the spot: walk back out and come in again.
                yield from self._arrive(x - facing * 40.0)
                continue
            yield from self._step_toward(x, 5.0)
        return False

    def _approach(self, actor_id: int) -> Script:
        for _ in range(900):
            actor = self._actor(actor_id)
            if actor is None:
                return
            if abs(actor.x - self._me().x) < HAND_OVER and abs(self._vx) < 40.0:
                return
            yield from self._step_toward(actor.x, HAND_OVER - 10.0)

    def _arrive(self, x: float, tol: float = 6.0) -> Script:
        for _ in range(900):
            if abs(x - self._me().x) <= tol and abs(self._vx) < 15.0:
                return
            yield from self._step_toward(x, tol)

    def _step_toward(self, x: float, tol: float) -> Script:
        """One tick toward ``x``: walk while far, coast when about to overshoot, and creep
        the last few units in one-tick taps."""
        dx = x - self._me().x
        coasting = abs(self._vx) * STOP_DISTANCE / 300.0
        arrived = abs(dx) <= tol or (abs(dx) <= coasting + tol and dx * self._vx > 0)
        if arrived or (abs(dx) < CREEP and self._snap().tick % 2):
            yield IDLE
        else:
            yield PlayerIntent(move=1 if dx > 0 else -1)

    def _climb(self, step: Step) -> Script:
        """Jump from ``stand_x`` and move over to ``land_x`` once high enough; retry a few
        times."""
        for _ in range(5):
            yield from self._arrive(step.stand_x, 5.0)
            yield PlayerIntent(jump=True)
            for _ in range(45):
                if self._feet() >= step.clear_y:
                    break
                yield IDLE
            for _ in range(90):
                me = self._me()
                if abs(me.x - step.land_x) < 8.0 and not me.state.endswith("_air"):
                    break
                move = 1 if step.land_x > me.x else -1
                yield PlayerIntent(move=move if abs(step.land_x - me.x) > 8.0 else 0)
            yield from self._wait(6)
            if abs(self._me().x - step.land_x) < 30.0 and abs(self._feet() - step.land_y) < 12.0:
                return

    def _come_down(self) -> Script:
        """Walk off whatever the player stands on, to the right, until back on the street."""
        for _ in range(400):
            if self._feet() < 40.0:
                return
            yield PlayerIntent(move=1)

    def _put_down_here(self) -> Script:
        yield from self._press(PlayerIntent(grab=True))
        yield from self._wait(10)

    def _press(self, intent: PlayerIntent) -> Script:
        """Press grab, jump or cycle: one tick, as the intent acts on its rising edge."""
        yield intent

    def _let_go(self) -> Script:
        yield IDLE

    def _wait(self, ticks: int) -> Script:
        for _ in range(ticks):
            yield IDLE

    # -- reading the snapshot -------------------------------------------------------

    def _snap(self) -> WorldSnapshot:
        assert self.snap is not None
        return self.snap

    def _me(self) -> ActorView:
        return player_of(self._snap())

    def _feet(self) -> float:
        return self._me().y - PLAYER_H / 2

    def _errand(self, errand_id: str) -> ErrandView | None:
        return next((e for e in self._snap().errands if e.id == errand_id), None)

    def _done(self, errand_id: str) -> bool:
        errand = self._errand(errand_id)
        return errand is None or errand.done

    def _open(self, errand_id: str) -> bool:
        errand = self._errand(errand_id)
        return errand is not None and errand.open

    def _giver(self, errand_id: str) -> ActorView | None:
        errand = self._errand(errand_id)
        return None if errand is None else self._actor(errand.giver_id)

    def _actor(self, actor_id: int) -> ActorView | None:
        return next((a for a in self._snap().actors if a.id == actor_id), None)

    def _prop(self, prop_id: int) -> PropView | None:
        return next((p for p in self._snap().props if p.id == prop_id), None)

    def _carried(self) -> PropView | None:
        return next((p for p in self._snap().props if p.held), None)

    def _nearest(self, wanted: Callable[[PropView], bool]) -> PropView | None:
        return nearest_reachable(self._snap(), wanted)

    def _in_basket(self, prop: PropView) -> bool:
        return self.map.in_basket(prop)

    def _roof_ball(self) -> int | None:
        return roof_ball(self._snap())

    def _column(self) -> tuple[float, set[int]]:
        return self.map.column(self._snap())

    def _free_side(self, column: float, reach: float, built: set[int]) -> int:
        return self.map.free_side(self._snap(), column, reach, built)
