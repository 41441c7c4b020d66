"""The HUD: the AI mode is always named, the F3 panel shows its rows, the load bar fills."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pygame
import pytest

from game.render.hud import BUDGET_LINE, HUD_BAD, HUD_GOOD, Hud, mode_label
from game.render.palette import EARTH
from game.render.scenery import build_level_layer
from game.render.text import TextCache
from game.sim.snapshot import DecorView, LevelView, WorldSnapshot
from game.ui.views import HudView, LoadView

EMPTY = WorldSnapshot(0, 0, (), (), ())


def _count(surface: pygame.Surface, color: tuple[int, int, int], area: pygame.Rect) -> int:
    return sum(
        1
        for x in range(area.left, area.right)
        for y in range(area.top, area.bottom)
        if tuple(surface.get_at((x, y)))[:3] == color
    )


@pytest.mark.parametrize(
    ("mode", "label"),
    [("async", "AI: async"), ("sync", "AI: SYNC (naive)"), ("off", "AI: off")],
)
def test_each_mode_has_its_own_label(mode: str, label: str) -> None:
    assert mode_label(mode)[0] == label


def test_an_unknown_mode_is_still_named() -> None:
    assert mode_label("remote")[0] == "AI: remote"


def test_sync_mode_is_drawn_in_the_warning_colour(screen: pygame.Surface) -> None:
    hud = Hud(TextCache())
    panel = pygame.Rect(0, 0, 360, 90)
    for mode, ink in (("sync", HUD_BAD), ("async", HUD_GOOD)):
        screen.fill((0, 0, 0))
        hud.draw(screen, HudView(fps=60, tick_ms=1.0, mode=mode), EMPTY, 1.0)
        assert _count(screen, ink, panel) > 40, mode


def test_the_f3_panel_draws_every_stats_row(screen: pygame.Surface) -> None:
    text = TextCache()
    hud = Hud(text)
    rows = tuple((f"row {i}", f"{i} ms") for i in range(6))
    view = HudView(fps=60, tick_ms=1.0, frame_ms=(16.0,) * 100, show_graph=True, ai_stats=rows)
    hud.draw(screen, view, EMPTY, 1.0)
    status, graph, stats = hud.rects[:3]
    assert status.bottom <= graph.top < graph.bottom <= stats.top
    assert stats.height >= 6 * text.line_height(13)
    # The 60 Hz budget line crosses the graph.
    assert _count(screen, BUDGET_LINE, graph) > graph.width // 2
    hud.draw(screen, dataclasses.replace(view, show_graph=False), EMPTY, 2.0)
    assert len(hud.rects) == 1  # the status panel alone


def test_the_loading_bar_fills_with_the_fraction(screen: pygame.Surface) -> None:
    hud = Hud(TextCache())
    filled: list[int] = []
    for fraction in (0.25, 0.75):
        screen.fill((0, 0, 0))
        load = LoadView(fraction, "loading model", "loading")
        hud.draw(screen, HudView(fps=60, tick_ms=1.0, mode="", load=load), EMPTY, 1.0)
        bar = hud.rects[-1]
        assert bar.centerx == screen.get_width() // 2
        filled.append(_count(screen, HUD_GOOD, bar))
    assert filled[1] > 2.5 * filled[0] > 0


def test_no_loading_bar_once_the_model_is_ready(screen: pygame.Surface) -> None:
    hud = Hud(TextCache())
    load = LoadView(1.0, "ready", "ready")
    hud.draw(screen, HudView(fps=60, tick_ms=1.0, mode="", load=load), EMPTY, 1.0)
    assert len(hud.rects) == 1


def _pixels(level: LevelView) -> bytes:
    return pygame.image.tobytes(build_level_layer(level, 1.0, TextCache()), "RGB")


def test_a_signpost_repeating_a_zone_name_is_left_out(level: LevelView) -> None:
    zone = level.zones[0]
    twin = DecorView("sign", zone.x + 200, 120, 70, 10, "wood", zone.label)
    other = DecorView("sign", zone.x + 200, 120, 70, 10, "wood", "Elsewhere")
    assert _pixels(dataclasses.replace(level, decor=(*level.decor, twin))) == _pixels(level)
    assert _pixels(dataclasses.replace(level, decor=(*level.decor, other))) != _pixels(level)


def test_a_sunken_basket_shows_in_the_ground(level: LevelView) -> None:
    # The ground's top is at y = 124 here; the basket reaches 64 units below it.
    basket = DecorView("basket", 3500, 60, 44, 64, "wicker")
    with_basket = dataclasses.replace(level, decor=(*level.decor, basket))
    below_ground = (3522, round(level.height - 90))
    plain = build_level_layer(level, 1.0, TextCache())
    layer = build_level_layer(with_basket, 1.0, TextCache())
    assert tuple(plain.get_at(below_ground))[:3] == EARTH
    assert tuple(layer.get_at(below_ground))[:3] != EARTH


def test_the_loading_panel_keeps_clear_of_the_hint_and_the_errands(
    screen: pygame.Surface, make_world: Callable[..., WorldSnapshot]
) -> None:
    world = make_world()
    assert world.errands
    hud = Hud(TextCache())
    load = LoadView(0.5, "loading model", "loading")
    view = HudView(fps=60, tick_ms=1.0, mode="async", load=load, hint="F1: help", hint_alpha=1.0)
    for width in (1280, 800):
        surface = pygame.Surface((width, 720))
        hud.draw(surface, view, world, 1.0)
        panel = hud.rects[-1]  # the loading panel is drawn last
        others = hud.rects[:-1]
        assert len(others) == 3  # status, errands, hint
        assert panel.collidelist(others) == -1, (width, panel, others)


def test_the_pause_menu_has_a_backdrop_behind_its_text(screen: pygame.Surface) -> None:
    hud = Hud(TextCache())
    view = HudView(fps=60, tick_ms=1.0, paused=True, pause_items=("Resume", "Quit"))
    hud.draw(screen, view, EMPTY, 1.0)
    backdrop = hud.rects[0]
    assert len(hud.menu_rects) == 2
    for item in hud.menu_rects:
        assert backdrop.contains(item)
    assert backdrop.top < screen.get_height() // 2 - 90 - 20  # the title sits on it too
