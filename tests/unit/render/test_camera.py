"""Camera: the world-to-screen transform, following and clamping."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from game.render.camera import Camera

coords = st.floats(min_value=-5000, max_value=5000, allow_nan=False)


@given(x=coords, y=coords, zoom=st.sampled_from([0.5, 1.0, 1.5, 2.0]))
def test_screen_to_world_inverts_world_to_screen(x: float, y: float, zoom: float) -> None:
    camera = Camera(4000, 1000, (1280, 720), zoom=zoom)
    camera.snap_to(1234.5, 456.7)
    sx, sy = camera.world_to_screen(x, y)
    back = camera.screen_to_world(sx, sy)
    assert back == pytest.approx((x, y), abs=1e-6)


def test_y_up_in_the_world_is_up_on_screen() -> None:
    camera = Camera(4000, 1000, (1280, 720))
    camera.snap_to(2000, 500)
    _, low = camera.world_to_screen(2000, 400)
    _, high = camera.world_to_screen(2000, 600)
    assert high < low
    assert camera.world_to_screen(2000, 500) == pytest.approx((640, 360))


def test_x_grows_to_the_right() -> None:
    camera = Camera(4000, 1000, (1280, 720))
    camera.snap_to(2000, 500)
    assert camera.world_to_screen(2100, 500)[0] > camera.world_to_screen(1900, 500)[0]


@pytest.mark.parametrize("target", [(-900, -900), (9000, 9000), (-50, 800), (3990, 10)])
def test_view_stays_inside_the_level(target: tuple[float, float]) -> None:
    camera = Camera(4000, 1000, (1280, 720))
    for _ in range(240):
        camera.follow(*target, 1 / 60)
    left, bottom, right, top = camera.visible_world()
    assert left >= -1e-9
    assert bottom >= -1e-9
    assert right <= 4000 + 1e-9
    assert top <= 1000 + 1e-9


def test_level_smaller_than_the_screen_is_centred() -> None:
    camera = Camera(800, 400, (1280, 720))
    camera.snap_to(0, 0)
    assert (camera.x, camera.y) == (400, 200)


def test_first_follow_snaps_then_follow_eases_without_overshoot() -> None:
    camera = Camera(4000, 1000, (1280, 720))
    camera.follow(1000, 400, 1 / 60)
    assert (camera.x, camera.y) == (1000, 400)
    xs = []
    for _ in range(120):
        camera.follow(1600, 400, 1 / 60)
        xs.append(camera.x)
    assert xs[0] < 1100  # eased, not jumped
    assert all(b >= a for a, b in zip(xs, xs[1:], strict=False))  # monotonic: no overshoot
    assert xs[-1] == pytest.approx(1600, abs=1.0)


def test_follow_is_stable_for_a_long_frame() -> None:
    camera = Camera(4000, 1000, (1280, 720))
    camera.follow(1000, 400, 1 / 60)
    camera.follow(2000, 400, 0.25)  # a hitch: still no overshoot past the target
    assert 1000 < camera.x <= 2000


def test_resize_reclamps_and_changes_the_visible_area() -> None:
    camera = Camera(4000, 1000, (1280, 720))
    camera.snap_to(3900, 500)
    camera.set_viewport((1920, 1080))
    left, bottom, right, top = camera.visible_world()
    assert right - left == pytest.approx(1920)
    assert right <= 4000
    assert top - bottom == pytest.approx(1080)
    assert camera.y == 500  # taller than the level: centred


def test_origin_is_whole_pixels() -> None:
    camera = Camera(4000, 1000, (1280, 720))
    camera.snap_to(1234.37, 456.71)
    ox, oy = camera.origin
    assert isinstance(ox, int)
    assert isinstance(oy, int)
