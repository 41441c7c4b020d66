"""Every key binding in one table: what each key does, and how the help screen says it.

The controls, the window, the pause menu, the chat box and the F1 help all read this
table, so a binding changes in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import pygame


class Action(StrEnum):
    """Something a key can do."""

    LEFT = "left"
    RIGHT = "right"
    JUMP = "jump"
    GRAB = "grab"
    CYCLE = "cycle"
    THROW = "throw"
    AIM_UP = "aim up"
    AIM_DOWN = "aim down"
    TALK = "talk"
    HELP = "help"
    STATS = "stats"
    AI_MODE = "ai mode"
    PAUSE = "pause"
    SCREENSHOT = "screenshot"
    MENU_UP = "menu up"
    MENU_DOWN = "menu down"
    CONFIRM = "confirm"
    SEND = "send"
    ERASE = "erase"


@dataclass(frozen=True, slots=True)
class Binding:
    """The keys for one action; ``label`` and ``does`` are its help line ("" for none)."""

    action: Action
    keys: tuple[int, ...]
    label: str = ""
    does: str = ""


BINDINGS: tuple[Binding, ...] = (
    Binding(Action.LEFT, (pygame.K_a, pygame.K_LEFT), "A / D  or  ← / →", "move"),
    Binding(Action.RIGHT, (pygame.K_d, pygame.K_RIGHT)),
    Binding(Action.JUMP, (pygame.K_w, pygame.K_UP, pygame.K_SPACE), "W / Space / ↑", "jump"),
    Binding(Action.GRAB, (pygame.K_e,), "E", "grab the highlighted prop / put down"),
    Binding(Action.CYCLE, (pygame.K_q,), "Q  or  mouse wheel", "highlight the next prop"),
    Binding(Action.THROW, (pygame.K_f,), "hold F", "charge a throw; aim with ↑ / ↓ or the mouse"),
    Binding(Action.AIM_UP, (pygame.K_UP,)),
    Binding(Action.AIM_DOWN, (pygame.K_DOWN,)),
    Binding(Action.TALK, (pygame.K_t, pygame.K_RETURN), "T  or  Enter", "talk (Esc leaves)"),
    Binding(Action.HELP, (pygame.K_F1,), "F1", "this help"),
    Binding(Action.STATS, (pygame.K_F3,), "F3", "frame graph and AI stats"),
    Binding(Action.AI_MODE, (pygame.K_F5,), "F5", "AI mode: sync / async"),
    Binding(Action.PAUSE, (pygame.K_ESCAPE,), "Esc", "pause"),
    Binding(Action.SCREENSHOT, (pygame.K_F12,), "F12", "screenshot"),
    Binding(Action.MENU_UP, (pygame.K_UP, pygame.K_w)),
    Binding(Action.MENU_DOWN, (pygame.K_DOWN, pygame.K_s)),
    Binding(Action.CONFIRM, (pygame.K_RETURN, pygame.K_KP_ENTER, pygame.K_SPACE)),
    Binding(Action.SEND, (pygame.K_RETURN, pygame.K_KP_ENTER)),
    Binding(Action.ERASE, (pygame.K_BACKSPACE,)),
)

KEYS: dict[Action, tuple[int, ...]] = {b.action: b.keys for b in BINDINGS}

HELP_LINES: tuple[tuple[str, str], ...] = tuple((b.label, b.does) for b in BINDINGS if b.does)


def pressed(key: int, action: Action) -> bool:
    """Whether ``key`` is bound to ``action``."""
    return key in KEYS[action]
