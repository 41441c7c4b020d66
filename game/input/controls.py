"""Keyboard state turned into one ``PlayerIntent`` per tick.

Held keys (walking) are read when a tick runs; presses (jump, grab, throw) are latched
until a tick consumes them, so a tap between two ticks is never lost or applied twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygame

from game.sim.player import PlayerIntent

_LEFT = (pygame.K_a, pygame.K_LEFT)
_RIGHT = (pygame.K_d, pygame.K_RIGHT)
_JUMP = (pygame.K_w, pygame.K_UP, pygame.K_SPACE)
_GRAB = (pygame.K_e,)
_THROW = (pygame.K_f,)


@dataclass(slots=True)
class Controls:
    """Latches key presses between ticks."""

    left: bool = False
    right: bool = False
    jump: bool = False
    grab: bool = False
    throw: bool = False

    def key_down(self, key: int) -> None:
        """Record a key press."""
        if key in _LEFT:
            self.left = True
        elif key in _RIGHT:
            self.right = True
        elif key in _JUMP:
            self.jump = True
        elif key in _GRAB:
            self.grab = True
        elif key in _THROW:
            self.throw = True

    def key_up(self, key: int) -> None:
        """Record a key release."""
        if key in _LEFT:
            self.left = False
        elif key in _RIGHT:
            self.right = False

    def release_all(self) -> None:
        """Forget everything, e.g. when the chat box takes the keyboard."""
        self.left = self.right = self.jump = self.grab = self.throw = False

    def take_intent(self) -> PlayerIntent:
        """The intent for the next tick; presses are consumed, held keys are not."""
        intent = PlayerIntent(
            move=int(self.right) - int(self.left),
            jump=self.jump,
            grab=self.grab,
            throw=self.throw,
        )
        self.jump = self.grab = self.throw = False
        return intent
