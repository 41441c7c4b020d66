"""World-space overlays drawn over the scene: the grab highlight, the throw arc, name tags
that never merge, markers for speakers off screen, and the burst for a finished errand."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pygame

from game.render.palette import EMOTE_BG, EMOTE_INK, PLAYER_MARKER, TAG_BG, TAG_TEXT, Rgb, mix
from game.render.text import TextCache
from game.sim.snapshot import AimView, Vec
from game.ui.views import CheerView

ToScreen = Callable[[float, float], Vec]

HIGHLIGHT: Rgb = (255, 236, 120)
ARC_LOW: Rgb = (255, 244, 200)
ARC_HIGH: Rgb = (255, 120, 70)
EDGE_PAD = 10
TAG_GAP = 2
CONFETTI: tuple[Rgb, ...] = (
    (255, 214, 64),
    (120, 200, 255),
    (255, 120, 140),
    (140, 230, 140),
    (250, 250, 250),
)


def draw_highlight(
    surface: pygame.Surface, sx: float, sy: float, size: float, time: float, text: TextCache
) -> None:
    """A pulsing ring around the prop a grab would take, with the key that takes it."""
    radius = size / 2 + 6 + 2 * math.sin(time * 6.0)
    pygame.draw.circle(surface, (40, 30, 10), (sx, sy), radius + 1, 4)
    pygame.draw.circle(surface, HIGHLIGHT, (sx, sy), radius, 2)
    key = text.render("E", 12, (30, 24, 10), bold=True)
    plate = key.get_rect(midbottom=(round(sx), round(sy - radius - 3))).inflate(8, 2)
    pygame.draw.rect(surface, HIGHLIGHT, plate, border_radius=4)
    surface.blit(key, key.get_rect(center=plate.center))


def draw_aim(surface: pygame.Surface, aim: AimView, to_screen: ToScreen) -> None:
    """The dotted path of a throw (warmer as it charges) or of a put-down, and where it ends."""
    points = [to_screen(x, y) for x, y in aim.points]
    if len(points) < 2:
        return
    color = mix(ARC_LOW, ARC_HIGH, aim.charge) if aim.charge > 0 else (235, 235, 235)
    dot = 3.0 if aim.charge > 0 else 2.0
    for p in points[1:-1]:
        pygame.draw.circle(surface, (30, 30, 30), p, dot + 1)
        pygame.draw.circle(surface, color, p, dot)
    ex, ey = points[-1]
    pygame.draw.line(surface, (30, 30, 30), (ex - 7, ey - 7), (ex + 7, ey + 7), 5)
    pygame.draw.line(surface, (30, 30, 30), (ex - 7, ey + 7), (ex + 7, ey - 7), 5)
    pygame.draw.line(surface, color, (ex - 6, ey - 6), (ex + 6, ey + 6), 3)
    pygame.draw.line(surface, color, (ex - 6, ey + 6), (ex + 6, ey - 6), 3)
    if aim.charge > 0:
        _draw_charge(surface, points[0], aim.charge, color)


def _draw_charge(surface: pygame.Surface, at: Vec, charge: float, color: Rgb) -> None:
    bar = pygame.Rect(0, 0, 40, 6)
    bar.midbottom = (round(at[0]), round(at[1]) - 26)
    pygame.draw.rect(surface, (30, 30, 30), bar.inflate(2, 2), border_radius=3)
    filled = bar.copy()
    filled.width = max(2, round(bar.width * charge))
    pygame.draw.rect(surface, color, filled, border_radius=3)


@dataclass(frozen=True, slots=True)
class PlacedTag:
    """A name tag's text and where it goes on screen."""

    text: str
    rect: pygame.Rect


def layout_tags(
    wanted: Sequence[tuple[str, float, float]], measure: Callable[[str], tuple[int, int]]
) -> list[PlacedTag]:
    """Place name tags (name, centre x, bottom y) so that no two overlap.

    A tag that would touch one already placed first rises above it (up to two rows); if
    that still collides it shortens to its initials and rises as far as it must. Left to
    right, so the same crowd gives the same layout every frame.
    """
    rects: list[pygame.Rect] = []
    order = sorted(range(len(wanted)), key=lambda i: (wanted[i][1], i))
    out: dict[int, PlacedTag] = {}
    for i in order:
        name, cx, bottom = wanted[i]
        tag = _place(name, cx, bottom, rects, measure, rises=2)
        if tag is None:
            short = _initials(name)
            tag = _place(short, cx, bottom, rects, measure, rises=len(rects) + 1)
        assert tag is not None  # each rise clears one placed tag, so this always fits
        rects.append(tag.rect)
        out[i] = tag
    return [out[i] for i in range(len(wanted))]


def _place(
    name: str,
    cx: float,
    bottom: float,
    taken: Sequence[pygame.Rect],
    measure: Callable[[str], tuple[int, int]],
    rises: int,
) -> PlacedTag | None:
    w, h = measure(name)
    rect = pygame.Rect(0, 0, w, h)
    rect.midbottom = (round(cx), round(bottom))
    for _ in range(rises + 1):
        hit = rect.inflate(2 * TAG_GAP, 2 * TAG_GAP).collidelist(list(taken))
        if hit < 0:
            return PlacedTag(name, rect)
        rect.bottom = taken[hit].top - TAG_GAP
    return None


def _initials(name: str) -> str:
    parts = name.split()
    return "".join(p[0] for p in parts) + "." if parts else "?"


def draw_edge_marker(
    surface: pygame.Surface,
    name: str,
    sx: float,
    sy: float,
    text: TextCache,
    taken: list[pygame.Rect],
) -> pygame.Rect:
    """A small marker at the screen edge, pointing at a speaker off screen, with their name.

    Markers already drawn this frame (``taken``) push it down; its rect is added to them.
    """
    width, height = surface.get_size()
    glyphs = text.render(name, 13, TAG_TEXT, bold=True)
    left, right = sx < 0, sx > width
    x = EDGE_PAD if left else (width - EDGE_PAD if right else min(max(sx, 60), width - 60))
    y = min(max(sy, 60), height - 60)
    plate = glyphs.get_rect().inflate(26, 8)
    if left:
        plate.midleft = (round(x), round(y))
    elif right:
        plate.midright = (round(x), round(y))
    else:
        plate.center = (round(x), round(y))
    while plate.inflate(0, 4).collidelist(taken) >= 0 and plate.bottom < height:
        plate.top = taken[plate.inflate(0, 4).collidelist(taken)].bottom + 4
    taken.append(plate)
    pygame.draw.rect(surface, TAG_BG, plate, border_radius=8)
    pygame.draw.rect(surface, PLAYER_MARKER, plate, 1, border_radius=8)
    tip = plate.left + 4 if left else plate.right - 4
    base = tip + 8 if left else tip - 8
    cy = plate.centery
    if left or right:
        pygame.draw.polygon(surface, PLAYER_MARKER, [(tip, cy), (base, cy - 5), (base, cy + 5)])
    text_x = plate.left + 16 if left else plate.left + 8
    surface.blit(glyphs, (text_x, plate.top + 4))
    return plate


def draw_cheer(surface: pygame.Surface, cheer: CheerView, anchor: Vec) -> None:
    """Confetti bursting from a villager whose errand was just finished."""
    t = cheer.progress
    if t >= 1.0:
        return
    ax, ay = anchor
    gravity = 260.0
    for i in range(28):
        # A fixed spread per piece (no randomness), so every burst reads the same.
        angle = math.pi * (0.15 + 0.7 * ((i * 37) % 28) / 27)
        speed = 140.0 + (i * 53) % 90
        s = t * 1.6
        x = ax + math.cos(angle) * speed * s
        y = ay - math.sin(angle) * speed * s + gravity * s * s
        size = 3 + i % 3
        color = CONFETTI[i % len(CONFETTI)]
        pygame.draw.rect(surface, color, (round(x), round(y), size, size + 1))
    star = 1.0 - t
    pygame.draw.circle(surface, PLAYER_MARKER, (ax, ay - 22), 5 + 6 * star, 2)


#: The glyph over a villager while an action runs (DejaVu Sans has them all).
EMOTES = {
    "follow": "\u2665",  # a heart: coming along with you
    "fetch": "\u261b",  # a pointing hand: fetching something
    "put": "\u261b",
    "show_way": "\u279c",  # an arrow: this way
    "call": "\u266a",  # a note: calling someone over
    "come": "\u2026",  # on the way over
    "turn_away": "\u2717",  # a cross: not now
}


def draw_emote(
    surface: pygame.Surface, text: TextCache, action: str, at: Vec
) -> pygame.Rect | None:
    """A small round bubble with the action's glyph, left-middle at ``at``."""
    glyph = EMOTES.get(action)
    if glyph is None:
        return None
    ink = text.render(glyph, 13, EMOTE_INK, bold=True)
    radius = max(ink.get_width(), ink.get_height()) // 2 + 3
    cx, cy = round(at[0]) + radius, round(at[1])
    pygame.draw.circle(surface, EMOTE_BG, (cx, cy), radius)
    pygame.draw.circle(surface, EMOTE_INK, (cx, cy), radius, 1)
    surface.blit(ink, ink.get_rect(center=(cx, cy)))
    return pygame.Rect(cx - radius, cy - radius, radius * 2, radius * 2)
