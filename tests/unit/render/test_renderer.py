"""The renderer end to end on synthetic snapshots, drawn off-screen."""

from __future__ import annotations

import math
from itertools import pairwise
from pathlib import Path

import pygame
import pytest

from game.render.renderer import Renderer, screenshot
from game.render.shapes import blend, lerp_angle
from game.sim.snapshot import LevelView
from game.ui.views import BubbleView, HudView
from tests.unit.render.scene import BESS_ID, PLAYER_ID, SCREEN, WorldFactory


def test_frames_render_and_save_a_screenshot(
    level: LevelView,
    make_world: WorldFactory,
    screen: pygame.Surface,
    bubbles: tuple[BubbleView, ...],
    full_hud: HudView,
    tmp_path: Path,
) -> None:
    renderer = Renderer(level)
    prev, curr = make_world(1), make_world(2, shift=4.0)
    for i in range(5):
        renderer.draw(screen, prev, curr, i / 4, bubbles, full_hud, 1 / 60)
    path = renderer.screenshot(screen, tmp_path / "shots" / "frame.png")
    assert path.is_file()
    image = pygame.image.load(str(path))
    assert image.get_size() == SCREEN
    colours = {
        tuple(image.get_at((x, y)))
        for x in range(0, SCREEN[0], 37)
        for y in range(0, SCREEN[1], 23)
    }
    assert len(colours) > 20


def test_screenshot_helper_creates_missing_folders(screen: pygame.Surface, tmp_path: Path) -> None:
    screen.fill((10, 20, 30))
    assert screenshot(screen, tmp_path / "a" / "b.png").is_file()


def test_bubble_pixels_appear_above_the_speaker(
    level: LevelView, make_world: WorldFactory, screen: pygame.Surface
) -> None:
    world = make_world()
    hud = HudView(fps=60, tick_ms=1.0, mode="")
    renderer = Renderer(level)
    renderer.draw(screen, world, world, 1.0, [], hud, 1 / 60)
    without = screen.copy()
    line = BubbleView(BESS_ID, "Mind the apples!", 1.0)
    renderer.draw(screen, world, world, 1.0, [line], hud, 0.0)
    bess = next(a for a in world.actors if a.id == BESS_ID)
    sx, sy = renderer.camera.world_to_screen(bess.x, bess.y + bess.h / 2)
    (rect,) = renderer.last_bubble_rects
    assert rect.bottom < sy
    assert sy - rect.bottom < 80
    assert rect.left < sx < rect.right
    changed = sum(
        1
        for x in range(rect.left, rect.right, 3)
        for y in range(rect.top, rect.bottom, 3)
        if screen.get_at((x, y)) != without.get_at((x, y))
    )
    assert changed > 0.5 * (rect.width // 3) * (rect.height // 3)


def test_camera_follows_the_player(
    level: LevelView, make_world: WorldFactory, screen: pygame.Surface
) -> None:
    renderer = Renderer(level)
    hud = HudView(fps=60, tick_ms=1.0)
    world = make_world(player_x=3000.0)
    renderer.draw(screen, world, world, 1.0, [], hud, 1 / 60)
    player = next(a for a in world.actors if a.id == PLAYER_ID)
    sx, sy = renderer.camera.world_to_screen(player.x, player.y)
    assert screen.get_rect().collidepoint(sx, sy)


def test_window_resize_is_picked_up_from_the_surface(
    level: LevelView, make_world: WorldFactory, full_hud: HudView
) -> None:
    renderer = Renderer(level)
    world = make_world()
    for size in [(1280, 720), (800, 600), (1920, 1080)]:
        surface = pygame.Surface(size)
        renderer.draw(surface, world, world, 1.0, [], full_hud, 1 / 60)
        assert renderer.camera.viewport == size


def test_unchanged_hud_text_is_not_rendered_again(
    level: LevelView,
    make_world: WorldFactory,
    screen: pygame.Surface,
    bubbles: tuple[BubbleView, ...],
    full_hud: HudView,
) -> None:
    renderer = Renderer(level)
    world = make_world()
    for _ in range(3):
        renderer.draw(screen, world, world, 1.0, bubbles, full_hud, 1 / 60)
    renders = renderer.text.renders
    layouts = renderer.bubbles.layouts_made
    for _ in range(30):
        renderer.draw(screen, world, world, 1.0, bubbles, full_hud, 1 / 60)
    assert renderer.text.renders == renders
    assert renderer.bubbles.layouts_made == layouts


def test_streaming_text_is_laid_out_once_per_change(
    level: LevelView, make_world: WorldFactory, screen: pygame.Surface
) -> None:
    renderer = Renderer(level)
    world = make_world()
    hud = HudView(fps=60, tick_ms=1.0)
    words = ["Who", "threw", "that", "crate", "at", "my", "anvil?"]
    for n in range(1, len(words) + 1):
        line = BubbleView(BESS_ID, " ".join(words[:n]), 1.0, streaming=n < len(words))
        for _ in range(3):
            renderer.draw(screen, world, world, 1.0, [line], hud, 1 / 60)
    assert renderer.bubbles.layouts_made == len(words)


def test_the_renderer_copes_with_an_empty_world(level: LevelView, screen: pygame.Surface) -> None:
    from game.sim.snapshot import WorldSnapshot

    empty = WorldSnapshot(0, -1, (), (), ())
    Renderer(level).draw(screen, empty, empty, 0.5, [BubbleView(3, "hm", 1.0)], HudView(0, 0), 0.0)


@pytest.mark.parametrize(
    ("a", "b", "t", "expected"),
    [
        (0.0, 1.0, 0.5, 0.5),
        (math.radians(350), math.radians(10), 0.5, math.radians(360)),
        (math.radians(10), math.radians(350), 0.5, 0.0),
        (0.0, math.pi * 4 + 0.2, 1.0, 0.2),
    ],
)
def test_angles_blend_the_short_way_round(a: float, b: float, t: float, expected: float) -> None:
    got = lerp_angle(a, b, t)
    assert math.cos(got) == pytest.approx(math.cos(expected), abs=1e-9)
    assert math.sin(got) == pytest.approx(math.sin(expected), abs=1e-9)


def test_blend_matches_by_id_and_keeps_newcomers(make_world: WorldFactory) -> None:
    prev, curr = make_world(1), make_world(2, shift=10.0)
    newcomer = curr.props[0].__class__(999, "apple", 5.0, 6.0, 0.0, "circle", 14, 14, "fruit")
    blended = blend(prev.props, (*curr.props, newcomer), 0.5)
    assert blended[0][1] == pytest.approx(prev.props[0].x + 5.0)
    assert blended[-1][1:3] == (5.0, 6.0)


def test_ground_below_zero_is_shown_with_earth_beneath(screen: pygame.Surface) -> None:
    from game.sim.snapshot import ActorView, StaticShapeView, WorldSnapshot

    ground = ((0.0, 20.0), (1500.0, -18.0), (4000.0, 0.0))
    level = LevelView(
        4000,
        1400,
        tuple(StaticShapeView("segment", (a, b), 4.0, "grass") for a, b in pairwise(ground)),
        (),
        (),
    )
    player = ActorView(PLAYER_ID, "You", "player", 1500, 12, 0, 30, 60, 1, "idle", True,
                       (60, 90, 170), is_player=True)  # fmt: skip
    world = WorldSnapshot(1, PLAYER_ID, (), (player,), ())
    renderer = Renderer(level)
    renderer.draw(screen, world, world, 1.0, [], HudView(60, 1.0, mode=""), 1 / 60)
    assert renderer.camera.bottom < -18
    _, ground_y = renderer.camera.world_to_screen(1500, -18)
    assert ground_y < SCREEN[1] - 100  # earth visible below the lowest ground
    _, feet_y = renderer.camera.world_to_screen(1500, 12 - 30)
    assert 0 < feet_y < SCREEN[1]


def test_bubbles_keep_off_the_sign_boards(
    level: LevelView, make_world: WorldFactory, screen: pygame.Surface
) -> None:
    hud = HudView(fps=60, tick_ms=1.0, mode="")
    renderer = Renderer(level)
    for x in range(300, 3800, 150):
        world = make_world(player_x=float(x))
        lines = [BubbleView(a.id, "A long line that needs room to sit.", 1.0) for a in world.actors]
        for _ in range(3):
            renderer.draw(screen, world, world, 1.0, lines, hud, 1 / 60)
        signs = renderer._visible_signs(*screen.get_size())
        for rect in renderer.last_bubble_rects:
            assert rect.collidelist(signs) < 0, (x, rect, signs)
    assert renderer._signs  # the level's sign boards were found
