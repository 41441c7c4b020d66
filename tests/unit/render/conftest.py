"""Fixtures for renderer tests: a headless pygame and small synthetic worlds.

The renderer is tested against hand-made snapshots, not the simulation, so these tests
pin down what it draws for given views and nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import pairwise

import pytest

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402  (the SDL drivers must be chosen before pygame loads)

from game.sim.snapshot import (  # noqa: E402
    ActorView,
    DecorView,
    ErrandView,
    LevelView,
    PropView,
    StaticShapeView,
    WorldSnapshot,
    ZoneView,
)
from game.ui.views import BubbleView, ChatView, HudView, LoadView  # noqa: E402
from tests.unit.render.scene import BESS_ID, PLAYER_ID, SCREEN, ShapeKind, WorldFactory  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def headless_pygame() -> Iterator[None]:
    """Initialise pygame with the dummy drivers for one test module, then quit it."""
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    os.environ["SDL_AUDIODRIVER"] = "dummy"
    pygame.init()
    yield
    pygame.quit()


@pytest.fixture
def screen() -> pygame.Surface:
    """An off-screen 1280x720 target; no window is opened."""
    return pygame.Surface(SCREEN)


@pytest.fixture
def level() -> LevelView:
    """A 4000x1000 village: sloped grass, a plank, three houses, a well, a stall, a zone."""
    ground = [(0, 120), (700, 120), (880, 190), (1260, 190), (1400, 120), (4000, 120)]
    statics = tuple(
        StaticShapeView("segment", (a, b), 4.0, "grass") for a, b in pairwise(ground)
    ) + (
        StaticShapeView("segment", ((2300, 220), (2480, 220)), 6.0, "wood"),
        StaticShapeView("poly", ((1900, 120), (2060, 120), (2060, 150), (1900, 150)), 0, "stone"),
    )
    decor = (
        DecorView("house", 920, 190, 220, 180, "timber", "Bakery"),
        DecorView("house", 1560, 120, 200, 160, "plaster", "Smithy"),
        DecorView("house", 2620, 120, 240, 190, "timber"),
        DecorView("well", 1430, 120, 80, 120, "stone"),
        DecorView("stall", 2080, 120, 170, 120, "wood", "Market"),
        DecorView("mystery", 3000, 120, 60, 60, "unobtainium", "?"),
    )
    zones = (ZoneView("basket", 1960, 150, 70, 50, "Basket"),)
    return LevelView(4000, 1000, statics, decor, zones)


PROP_KINDS: tuple[tuple[str, ShapeKind, float, str], ...] = (
    ("crate", "box", 34, "wood"),
    ("barrel", "box", 30, "wood"),
    ("ball", "circle", 22, "rubber"),
    ("apple", "circle", 14, "fruit"),
    ("barrel", "circle", 30, "wood"),
    ("rock", "box", 20, "stone"),
)


@pytest.fixture
def make_world() -> WorldFactory:
    """Build a snapshot at ``tick``; the player stands at ``player_x`` and Bess beside him."""

    def build(tick: int = 1, player_x: float = 1500.0, shift: float = 0.0) -> WorldSnapshot:
        props = tuple(
            PropView(100 + i, kind, 1650 + i * 40 + shift, 140, 0.1 * i, shape, w, w, mat)
            for i, (kind, shape, w, mat) in enumerate(PROP_KINDS)
        )
        actors = (
            ActorView(
                PLAYER_ID,
                "You",
                "player",
                player_x + shift,
                150,
                0,
                30,
                60,
                1,
                "walk",
                True,
                (60, 90, 170),
                is_player=True,
            ),  # fmt: skip
            ActorView(
                BESS_ID,
                "Bess",
                "baker",
                player_x + 200 + shift,
                150,
                0,
                30,
                60,
                -1,
                "idle",
                True,
                (196, 84, 70),
            ),  # fmt: skip
            ActorView(
                11,
                "Tom",
                "smith",
                player_x - 250,
                150,
                1.5,
                30,
                60,
                1,
                "down",
                False,
                (80, 130, 190),
            ),  # fmt: skip
        )
        errands = (ErrandView("apples", BESS_ID, "Apples", 3, 5, False),)
        return WorldSnapshot(tick, PLAYER_ID, props, actors, errands)

    return build


@pytest.fixture
def full_hud() -> HudView:
    """A HUD with every element switched on."""
    return HudView(
        fps=59.7,
        tick_ms=1.3,
        frame_ms=tuple(16.0 + (20.0 if i % 30 == 0 else 0.0) for i in range(200)),
        show_graph=True,
        show_help=True,
        paused=True,
        mode="async",
        load=LoadView(0.4, "loading weights", "loading"),
        ai_stats=(("tokens/s", "61"), ("hit rate", "72%")),
        chat=ChatView("Bess", "hello", True),
        toast="Screenshot saved",
        pause_items=("Resume", "Quit"),
        hint="F1: help",
        hint_alpha=0.5,
    )


@pytest.fixture
def bubbles() -> tuple[BubbleView, ...]:
    """Three bubbles: a finished line, a streaming one and a thinking one."""
    return (
        BubbleView(BESS_ID, "Fresh bread! Mind the apples, dear.", 1.0),
        BubbleView(11, "Who threw that", 0.8, streaming=True),
        BubbleView(PLAYER_ID, "", 1.0, streaming=True, kind="thinking"),
    )
