"""A human-like player for the errands: late eyes, slow fingers, rough aim.

It follows the errand bot's plan (``errand_bot.ErrandRunner``) as a person would:

- it sees the world 150–300 ms late: each tick it acts on a snapshot 9–18 ticks old, the
  delay drawn afresh from its seeded generator whenever a key goes down;
- its keys go down and up through ``Hands``: presses of 80–150 ms, walking in held bursts,
  never flicking a key from one tick to the next;
- it aims by eye: a long walk stops 15–25 units off the spot it meant, a short correction
  about a quarter of its length off; it corrects only once it has seen where it stopped;
  jumps are steered and put-downs in the air let go by feel, a few ticks early or late.

Nothing reads the wall clock: the same seed plays the same game.
"""

from __future__ import annotations

import logging
import math
import random
from collections import deque
from collections.abc import Generator

from game.input.errand_bot import IDLE, ErrandRunner, Script
from game.input.hands import HOLD_MIN_TICKS, Hands, KeyPress
from game.input.village_map import Step, VillageMap, player_of, roof_ball
from game.sim.level import load_level
from game.sim.player import (
    AIR_ACCEL,
    GROUND_ACCEL,
    JUMP_SPEED,
    WALK_SPEED,
    PlayerIntent,
)
from game.sim.snapshot import LevelView, WorldSnapshot

logger = logging.getLogger(__name__)

HZ = 60
REACTION_TICKS = (9, 18)
"""Reaction delay, 150–300 ms: how old the snapshot is that each tick acts on."""
LEAD_TICKS = 13.5
"""The delay a person allows for when judging where they are now: the mean, not the true one."""
AIM_ERROR = (15.0, 25.0)
"""How far off a long walk stops from the spot meant."""
CORRECTION_ERROR = 0.25
"""A short walk stops off by up to this share of its length."""
TAP_RANGE = 60.0
"""A walk shorter than this is one press timed by feel, not watched to its end."""
EYE = 8.0
"""The closest a person lines up by eye (about half of what the shortest press moves)."""
SLOWER = 3
"""A person takes about this many times the errand bot's ticks to line up on a spot."""
RUN_UP = 40.0
STUCK_TICKS = 20
HOP_TICKS = 24
"""How long the key is held through a hop over something in the way."""
GRAVITY = 1400.0
"""The village's gravity, which a player learns by feel as the height and length of a jump."""
JUMP_JITTER = (-3, 3)
"""Ticks early or late that a jump is steered or a prop let go in the air."""
PEAK_TICKS = round(JUMP_SPEED / GRAVITY * HZ)
"""Ticks from take-off to the top of a jump."""


def _reach(ticks: int, accel: float) -> float:
    """How far a press of ``ticks`` moves the player from standing, the slide included."""
    x = v = 0.0
    for tick in range(600):
        target = WALK_SPEED if tick < ticks else 0.0
        dv = max(-accel, min(accel, (target - v) * 12.0)) / HZ
        v += dv
        x += v / HZ
        if tick >= ticks and v <= 0.5:
            break
    return x


def _press_for(distance: float, accel: float) -> int:
    """The press, in ticks, that moves the player about ``distance`` from standing."""
    return min(range(1, 90), key=lambda n: abs(_reach(n, accel) - distance))


def stop_error(rng: random.Random, distance: float) -> float:
    """How far from the spot meant a walk of ``distance`` stops, by eye (signed)."""
    if distance > TAP_RANGE:
        return rng.choice((-1, 1)) * rng.uniform(*AIM_ERROR)
    return rng.uniform(-CORRECTION_ERROR, CORRECTION_ERROR) * distance


def _rise_ticks(height: float) -> int:
    """Ticks after take-off until the feet are ``height`` up, or the top of the jump."""
    disc = JUMP_SPEED**2 - 2 * GRAVITY * height
    if disc <= 0:
        return round(JUMP_SPEED / GRAVITY * HZ)
    return round((JUMP_SPEED - math.sqrt(disc)) / GRAVITY * HZ)


class HumanRunner(ErrandRunner):
    """The errand plan, seen late and played with human presses and human aim."""

    def __init__(self, village: VillageMap, rng: random.Random) -> None:
        super().__init__(village)
        self._rng = rng
        self._seen: deque[WorldSnapshot] = deque(maxlen=REACTION_TICKS[1] + 2)
        self._delay = self._draw_delay()
        self._now = 0
        self._released = 0
        self.lags: list[int] = []
        """For each tick played: how many ticks old the snapshot it acted on was."""
        self.delays: list[int] = [self._delay]
        """Every reaction delay drawn, in order."""

    def intent(self, snap: WorldSnapshot) -> PlayerIntent:
        """The next intent of the plan, acting on a snapshot seen a reaction delay ago.

        ``snap`` is the newest; the errands done are noted from it, as the world's own record.
        """
        self._note_done(snap)
        self._seen.append(snap)
        self._now = snap.tick
        index = self._perceived(snap.tick - self._delay)
        if index is None:
            return IDLE  # not a reaction's time into the game yet
        seen = self._seen[index]
        before = self._seen[index - 1] if index > 0 else seen
        self._vx = (player_of(seen).x - player_of(before).x) * HZ
        self.snap = seen
        if self._ball is None:
            self._ball = roof_ball(seen)
        self.lags.append(snap.tick - seen.tick)
        return next(self._script)

    def react(self) -> None:
        """A new move began: the next reaction's delay is drawn."""
        self._delay = self._draw_delay()
        self.delays.append(self._delay)

    def _draw_delay(self) -> int:
        return self._rng.randint(*REACTION_TICKS)

    def _perceived(self, tick: int) -> int | None:
        """Where in ``_seen`` the newest snapshot no newer than ``tick`` is, or the one seen
        last when that is newer: what was seen is never unseen."""
        last = -1 if self.snap is None else self.snap.tick
        newest = max(tick, last)
        found = None
        for index, snap in enumerate(self._seen):
            if snap.tick <= newest:
                found = index
        return found

    # -- moves, as a person makes them ----------------------------------------------

    def _press(self, intent: PlayerIntent) -> Script:
        """Press the key, then wait to see what it did before deciding anything else."""
        pressed = self._now
        yield intent
        while self._snap().tick <= pressed:
            yield IDLE

    def _step_toward(self, x: float, tol: float) -> Script:
        start = self._me().x
        if abs(x - start) <= tol:
            yield IDLE
            return
        yield from self._walk_to(x)
        yield from self._settle()
        if abs(self._me().x - start) < 3.0:
            yield from self._hop(1 if x > start else -1)  # something is in the way

    def _hop(self, way: int) -> Script:
        """Jump and walk over whatever stands in the way."""
        yield PlayerIntent(move=way, jump=True)
        for _ in range(HOP_TICKS + self._rng.randint(-4, 4)):
            yield PlayerIntent(move=way)
        self._released = self._now
        yield from self._settle()

    def _arrive(self, x: float, tol: float = 6.0) -> Script:
        tol = max(tol, EYE)
        for _ in range(12):
            if abs(x - self._me().x) <= tol and abs(self._vx) < 15.0:
                return
            yield from self._step_toward(x, tol)

    def _face_and_stand(
        self, x: float, facing: int, patience: int = 900
    ) -> Generator[PlayerIntent, None, bool]:
        deadline = self._now + patience * SLOWER
        while self._now < deadline:
            me = self._me()
            ahead = (x - me.x) * facing
            if me.facing == facing and abs(ahead) <= EYE:
                if abs(self._vx) < 12.0:
                    return True
                yield IDLE
                continue
            if ahead > EYE:
                yield from self._walk_to(x)  # walking there turns the player that way
            else:
                # Past the spot, or on it facing the wrong way: back off and come in again.
                yield from self._arrive(x - facing * RUN_UP, 12.0)
            yield from self._settle()
        return False

    def _approach(self, actor_id: int) -> Script:
        for _ in range(12):
            actor = self._actor(actor_id)
            if actor is None:
                return
            dx = actor.x - self._me().x
            if abs(dx) < 72.0 and abs(self._vx) < 40.0:
                return
            way = 1 if dx > 0 else -1
            yield from self._walk_to(actor.x - way * 42.0)
            yield from self._settle()

    def _climb(self, step: Step) -> Script:
        """Jump from about ``stand_x`` and steer over to ``land_x`` by feel; retry a few times."""
        for _ in range(6):
            yield from self._arrive(step.stand_x, EYE)
            start = self._me().x
            lift = step.clear_y - self._feet()
            yield PlayerIntent(jump=True)
            yield from self._wait(max(1, _rise_ticks(lift) + self._rng.randint(*JUMP_JITTER)))
            gap = step.land_x - start
            way = 1 if gap > 0 else -1
            hold = round(_press_for(abs(gap), AIR_ACCEL) * self._rng.uniform(0.85, 1.15))
            for _ in range(max(HOLD_MIN_TICKS, hold)):
                yield PlayerIntent(move=way)
            self._released = self._now
            yield from self._settle()
            landed = abs(self._feet() - step.land_y) < 12.0
            if landed and abs(self._me().x - step.land_x) < 30.0:
                return

    def _put_down_above(self, need: float) -> Script:
        """Jump and let go about the top of the jump, when it has to go up at all."""
        if self._feet() + 2.0 < need:
            yield PlayerIntent(jump=True)
            yield from self._wait(PEAK_TICKS + self._rng.randint(*JUMP_JITTER))
        yield from self._press(PlayerIntent(grab=True))

    def _walk_to(self, x: float) -> Script:
        """Walk toward ``x`` and let go where it looks right; it stops off the spot, by eye."""
        me = self._me()
        aim = x + stop_error(self._rng, abs(x - me.x))
        gap = aim - me.x
        way = 1 if gap > 0 else -1
        if abs(gap) <= TAP_RANGE:
            hold = round(_press_for(abs(gap), GROUND_ACCEL) * self._rng.uniform(0.85, 1.15))
            for _ in range(max(1, hold)):
                yield PlayerIntent(move=way)
        else:
            yield from self._hold_until(aim, way)
        self._released = self._now

    def _hold_until(self, aim: float, way: int) -> Script:
        """Hold the key, watching the delayed view; let go where the slide should end at ``aim``.

        Walking into something that does not give, hop.
        """
        start, stuck = self._now, 0
        for _ in range(1800):
            yield PlayerIntent(move=way)
            if self._snap().tick <= start:
                continue  # still seeing the world from before the walk began
            now_x = self._me().x + self._vx * LEAD_TICKS / HZ
            slide = self._vx * abs(self._vx) / (2 * GROUND_ACCEL)
            if (aim - now_x - slide) * way <= 0:
                return
            stuck = stuck + 1 if abs(self._vx) < 30.0 else 0
            if stuck >= STUCK_TICKS:
                stuck = 0
                yield PlayerIntent(move=way, jump=True)

    def _settle(self) -> Script:
        """Wait until the view shows the player standing still after the last release."""
        yield IDLE
        for _ in range(120):
            me = self._me()
            standing = not me.state.endswith("_air") and abs(self._vx) < 15.0
            if self._snap().tick >= self._released and standing:
                return
            yield IDLE


class HumanBot:
    """Plays the village's errands as a person at the keyboard would, from a seed."""

    def __init__(self, seed: int, level: LevelView | None = None) -> None:
        village = VillageMap.of(level if level is not None else load_level().view())
        if village is None:
            raise ValueError("the level has no basket or no crate stack to do errands at")
        rng = random.Random(seed)
        self.runner = HumanRunner(village, rng)
        self.hands = Hands(rng)

    @property
    def finished(self) -> dict[str, int]:
        """Errand id -> tick it was done."""
        return self.runner.finished

    @property
    def presses(self) -> list[KeyPress]:
        """Every key press so far, finished ones only."""
        return self.hands.presses

    def intent(self, snapshot: WorldSnapshot) -> PlayerIntent:
        """The intent for the tick after ``snapshot``, as the keys pressed make it."""
        intent = self.hands.play(self.runner.intent(snapshot), snapshot.tick)
        if self.hands.pressed_now:
            self.runner.react()
        return intent
