"""Keyboard and mouse state turned into one ``PlayerIntent`` per tick.

Held keys (walking, charging a throw, turning the aim) are read when a tick runs;
presses (jump, grab, cycling the highlight) are latched until a tick consumes them, so a
tap between two ticks is never lost or applied twice. A throw tapped between two ticks
still shows one tick of charge, so it flies.
"""

from __future__ import annotations

from dataclasses import dataclass

from game.input.keys import KEYS, Action
from game.sim.player import PlayerIntent

_LEFT = KEYS[Action.LEFT]
_RIGHT = KEYS[Action.RIGHT]
_JUMP = KEYS[Action.JUMP]
_GRAB = KEYS[Action.GRAB]
_THROW = KEYS[Action.THROW]
_CYCLE = KEYS[Action.CYCLE]
_AIM_UP = KEYS[Action.AIM_UP]
_AIM_DOWN = KEYS[Action.AIM_DOWN]


@dataclass(slots=True)
class Controls:
    """Latches key presses between ticks. While a throw charges, ↑ and ↓ turn the aim."""

    left: bool = False
    right: bool = False
    jump: bool = False
    grab: bool = False
    throw: bool = False
    throw_tapped: bool = False
    aim_up: bool = False
    aim_down: bool = False
    cycle: int = 0
    mouse_aim: float | None = None

    def key_down(self, key: int) -> None:
        """Record a key press."""
        if self.throw and key in _AIM_UP + _AIM_DOWN:
            self.aim_up, self.aim_down = key in _AIM_UP, key in _AIM_DOWN
            self.mouse_aim = None  # the keys take over from the mouse
        elif key in _LEFT:
            self.left = True
        elif key in _RIGHT:
            self.right = True
        elif key in _JUMP:
            self.jump = True
        elif key in _GRAB:
            self.grab = True
        elif key in _THROW:
            self.throw = self.throw_tapped = True
        elif key in _CYCLE:
            self.cycle = 1

    def key_up(self, key: int) -> None:
        """Record a key release."""
        if key in _LEFT:
            self.left = False
        elif key in _RIGHT:
            self.right = False
        elif key in _THROW:
            self.throw = False
        if key in _AIM_UP:
            self.aim_up = False
        if key in _AIM_DOWN:
            self.aim_down = False

    def wheel(self, steps: int) -> None:
        """The mouse wheel turned: highlight the next (down) or previous (up) prop."""
        if steps:
            self.cycle = -1 if steps > 0 else 1

    def release_all(self) -> None:
        """Forget everything, e.g. when the chat box takes the keyboard."""
        self.left = self.right = self.jump = self.grab = self.throw = False
        self.throw_tapped = self.aim_up = self.aim_down = False
        self.cycle = 0

    def take_intent(self) -> PlayerIntent:
        """The intent for the next tick; presses are consumed, held keys are not."""
        intent = PlayerIntent(
            move=int(self.right) - int(self.left),
            jump=self.jump,
            grab=self.grab,
            throw=self.throw or self.throw_tapped,
            aim=self.mouse_aim if self.throw else None,
            tilt=int(self.aim_up) - int(self.aim_down),
            cycle=self.cycle,
        )
        self.jump = self.grab = self.throw_tapped = False
        self.cycle = 0
        return intent
