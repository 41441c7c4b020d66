"""Moving things: props by material, villagers and the player, name tags; and the blend
between two snapshots.

Everything is drawn with a handful of ``pygame.draw`` calls per sprite straight onto the
screen; at 70 props and 7 actors that is cheaper than rotating cached sprite surfaces.
World angles are counter-clockwise with y up; on screen (y down) they turn clockwise.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

import pygame

from game.render.palette import (
    ATTITUDE_EDGE,
    INK,
    PLAYER_HAT,
    PLAYER_MARKER,
    SKIN,
    SKIN_OUTLINE,
    TAG_BG,
    TAG_TEXT,
    Rgb,
    darken,
    lighten,
    material,
)
from game.render.text import TextCache
from game.sim.snapshot import ActorView, PropView

logger = logging.getLogger(__name__)

Point = tuple[float, float]
TAU = 2 * math.pi
HELD_GLOW = (255, 236, 120)
STEM = (96, 64, 36)
LEAF = (92, 168, 64)


class _Placed(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def x(self) -> float: ...
    @property
    def y(self) -> float: ...
    @property
    def angle(self) -> float: ...


T = TypeVar("T", bound=_Placed)


def lerp_angle(a: float, b: float, t: float) -> float:
    """Blend angles along the shorter way round, so 359 degrees to 1 degree passes 0."""
    delta = (b - a + math.pi) % TAU - math.pi
    return a + delta * t


def blend(
    prev: Iterable[T], curr: Sequence[T], alpha: float
) -> list[tuple[T, float, float, float]]:
    """Pair items by id and blend position and angle by ``alpha`` (0 = prev, 1 = curr).

    Items new in ``curr`` are shown where they are; items gone from ``curr`` are dropped.
    Returns (current item, x, y, angle) in the order of ``curr``.
    """
    before = {item.id: item for item in prev}
    out: list[tuple[T, float, float, float]] = []
    for item in curr:
        old = before.get(item.id)
        if old is None:
            out.append((item, item.x, item.y, item.angle))
        else:
            out.append(
                (
                    item,
                    old.x + (item.x - old.x) * alpha,
                    old.y + (item.y - old.y) * alpha,
                    lerp_angle(old.angle, item.angle, alpha),
                )
            )
    return out


class _Frame:
    """Maps local offsets (world units, y up, around a body's centre) to screen pixels."""

    __slots__ = ("c", "s", "sx", "sy", "zoom")

    def __init__(self, sx: float, sy: float, angle: float, zoom: float) -> None:
        self.sx, self.sy, self.zoom = sx, sy, zoom
        self.c, self.s = math.cos(angle) * zoom, math.sin(angle) * zoom

    def __call__(self, lx: float, ly: float) -> Point:
        return (self.sx + lx * self.c - ly * self.s, self.sy - (lx * self.s + ly * self.c))

    def many(self, pts: Iterable[Point]) -> list[Point]:
        c, s, sx, sy = self.c, self.s, self.sx, self.sy
        return [(sx + x * c - y * s, sy - (x * s + y * c)) for x, y in pts]


def _box(w: float, h: float) -> list[Point]:
    return [(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]


def draw_prop(
    surface: pygame.Surface, prop: PropView, sx: float, sy: float, angle: float, zoom: float
) -> None:
    """Draw one prop centred on screen point (sx, sy), turned by world ``angle``."""
    f = _Frame(sx, sy, angle, zoom)
    look = material(prop.material)
    kind = prop.kind.lower()
    if prop.held:
        glow = max(prop.w, prop.h) * zoom * 0.5 + 4
        pygame.draw.circle(surface, HELD_GLOW, (sx, sy), glow, 2)
    if prop.shape == "circle":
        r = max(2.0, prop.w * zoom / 2)
        if kind == "apple":
            _draw_apple(surface, f, r, prop.w / 2)
        elif kind == "barrel":
            _draw_round_barrel(surface, f, r, prop.w / 2, look.fill, look.outline)
        else:
            _draw_ball(surface, f, r, prop.w / 2, look.fill, look.outline, look.detail)
        return
    if kind == "barrel":
        _draw_barrel(surface, f, prop.w, prop.h, look.fill, look.outline)
    elif kind == "crate":
        _draw_crate(surface, f, prop.w, prop.h, look.fill, look.outline, look.detail)
    else:
        pts = f.many(_box(prop.w, prop.h))
        pygame.draw.polygon(surface, look.fill, pts)
        pygame.draw.polygon(surface, look.outline, pts, 2)


def _draw_crate(
    surface: pygame.Surface, f: _Frame, w: float, h: float, fill: Rgb, outline: Rgb, plank: Rgb
) -> None:
    pygame.draw.polygon(surface, fill, f.many(_box(w, h)))
    inset = min(w, h) * 0.16
    iw, ih = w / 2 - inset, h / 2 - inset
    # Planks between the frame boards, then a diagonal brace: reads as "crate" at 20 px.
    for k in (-1 / 3, 1 / 3):
        pygame.draw.line(surface, plank, f(-iw, ih * 2 * k), f(iw, ih * 2 * k), 1)
    pygame.draw.polygon(surface, outline, f.many(_box(w - 2 * inset, h - 2 * inset)), 2)
    pygame.draw.line(surface, outline, f(-iw, -ih), f(iw, ih), 3)
    pygame.draw.polygon(surface, darken(outline, 0.8), f.many(_box(w, h)), 2)


def _draw_barrel(
    surface: pygame.Surface, f: _Frame, w: float, h: float, fill: Rgb, outline: Rgb
) -> None:
    bulge, hw, hh = w * 0.08, w / 2, h / 2
    outline_pts = [
        (-hw + bulge, -hh), (hw - bulge, -hh), (hw, -hh * 0.4), (hw, hh * 0.4),
        (hw - bulge, hh), (-hw + bulge, hh), (-hw, hh * 0.4), (-hw, -hh * 0.4),
    ]  # fmt: skip
    pts = f.many(outline_pts)
    pygame.draw.polygon(surface, darken(fill, 0.92), pts)
    for x in (-hw * 0.45, 0.0, hw * 0.45):
        pygame.draw.line(surface, darken(fill, 0.75), f(x, -hh), f(x, hh), 1)
    hoop = material("metal").outline
    for y in (-hh * 0.55, hh * 0.55):
        pygame.draw.line(surface, hoop, f(-hw, y), f(hw, y), 3)
    pygame.draw.polygon(surface, outline, pts, 2)


def _draw_round_barrel(
    surface: pygame.Surface, f: _Frame, r: float, wr: float, fill: Rgb, outline: Rgb
) -> None:
    centre = (f.sx, f.sy)
    pygame.draw.circle(surface, fill, centre, r)
    pygame.draw.circle(surface, material("metal").outline, centre, r * 0.68, 3)
    pygame.draw.line(surface, darken(fill, 0.7), f(-wr * 0.66, 0), f(wr * 0.66, 0), 2)
    pygame.draw.circle(surface, outline, centre, r, 2)


def _draw_ball(
    surface: pygame.Surface, f: _Frame, r: float, wr: float, fill: Rgb, outline: Rgb, stripe: Rgb
) -> None:
    centre = (f.sx, f.sy)
    pygame.draw.circle(surface, fill, centre, r)
    # A two-tone ball: the light half turns with the body, so rolling reads at a glance.
    half = [(wr * math.cos(a), wr * math.sin(a)) for a in (i * math.pi / 8 for i in range(9))]
    pygame.draw.polygon(surface, stripe, f.many(half))
    pygame.draw.circle(surface, outline, centre, r, 2)
    pygame.draw.circle(
        surface, lighten(fill, 0.7), (f.sx - r * 0.35, f.sy - r * 0.4), max(1.0, r * 0.18)
    )


def _draw_apple(surface: pygame.Surface, f: _Frame, r: float, wr: float) -> None:
    red = material("fruit")
    centre = (f.sx, f.sy)
    pygame.draw.circle(surface, red.fill, centre, r)
    pygame.draw.circle(surface, red.outline, centre, r, max(1, round(r * 0.15)))
    pygame.draw.line(
        surface, STEM, f(0, wr * 0.7), f(wr * 0.15, wr * 1.35), max(2, round(r * 0.22))
    )
    leaf = f.many([(wr * 0.15, wr * 1.05), (wr * 0.8, wr * 1.45), (wr * 0.55, wr * 1.0)])
    pygame.draw.polygon(surface, LEAF, leaf)
    pygame.draw.circle(surface, red.detail, (f.sx - r * 0.35, f.sy - r * 0.3), max(1.0, r * 0.22))


def draw_actor(
    surface: pygame.Surface, actor: ActorView, sx: float, sy: float, angle: float, zoom: float
) -> float:
    """Draw a villager or the player centred at (sx, sy); return the screen y of their top.

    Villagers wear their own colour; the player wears a hat and has a marker overhead.
    A knocked-down actor is drawn rotated by ``angle`` with crossed-out eyes.
    """
    f = _Frame(sx, sy, angle, zoom)
    w, h = actor.w, actor.h
    r = w * 0.42
    head = (0.0, h / 2 - r)
    leg_h = h * 0.2
    shoulder = h / 2 - 2 * r + 3
    tunic = actor.color
    dark = darken(tunic, 0.6)
    legs = darken(tunic, 0.45)
    for lx in (-w * 0.22, w * 0.22):
        pygame.draw.line(
            surface,
            legs,
            f(lx, -h / 2 + 1),
            f(lx, -h / 2 + leg_h + 2),
            max(2, round(w * 0.22 * zoom)),
        )
    cham = w * 0.22
    body = f.many([
        (-w / 2 + cham, shoulder), (w / 2 - cham, shoulder), (w / 2, shoulder - cham),
        (w / 2, -h / 2 + leg_h), (-w / 2, -h / 2 + leg_h), (-w / 2, shoulder - cham),
    ])  # fmt: skip
    pygame.draw.polygon(surface, tunic, body)
    pygame.draw.polygon(surface, dark, body, 2)
    belt_y = -h / 2 + leg_h + (shoulder - (-h / 2 + leg_h)) * 0.35
    pygame.draw.line(surface, dark, f(-w / 2, belt_y), f(w / 2, belt_y), max(2, round(3 * zoom)))
    facing = 1 if actor.facing >= 0 else -1
    # One arm on the facing side, so a standing villager shows which way they look.
    pygame.draw.line(
        surface,
        dark,
        f(facing * w * 0.3, shoulder - 4),
        f(facing * w * 0.42, belt_y - 2),
        max(2, round(5 * zoom)),
    )
    hc = f(*head)
    rp = r * zoom
    pygame.draw.circle(surface, SKIN, hc, rp)
    pygame.draw.circle(surface, SKIN_OUTLINE, hc, rp, max(1, round(1.5 * zoom)))
    if actor.is_player:
        brim = f.many([(-r * 1.25, h / 2 - r * 0.75), (r * 1.25, h / 2 - r * 0.75)])
        crown = f.many([
            (-r * 0.8, h / 2 - r * 0.8), (r * 0.8, h / 2 - r * 0.8),
            (r * 0.62, h / 2 + r * 0.35), (-r * 0.62, h / 2 + r * 0.35),
        ])  # fmt: skip
        pygame.draw.polygon(surface, PLAYER_HAT, crown)
        pygame.draw.line(
            surface, darken(PLAYER_HAT, 0.6), brim[0], brim[1], max(2, round(4 * zoom))
        )
    else:
        hair = [
            (head[0] + r * math.cos(a), head[1] + r * math.sin(a))
            for a in (math.radians(d) for d in range(10, 171, 20))
        ]
        pygame.draw.polygon(surface, darken(tunic, 0.35), f.many(hair))
    eye_y = head[1] + r * 0.05
    eyes = (facing * r * 0.12, facing * r * 0.58)
    er = max(1.5, r * 0.14 * zoom)
    if actor.conscious:
        for ex in eyes:
            pygame.draw.circle(surface, INK, f(ex, eye_y), er)
    else:
        d = r * 0.16
        for ex in eyes:
            pygame.draw.line(surface, INK, f(ex - d, eye_y - d), f(ex + d, eye_y + d), 2)
            pygame.draw.line(surface, INK, f(ex - d, eye_y + d), f(ex + d, eye_y - d), 2)
    top = min(hc[1] - rp, *(p[1] for p in body))
    if actor.is_player and actor.conscious:
        tip = top - 10
        pygame.draw.polygon(
            surface, PLAYER_MARKER, [(sx - 7, tip - 10), (sx + 7, tip - 10), (sx, tip)]
        )
        pygame.draw.polygon(
            surface,
            darken(PLAYER_MARKER, 0.6),
            [(sx - 7, tip - 10), (sx + 7, tip - 10), (sx, tip)],
            1,
        )
        top = tip - 10
    return top


class NameTags:
    """Cached name-tag surfaces (a translucent plate with the name), one per name."""

    def __init__(self, text: TextCache, size: int = 13) -> None:
        self._text = text
        self._size = size
        self._tags: dict[str, pygame.Surface] = {}

    def get(self, name: str, attitude: int = 0) -> pygame.Surface:
        """Return the tag for ``name``, painting it on first use.

        A villager's attitude towards the traveller tints the plate's edge: green when
        friendly, amber when wary, red when cross, none when neutral.
        """
        key = f"{attitude}|{name}"
        tag = self._tags.get(key)
        if tag is None:
            glyphs = self._text.render(name, self._size, TAG_TEXT, bold=True)
            tag = pygame.Surface(
                (glyphs.get_width() + 12, glyphs.get_height() + 4), pygame.SRCALPHA
            )
            pygame.draw.rect(tag, (*TAG_BG, 170), tag.get_rect(), border_radius=7)
            edge = ATTITUDE_EDGE.get(attitude)
            if edge is not None:
                pygame.draw.rect(tag, (*edge, 230), tag.get_rect(), width=2, border_radius=7)
            tag.blit(glyphs, (6, 2))
            if len(self._tags) > 256:  # names come from data; keep the cache bounded anyway
                self._tags.clear()
            self._tags[key] = tag
        return tag

    def draw(self, surface: pygame.Surface, name: str, cx: float, bottom: float) -> pygame.Rect:
        """Blit the tag centred at ``cx`` with its bottom at ``bottom``; return its rect."""
        tag = self.get(name)
        rect = tag.get_rect(midbottom=(round(cx), round(bottom)))
        surface.blit(tag, rect)
        return rect
