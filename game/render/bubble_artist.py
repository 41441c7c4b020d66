"""Speech bubbles: cached layouts, stacking without overlap, tails, fades and carets.

A bubble's body (rounded rect, shadow and wrapped text) is painted once per distinct
(text, kind, width) and reused until its text changes, which for a streaming line means
once per token. Tails, carets and the thinking dots move every frame and are drawn live.
"""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pygame

from game.render.palette import Rgb, mix
from game.render.text import TextCache
from game.ui.views import BubbleKind, BubbleView

logger = logging.getLogger(__name__)

Point = tuple[float, float]


@dataclass(frozen=True, slots=True)
class BubbleStyle:
    """Colours of one kind of bubble."""

    fill: Rgb
    border: Rgb
    ink: Rgb


STYLES: dict[BubbleKind, BubbleStyle] = {
    "line": BubbleStyle((255, 252, 242), (64, 56, 52), (34, 30, 36)),
    # The player's own conversation is tinted blue so it stands apart from village chatter.
    "chat": BubbleStyle((228, 240, 255), (44, 80, 138), (22, 34, 60)),
    # Canned lines (prepared or template) look slightly muted: honest, not hidden.
    "fallback": BubbleStyle((236, 234, 226), (124, 118, 110), (72, 68, 64)),
    "thinking": BubbleStyle((248, 248, 252), (140, 140, 154), (110, 110, 124)),
}

PAD_X, PAD_Y = 10, 7
RADIUS = 10
SHADOW = 3
TAIL = 14
GAP = 6
THINKING_SIZE = (62, 32)
#: How much further than its own width a bubble may slide sideways to find room.
SLIDE_SLACK = 80


@dataclass(frozen=True, slots=True)
class BubbleLayout:
    """A painted bubble body and where its text ends (for the streaming caret)."""

    surface: pygame.Surface
    size: tuple[int, int]
    caret: tuple[int, int]
    line_height: int


def stack_rects(
    desired: Sequence[pygame.Rect],
    bounds: pygame.Rect,
    gap: int = GAP,
    obstacles: Sequence[pygame.Rect] = (),
) -> list[pygame.Rect]:
    """Place rects near their desired spots so that no two overlap and all stay in ``bounds``.

    Rects are placed in the given order, so earlier ones keep their spot and later ones
    move (a stable order keeps bubbles from swapping places between frames). Each is
    first clamped into ``bounds``, then pushed up past any placed rect it touches. If that
    leaves the screen, it slides sideways (at most its own width) to clear the rect in the
    way and is pushed up from there (sliding at most its width plus ``SLIDE_SLACK``);
    failing that it is pushed down, and then it takes the
    nearest free slot. Only when no slot is free at all may it overlap another.
    ``obstacles`` (HUD panels) are avoided the same way but are not returned.
    """
    placed: list[pygame.Rect] = [r for r in obstacles if r.colliderect(bounds)]
    skip = len(placed)
    for want in desired:
        start = _clamped(want, bounds)
        rect = _push(start, placed, bounds, gap, up=True)
        if rect is None:
            rect = _best_detour(start, placed, bounds, gap)
        if rect is None:
            logger.debug("no free slot for a %dx%d bubble; it overlaps", start.w, start.h)
            rect = start
        placed.append(rect)
    return placed[skip:]


def _best_detour(
    start: pygame.Rect, placed: Sequence[pygame.Rect], bounds: pygame.Rect, gap: int
) -> pygame.Rect | None:
    """The least displaced free spot when pushing straight up failed.

    Sliding sideways is cheap (the tail still points home); moving down is dear, since a
    bubble below its spot sits over the speakers' heads.
    """
    found: list[tuple[int, pygame.Rect]] = []
    lefts = {p.right + gap for p in placed} | {p.left - gap - start.width for p in placed}
    for left in lefts:
        if 0 < abs(left - start.left) <= start.width + SLIDE_SLACK and (
            bounds.left <= left <= bounds.right - start.width
        ):
            moved = start.copy()
            moved.left = left
            rect = _push(moved, placed, bounds, gap, up=True)
            if rect is not None:
                found.append((abs(left - start.left) // 2 + start.top - rect.top, rect))
    for rect_or_none in (
        _push(start, placed, bounds, gap, up=False),
        _nearest_free(start, placed, bounds, gap),
    ):
        if rect_or_none is not None:
            found.append((3 * abs(rect_or_none.top - start.top), rect_or_none))
    if not found:
        return None
    return min(found, key=lambda item: (item[0], item[1].left, item[1].top))[1]


def _clamped(rect: pygame.Rect, bounds: pygame.Rect) -> pygame.Rect:
    out = rect.copy()
    out.left = max(bounds.left, min(out.left, bounds.right - out.width))
    out.top = max(bounds.top, min(out.top, bounds.bottom - out.height))
    return out


def _hits(rect: pygame.Rect, placed: Sequence[pygame.Rect], gap: int) -> pygame.Rect | None:
    grown = rect.inflate(2 * gap, 2 * gap)
    index = grown.collidelist(placed)
    return placed[index] if index >= 0 else None


def _push(
    start: pygame.Rect, placed: Sequence[pygame.Rect], bounds: pygame.Rect, gap: int, *, up: bool
) -> pygame.Rect | None:
    rect = start.copy()
    while (other := _hits(rect, placed, gap)) is not None:
        if up:
            rect.bottom = other.top - gap
        else:
            rect.top = other.bottom + gap
        if rect.top < bounds.top or rect.bottom > bounds.bottom:
            return None
    return rect


def _nearest_free(
    start: pygame.Rect, placed: Sequence[pygame.Rect], bounds: pygame.Rect, gap: int
) -> pygame.Rect | None:
    tops = [bounds.top, bounds.bottom - start.height]
    for other in placed:
        tops += [other.bottom + gap, other.top - gap - start.height]
    best: pygame.Rect | None = None
    for top in tops:
        candidate = start.copy()
        candidate.top = top
        if candidate.top < bounds.top or candidate.bottom > bounds.bottom:
            continue
        if _hits(candidate, placed, gap) is not None:
            continue
        if best is None or abs(top - start.top) < abs(best.top - start.top):
            best = candidate
    return best


class BubbleArtist:
    """Lays out, caches and draws speech bubbles over their speakers."""

    def __init__(
        self, text: TextCache, *, max_width: int = 260, font_size: int = 16, capacity: int = 64
    ) -> None:
        self._text = text
        self.max_width = max_width
        self.font_size = font_size
        self._capacity = capacity
        self._layouts: OrderedDict[tuple[str, str, int], BubbleLayout] = OrderedDict()
        self.layouts_made = 0  # cache misses, for tests and benchmarks

    def layout(self, text: str, kind: BubbleKind) -> BubbleLayout:
        """Return the painted body for ``text`` in the style of ``kind``, cached."""
        key = (text, kind, self.max_width)
        found = self._layouts.get(key)
        if found is not None:
            self._layouts.move_to_end(key)
            return found
        made = self._paint(text, kind)
        self.layouts_made += 1
        self._layouts[key] = made
        if len(self._layouts) > self._capacity:
            self._layouts.popitem(last=False)
        return made

    def _paint(self, text: str, kind: BubbleKind) -> BubbleLayout:
        style = STYLES.get(kind, STYLES["line"])
        line_h = self._text.line_height(self.font_size)
        if kind == "thinking" or not text:
            w, h = THINKING_SIZE
            lines: tuple[str, ...] = ()
        else:
            lines = self._text.wrap(text, self.font_size, self.max_width - 2 * PAD_X)
            widest = max(self._text.measure(line, self.font_size)[0] for line in lines)
            w = max(44, widest + 2 * PAD_X)
            h = len(lines) * line_h + 2 * PAD_Y
        surface = pygame.Surface((w + SHADOW, h + SHADOW), pygame.SRCALPHA)
        pygame.draw.rect(surface, (0, 0, 0, 60), (SHADOW, SHADOW, w, h), border_radius=RADIUS)
        pygame.draw.rect(surface, style.fill, (0, 0, w, h), border_radius=RADIUS)
        pygame.draw.rect(surface, style.border, (0, 0, w, h), 2, border_radius=RADIUS)
        y = PAD_Y
        caret = (PAD_X, PAD_Y)
        for line in lines:
            if line:
                surface.blit(self._text.render(line, self.font_size, style.ink), (PAD_X, y))
            caret = (PAD_X + self._text.measure(line, self.font_size)[0] + 2, y)
            y += line_h
        return BubbleLayout(surface, (w, h), caret, line_h)

    def draw(
        self,
        surface: pygame.Surface,
        bubbles: Sequence[BubbleView],
        anchors: Mapping[int, Point],
        time: float,
        obstacles: Sequence[pygame.Rect] = (),
    ) -> list[pygame.Rect]:
        """Draw ``bubbles`` above their speakers' ``anchors`` (screen points); return rects.

        A bubble whose speaker has no anchor (gone from the world) is skipped; bubbles
        keep clear of ``obstacles`` (HUD panels) when there is room.
        """
        shown: list[tuple[BubbleView, BubbleKind, BubbleLayout, Point]] = []
        desired: list[pygame.Rect] = []
        for bubble in bubbles:
            anchor = anchors.get(bubble.speaker_id)
            if anchor is None or bubble.alpha <= 0.01:
                continue
            kind: BubbleKind = "thinking" if bubble.streaming and not bubble.text else bubble.kind
            made = self.layout(bubble.text, kind)
            rect = pygame.Rect((0, 0), made.size)
            rect.midbottom = (round(anchor[0]), round(anchor[1]) - TAIL)
            shown.append((bubble, kind, made, anchor))
            desired.append(rect)
        bounds = surface.get_rect().inflate(-8, -8)
        rects = stack_rects(desired, bounds, obstacles=obstacles)
        for (_, _, _, anchor), rect in zip(shown, rects, strict=True):
            _draw_leader(surface, rect, anchor)
        for (bubble, kind, made, anchor), rect in zip(shown, rects, strict=True):
            style = STYLES.get(kind, STYLES["line"])
            alpha = max(0, min(255, round(bubble.alpha * 255)))
            if kind == "thinking":
                _draw_thought_tail(surface, rect, anchor, style, alpha)
            else:
                _draw_tail(surface, rect, anchor, style, alpha)
            made.surface.set_alpha(alpha)
            surface.blit(made.surface, rect)
            if kind == "thinking":
                _draw_dots(surface, rect, style, bubble.alpha, time)
            elif bubble.streaming and (time * 2.0) % 1.0 < 0.6:
                cx, cy = rect.left + made.caret[0], rect.top + made.caret[1]
                color = mix(style.fill, style.ink, bubble.alpha)
                pygame.draw.line(surface, color, (cx, cy + 2), (cx, cy + made.line_height - 3), 2)
        return rects


def _tail_base_x(rect: pygame.Rect, anchor: Point) -> float:
    return max(rect.left + RADIUS + 6, min(anchor[0], rect.right - RADIUS - 6))


def _tail_tip(rect: pygame.Rect, anchor: Point) -> tuple[Point, bool]:
    """Where the tail ends, and whether the bubble sits below its speaker."""
    below = anchor[1] < rect.top
    base_y = rect.top if below else rect.bottom
    dx, dy = anchor[0] - _tail_base_x(rect, anchor), anchor[1] - base_y
    dist = math.hypot(dx, dy)
    if dist <= TAIL + 4:
        return anchor, below
    scale = TAIL / dist if dist > 0 else 0.0
    # A tail leaning more than 45 degrees is hard to read; keep it mostly vertical.
    lean = max(-TAIL, min(TAIL, dx * scale * 1.5))
    return (_tail_base_x(rect, anchor) + lean, base_y + math.copysign(TAIL, dy or 1.0)), below


def _draw_leader(surface: pygame.Surface, rect: pygame.Rect, anchor: Point) -> None:
    """A thin dotted line from a displaced bubble's tail to its speaker."""
    tip, _ = _tail_tip(rect, anchor)
    dist = math.hypot(anchor[0] - tip[0], anchor[1] - tip[1])
    if dist < 6:
        return
    steps = int(dist // 7)
    for i in range(1, steps):
        t = i / steps
        pygame.draw.circle(
            surface,
            (250, 250, 250),
            (tip[0] + (anchor[0] - tip[0]) * t, tip[1] + (anchor[1] - tip[1]) * t),
            1.6,
        )


def _draw_tail(
    surface: pygame.Surface, rect: pygame.Rect, anchor: Point, style: BubbleStyle, alpha: int
) -> None:
    tip, below = _tail_tip(rect, anchor)
    bx = _tail_base_x(rect, anchor)
    inner = rect.top + 2 if below else rect.bottom - 2  # overlap the border so they join
    pts = [(bx - 7, inner), (bx + 7, inner), tip]
    box = pygame.Rect(min(p[0] for p in pts) - 2, min(p[1] for p in pts) - 2, 0, 0)
    box.width = int(max(p[0] for p in pts) - box.left) + 3
    box.height = int(max(p[1] for p in pts) - box.top) + 3
    scratch = pygame.Surface(box.size, pygame.SRCALPHA)
    local = [(x - box.left, y - box.top) for x, y in pts]
    pygame.draw.polygon(scratch, style.fill, local)
    pygame.draw.line(scratch, style.border, local[0], local[2], 2)
    pygame.draw.line(scratch, style.border, local[1], local[2], 2)
    scratch.set_alpha(alpha)
    surface.blit(scratch, box)


def _draw_thought_tail(
    surface: pygame.Surface, rect: pygame.Rect, anchor: Point, style: BubbleStyle, alpha: int
) -> None:
    tip, below = _tail_tip(rect, anchor)
    bx = _tail_base_x(rect, anchor)
    by = rect.top if below else rect.bottom
    fill, border = mix((255, 255, 255), style.fill, alpha / 255), style.border
    for t, r in ((0.35, 4.0), (0.85, 2.5)):
        p = (bx + (tip[0] - bx) * t, by + (tip[1] - by) * t)
        pygame.draw.circle(surface, fill, p, r)
        pygame.draw.circle(surface, border, p, r, 1)


def _draw_dots(
    surface: pygame.Surface, rect: pygame.Rect, style: BubbleStyle, alpha: float, time: float
) -> None:
    color = mix(style.fill, style.ink, alpha)
    for i in range(3):
        lift = 3.0 * max(0.0, math.sin(time * 6.0 - i * 0.9))
        x = rect.centerx + (i - 1) * 13
        pygame.draw.circle(surface, color, (x, rect.centery + 1 - lift), 3.5)
