"""Speech bubbles: stacking without overlap, cached layouts, drawing near the speaker."""

from __future__ import annotations

import pygame
from hypothesis import given, settings
from hypothesis import strategies as st

from game.render.bubble_artist import GAP, THINKING_SIZE, BubbleArtist, stack_rects
from game.render.text import TextCache
from game.ui.views import BubbleView

BOUNDS = pygame.Rect(4, 4, 1272, 712)

bubble_rects = st.builds(
    pygame.Rect,
    st.integers(min_value=-300, max_value=1500),
    st.integers(min_value=-300, max_value=900),
    st.integers(min_value=40, max_value=260),
    st.integers(min_value=30, max_value=70),
)


@settings(max_examples=300, deadline=None)
@given(desired=st.lists(bubble_rects, min_size=1, max_size=5))
def test_stacked_bubbles_never_overlap_and_stay_on_screen(desired: list[pygame.Rect]) -> None:
    placed = stack_rects(desired, BOUNDS)
    assert len(placed) == len(desired)
    for rect, want in zip(placed, desired, strict=True):
        assert rect.size == want.size
        assert BOUNDS.contains(rect)
    for i, a in enumerate(placed):
        for b in placed[i + 1 :]:
            assert not a.colliderect(b), (a, b)
            assert not a.inflate(2 * GAP - 2, 2 * GAP - 2).colliderect(b)  # a gap is kept


@given(desired=st.lists(bubble_rects, min_size=1, max_size=5))
def test_the_first_bubble_keeps_its_spot(desired: list[pygame.Rect]) -> None:
    placed = stack_rects(desired, BOUNDS)
    assert placed[0] == desired[0].clamp(BOUNDS)


def test_a_later_overlapping_bubble_is_pushed_up() -> None:
    first = pygame.Rect(500, 400, 200, 60)
    second = pygame.Rect(560, 420, 200, 60)
    placed = stack_rects([first, second], BOUNDS)
    assert placed[0] == first
    assert placed[1].bottom <= first.top - GAP
    assert placed[1].x == second.x


def test_stacking_is_stable_from_frame_to_frame() -> None:
    desired = [pygame.Rect(500, 400, 200, 60), pygame.Rect(560, 420, 200, 60)]
    assert stack_rects(desired, BOUNDS) == stack_rects(desired, BOUNDS)


def test_layout_is_cached_until_the_text_changes() -> None:
    artist = BubbleArtist(TextCache())
    first = artist.layout("Hello there", "line")
    assert artist.layout("Hello there", "line") is first
    assert artist.layouts_made == 1
    assert artist.layout("Hello there!", "line") is not first
    assert artist.layout("Hello there", "chat") is not first
    assert artist.layouts_made == 3


def test_long_lines_wrap_within_the_bubble_width() -> None:
    artist = BubbleArtist(TextCache(), max_width=260)
    made = artist.layout("word " * 60, "line")
    assert made.size[0] <= 260
    assert made.size[1] > 3 * made.line_height


def test_thinking_bubbles_have_a_fixed_size() -> None:
    artist = BubbleArtist(TextCache())
    assert artist.layout("", "thinking").size == THINKING_SIZE


def test_bubble_is_drawn_above_its_speaker_and_skipped_without_one() -> None:
    surface = pygame.Surface((1280, 720))
    surface.fill((0, 0, 0))
    artist = BubbleArtist(TextCache())
    rects = artist.draw(
        surface,
        [BubbleView(7, "Hi!", 1.0), BubbleView(99, "nobody here", 1.0)],
        {7: (640.0, 400.0)},
        time=0.0,
    )
    assert len(rects) == 1
    rect = rects[0]
    assert rect.bottom < 400
    assert rect.left < 640 < rect.right
    assert surface.get_at(rect.center)[:3] != (0, 0, 0)
    assert surface.get_at((640, 395))[:3] != (0, 0, 0)  # the tail reaches down to the speaker


def test_a_faded_bubble_is_fainter() -> None:
    artist = BubbleArtist(TextCache())
    solid, faint = pygame.Surface((400, 300)), pygame.Surface((400, 300))
    solid.fill((0, 0, 0))
    faint.fill((0, 0, 0))
    (rect,) = artist.draw(solid, [BubbleView(1, "Hi!", 1.0)], {1: (200.0, 250.0)}, 0.0)
    artist.draw(faint, [BubbleView(1, "Hi!", 0.3)], {1: (200.0, 250.0)}, 0.0)
    point = (rect.left + 6, rect.centery)
    assert sum(faint.get_at(point)[:3]) < sum(solid.get_at(point)[:3])


def test_bubbles_keep_clear_of_hud_panels_when_there_is_room() -> None:
    stats_panel = pygame.Rect(10, 10, 300, 320)
    stacked = [pygame.Rect(30, 370, 220, 50), pygame.Rect(130, 360, 220, 50)]
    placed = stack_rects(stacked, BOUNDS, obstacles=[stats_panel])
    assert len(placed) == 2
    for rect in placed:
        assert not rect.colliderect(stats_panel)
    assert not placed[0].colliderect(placed[1])
    assert placed[1].bottom > stats_panel.bottom  # slid sideways rather than hidden above
