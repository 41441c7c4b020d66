"""A player's hands on the keyboard: what a player means to do, pressed as keys of human length.

The human-like bot says each tick what it means to do, as a ``PlayerIntent``; the hands
press and release the keys a person would, through the same ``Controls`` the window
feeds, and keep every press in a timeline. Every press lasts 80–150 ms at the least (a
hold drawn from a seeded generator); grab, jump and cycle are taps of just that length,
pressed when the intent turns them on; the two walking keys are never down together.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from game.input.controls import Controls
from game.input.keys import KEYS, Action
from game.sim.player import PlayerIntent

HOLD_MIN_TICKS = 5
"""The shortest press, in ticks (83 ms at 60 Hz)."""
HOLD_MAX_TICKS = 9
"""The longest a tap is held (150 ms); walking keys are held as long as the walk lasts."""
WALK_KEYS = (Action.LEFT, Action.RIGHT)
TAP_KEYS = (Action.JUMP, Action.GRAB, Action.CYCLE)


@dataclass(frozen=True, slots=True)
class KeyPress:
    """One key held down from tick ``down`` until tick ``up``."""

    action: Action
    down: int
    up: int

    @property
    def ticks(self) -> int:
        """How many ticks the key was down."""
        return self.up - self.down


class Hands:
    """Presses keys on a ``Controls`` toward the intent asked for, at a person's pace."""

    def __init__(self, rng: random.Random) -> None:
        self.controls = Controls()
        self.presses: list[KeyPress] = []
        """Every finished press, in the order the keys came up."""
        self._rng = rng
        self._down: dict[Action, tuple[int, int]] = {}
        """Action -> (tick pressed, ticks it stays down at the least)."""
        self._queued: list[Action] = []
        self._asked = PlayerIntent()
        self.pressed_now = False
        """Whether a key went down on the last tick played."""

    def play(self, intent: PlayerIntent, tick: int) -> PlayerIntent:
        """Move the keys toward ``intent`` on ``tick``; the intent the controls make of them."""
        self.pressed_now = False
        wants = {
            Action.LEFT: intent.move < 0,
            Action.RIGHT: intent.move > 0,
        }
        asked = {
            Action.JUMP: intent.jump and not self._asked.jump,
            Action.GRAB: intent.grab and not self._asked.grab,
            Action.CYCLE: bool(intent.cycle) and not self._asked.cycle,
        }
        self._asked = intent
        released: list[Action] = []
        for action, (down, hold) in list(self._down.items()):
            wanted = wants.get(action, False)
            if tick - down >= hold and not wanted:
                self._up(action, tick)
                released.append(action)
        for action in WALK_KEYS:
            # A walking key comes up a tick before either goes down again.
            busy = any(a in self._down or a in released for a in WALK_KEYS)
            if wants[action] and not busy:
                self._press(action, tick)
        for action in TAP_KEYS:
            if asked[action] and action not in self._queued:
                self._queued.append(action)
        for action in list(self._queued):
            if action not in self._down and action not in released:
                self._queued.remove(action)
                self._press(action, tick)
        return self.controls.take_intent()

    def _press(self, action: Action, tick: int) -> None:
        self._down[action] = (tick, self._rng.randint(HOLD_MIN_TICKS, HOLD_MAX_TICKS))
        self.controls.key_down(KEYS[action][0])
        self.pressed_now = True

    def _up(self, action: Action, tick: int) -> None:
        down, _ = self._down.pop(action)
        self.controls.key_up(KEYS[action][0])
        self.presses.append(KeyPress(action, down, tick))
