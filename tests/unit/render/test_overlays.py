"""Bubbles that never pile up, name tags that never merge, markers for speakers off screen."""

from __future__ import annotations

import pygame

from game.render.bubble_choice import PER_AREA, BubbleCrowd
from game.render.overlays import draw_edge_marker, layout_tags
from game.render.text import TextCache
from game.ui.views import BubbleView


def measure(name: str) -> tuple[int, int]:
    return (8 * len(name) + 12, 18)


def test_clustered_name_tags_never_overlap_and_stay_near_their_villagers() -> None:
    names = ["Corvin", "Marta", "Old Wen", "Pip", "Brann"]
    wanted = [(name, 400.0 + 9.0 * i, 300.0) for i, name in enumerate(names)]
    placed = layout_tags(wanted, measure)
    rects = [t.rect for t in placed]
    for i, a in enumerate(rects):
        assert all(not a.colliderect(b) for b in rects[i + 1 :]), (a, rects)
    for (_, cx, _), tag in zip(wanted, placed, strict=True):
        assert abs(tag.rect.centerx - cx) <= 1
        assert tag.rect.bottom <= 300
    # Tags apart from each other keep their full names where they were asked.
    apart = layout_tags([("Marta", 100.0, 300.0), ("Odo", 400.0, 300.0)], measure)
    assert [t.text for t in apart] == ["Marta", "Odo"]
    assert [t.rect.bottom for t in apart] == [300, 300]


def test_at_most_two_bubbles_per_area_and_the_rest_fade_out() -> None:
    crowd = BubbleCrowd()
    anchors = {i: (300.0 + 20.0 * i, 200.0) for i in range(1, 6)}
    anchors[9] = (900.0, 200.0)
    bubbles = [BubbleView(i, f"line {i}", 1.0) for i in (1, 2, 3, 4, 5, 9)]
    # Lines arrive one after another: the newest two in the cluster win.
    for i in range(len(bubbles)):
        crowd.select(bubbles[: i + 1], anchors, {}, now=float(i))
    shown, markers = crowd.select(bubbles, anchors, {}, now=10.0)
    near = {b.speaker_id for b in shown if b.speaker_id != 9}
    assert near == {4, 5}
    assert 9 in {b.speaker_id for b in shown}  # another area keeps its own bubble
    assert markers == []
    assert len(near) == PER_AREA


def test_a_crowded_out_bubble_fades_rather_than_vanishing_at_once() -> None:
    crowd = BubbleCrowd()
    anchors = {1: (300.0, 200.0), 2: (310.0, 200.0), 3: (320.0, 200.0)}
    for i in (1, 2):
        crowd.select([BubbleView(j, f"l{j}", 1.0) for j in range(1, i + 1)], anchors, {}, i)
    bubbles = [BubbleView(j, f"l{j}", 1.0) for j in (1, 2, 3)]
    shown, _ = crowd.select(bubbles, anchors, {}, now=3.0)
    first = {b.speaker_id: b.alpha for b in shown}
    assert first[1] == 1.0  # it only starts fading now
    shown, _ = crowd.select(bubbles, anchors, {}, now=3.2)
    assert 0.0 < {b.speaker_id: b.alpha for b in shown}[1] < 1.0
    shown, _ = crowd.select(bubbles, anchors, {}, now=4.0)
    assert 1 not in {b.speaker_id for b in shown}


def test_a_speaker_off_screen_gets_a_marker_not_a_bubble() -> None:
    crowd = BubbleCrowd()
    offscreen = {7: ("Sela", 1500.0, 300.0)}
    shown, markers = crowd.select([BubbleView(7, "Halt!", 1.0)], {}, offscreen, 0.0)
    assert shown == []
    assert markers == [("Sela", 1500.0, 300.0)]


def test_edge_markers_sit_at_the_edge_and_do_not_overlap() -> None:
    pygame.font.init()
    surface = pygame.Surface((800, 600))
    text = TextCache()
    taken: list[pygame.Rect] = []
    right = draw_edge_marker(surface, "Sela", 1500.0, 300.0, text, taken)
    again = draw_edge_marker(surface, "Corvin", 1400.0, 305.0, text, taken)
    left = draw_edge_marker(surface, "Odo", -300.0, 200.0, text, taken)
    assert right.right == 800 - 10
    assert left.left == 10
    assert not right.colliderect(again)
