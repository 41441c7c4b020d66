"""The HUD and overlays: frame figures, the AI mode, model loading, errands, the F3 graph
and stats, F1 help, pause, chat input and toasts.

Cheap by construction: every label comes from the ``TextCache``, numbers that change every
frame are refreshed at 4 Hz (faster is unreadable anyway), translucent panels are cached by
size, and the frame-time graph is drawn into one preallocated surface.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pygame

from game.input.keys import HELP_LINES
from game.render.palette import (
    HUD_BAD,
    HUD_DIM,
    HUD_GOOD,
    HUD_PANEL,
    HUD_TEXT,
    HUD_WARN,
    Rgb,
)
from game.render.text import TextCache
from game.sim.snapshot import WorldSnapshot
from game.sim.ticks import DT
from game.ui.views import ChatView, CheerView, HudView, LoadView

logger = logging.getLogger(__name__)

SMALL, BODY, TITLE = 13, 15, 40
MODE_SIZE = 20  # the AI mode is the demo's headline: larger than the figures above it
MARGIN = 10
REFRESH_S = 0.25
GRAPH_SIZE = (264, 96)
GRAPH_MAX_MS = 50.0
BUDGET_MS = 1000 * DT
SLOW_MS = 2 * BUDGET_MS
#: Bars turn red past the budget; the 10% allowance keeps ordinary vsync jitter around
#: 16.7 ms from painting a healthy 60 Hz run red.
OVER_BUDGET_MS = BUDGET_MS * 1.1
BUDGET_LINE: Rgb = (255, 214, 92)

#: How each AI mode is announced: a label, what it means, and a colour. The mode is
#: always on screen, so any screenshot or recording of the demo says how it was running.
MODE_LABELS: dict[str, tuple[str, str, Rgb]] = {
    "async": ("AI: async", "zero-stall  ·  F5: try sync", HUD_GOOD),
    "sync": ("AI: SYNC (naive)", "the game waits for the model  ·  F5: async", HUD_BAD),
    "off": ("AI: off", "template lines only", HUD_DIM),
}


def mode_label(mode: str) -> tuple[str, str, Rgb]:
    """The label, hint and colour the HUD shows for an AI ``mode``."""
    return MODE_LABELS.get(mode, (f"AI: {mode}", "", HUD_TEXT))


class Hud:
    """Draws the HUD for one ``HudView`` per frame."""

    def __init__(self, text: TextCache) -> None:
        self._text = text
        self._panels: dict[tuple[int, int, int], pygame.Surface] = {}
        self._graph = pygame.Surface(GRAPH_SIZE, pygame.SRCALPHA)
        self._help: pygame.Surface | None = None
        self._shade: pygame.Surface | None = None
        self._shown_at = -1.0
        self._figures = ("", "")
        self._graph_title = "frame ms"
        self._stats: tuple[tuple[str, str], ...] = ()
        self.rects: list[pygame.Rect] = []  # panels drawn last frame, for bubbles to avoid
        self.menu_rects: list[pygame.Rect] = []  # pause menu items, for mouse clicks

    def draw(
        self, surface: pygame.Surface, hud: HudView, world: WorldSnapshot, time: float
    ) -> None:
        """Draw every HUD element that ``hud`` asks for onto ``surface``."""
        self.rects = []
        self.menu_rects = []
        if time - self._shown_at >= REFRESH_S or time < self._shown_at:
            self._shown_at = time
            self._figures = (f"{hud.fps:.0f} FPS", f"tick {hud.tick_ms:.2f} ms")
            self._stats = hud.ai_stats
            recent = hud.frame_ms[-GRAPH_SIZE[0] // 2 :]
            self._graph_title = (
                f"frame ms  last {recent[-1]:.1f}  max {max(recent):.1f}" if recent else "frame ms"
            )
        if hud.paused:
            # Shade the world first so the HUD stays readable over it.
            self._draw_paused(surface, hud, title=not hud.show_help)
        y = self._draw_status(surface, hud)
        if hud.show_graph:
            y = self._draw_graph(surface, hud.frame_ms, y + 6)
            self._draw_stats(surface, self._stats, y + 6)
        self._draw_errands(surface, world)
        hint_shown = bool(hud.hint) and hud.hint_alpha > 0.0 and not hud.paused
        if hint_shown:
            self._draw_hint(surface, hud.hint, hud.hint_alpha)
        if hud.load is not None and hud.load.state == "loading":
            # After the panels at the top, so it can keep clear of them.
            self._draw_loading(surface, hud.load)
        bottom = surface.get_height() - MARGIN
        if hud.chat is not None:
            bottom = self._draw_chat(surface, hud.chat, time) - 8
        if hud.toast:
            self._draw_toast(surface, hud.toast, bottom)
        if hud.cheers:
            self._draw_cheer(surface, hud.cheers[-1])
        if hud.show_help:
            self._draw_help(surface)

    # -- pieces -----------------------------------------------------------------------

    def _panel(self, size: tuple[int, int], opacity: int = 170) -> pygame.Surface:
        key = (size[0], size[1], opacity)
        panel = self._panels.get(key)
        if panel is None:
            panel = pygame.Surface(size, pygame.SRCALPHA)
            pygame.draw.rect(panel, (*HUD_PANEL, opacity), panel.get_rect(), border_radius=6)
            if len(self._panels) > 64:  # sizes follow text widths; keep the cache bounded
                self._panels.clear()
            self._panels[key] = panel
        return panel

    def _draw_status(self, surface: pygame.Surface, hud: HudView) -> int:
        """FPS, tick time, the AI mode and a degraded notice, top-left; returns the bottom."""
        rows: list[pygame.Surface] = [
            self._text.render(f"{self._figures[0]}   {self._figures[1]}", BODY, HUD_TEXT)
        ]
        if hud.mode:
            label, hint, color = mode_label(hud.mode)
            rows.append(self._text.render(label, MODE_SIZE, color, bold=True))
            if hint:
                rows.append(self._text.render(hint, SMALL, HUD_DIM))
        if hud.load is not None and hud.load.state == "degraded":
            note = f"AI degraded: {hud.load.stage}" if hud.load.stage else "AI degraded"
            rows.append(self._text.render(note, SMALL, HUD_WARN))
        return self._blit_rows(surface, rows, MARGIN, MARGIN)

    def _blit_rows(
        self, surface: pygame.Surface, rows: Sequence[pygame.Surface], x: int, y: int
    ) -> int:
        width = max(r.get_width() for r in rows) + 16
        height = sum(r.get_height() + 2 for r in rows) + 8
        self.rects.append(surface.blit(self._panel((width, height)), (x, y)))
        cy = y + 4
        for row in rows:
            surface.blit(row, (x + 8, cy))
            cy += row.get_height() + 2
        return y + height

    def _draw_graph(self, surface: pygame.Surface, frame_ms: Sequence[float], top: int) -> int:
        """Frame times as bars, newest at the right, with lines at 16.7 and 33.3 ms."""
        graph = self._graph
        gw, gh = GRAPH_SIZE
        graph.fill((*HUD_PANEL, 190))
        plot_h = gh - 18

        def y_of(ms: float) -> float:
            return 14 + plot_h - min(ms, GRAPH_MAX_MS) / GRAPH_MAX_MS * plot_h

        samples = list(frame_ms[-(gw - 8) // 2 :])
        base = 14 + plot_h
        x0 = gw - 4 - 2 * len(samples)
        for i, ms in enumerate(samples):
            color = HUD_GOOD if ms <= OVER_BUDGET_MS else HUD_BAD
            x = x0 + 2 * i
            pygame.draw.line(graph, color, (x, base), (x, y_of(ms)), 2)
        # The 60 Hz budget line is bright and drawn over the bars: it is the point of
        # the graph, and a run of healthy frames would otherwise hide it.
        lines: tuple[tuple[float, str, Rgb, int], ...] = (
            (SLOW_MS, "33.3", (200, 204, 214), 140),
            (BUDGET_MS, "16.7 ms", BUDGET_LINE, 255),
        )
        for ms, label, ink, opacity in lines:
            y = y_of(ms)
            pygame.draw.line(graph, (*ink, opacity), (4, y), (gw - 4, y), 1)
            tag = self._text.render(label, 10, ink)
            spot = tag.get_rect(bottomright=(gw - 6, y - 1))
            # A backing plate: the bars would otherwise run through the figures.
            graph.fill((*HUD_PANEL, 235), spot.inflate(4, 0))
            graph.blit(tag, spot)
        graph.blit(self._text.render(self._graph_title, SMALL, HUD_TEXT), (6, 1))
        self.rects.append(surface.blit(graph, (MARGIN, top)))
        return top + gh

    def _draw_stats(
        self, surface: pygame.Surface, stats: Sequence[tuple[str, str]], top: int
    ) -> None:
        if not stats:
            return
        labels = [self._text.render(label, SMALL, HUD_DIM) for label, _ in stats]
        values = [self._text.render(value, SMALL, HUD_TEXT, bold=True) for _, value in stats]
        label_w = max(s.get_width() for s in labels)
        value_w = max(s.get_width() for s in values)
        row_h = max(s.get_height() for s in labels + values) + 2
        width = max(GRAPH_SIZE[0], label_w + value_w + 36)
        self.rects.append(
            surface.blit(self._panel((width, row_h * len(stats) + 10), 190), (MARGIN, top))
        )
        y = top + 5
        for label, value in zip(labels, values, strict=True):
            surface.blit(label, (MARGIN + 8, y))
            surface.blit(value, (MARGIN + width - 8 - value.get_width(), y))
            y += row_h

    def _draw_loading(self, surface: pygame.Surface, load: LoadView) -> None:
        """A bar at the top centre while the model loads in the background."""
        fraction = max(0.0, min(1.0, load.fraction))
        title = self._text.render(f"Loading model {fraction * 100:.0f}%", BODY, HUD_TEXT, bold=True)
        stage = self._text.render(load.stage or "starting", SMALL, HUD_DIM)
        bar_w, bar_h = 320, 10
        width, height = bar_w + 20, title.get_height() + stage.get_height() + bar_h + 20
        box = self._clear_spot(
            pygame.Rect((surface.get_width() - width) // 2, MARGIN, width, height)
        )
        left, top = box.topleft
        self.rects.append(surface.blit(self._panel((width, height)), box))
        surface.blit(title, (left + 10, top + 5))
        bar = pygame.Rect(left + 10, top + 9 + title.get_height(), bar_w, bar_h)
        pygame.draw.rect(surface, (60, 64, 76), bar, border_radius=5)
        if fraction > 0:
            filled = bar.copy()
            filled.width = max(bar_h, round(bar_w * fraction))
            pygame.draw.rect(surface, HUD_GOOD, filled, border_radius=5)
        surface.blit(stage, (left + 10, bar.bottom + 3))

    def _clear_spot(self, box: pygame.Rect) -> pygame.Rect:
        """``box`` moved down below every panel already drawn that it would cover."""
        box = box.copy()
        for _ in range(len(self.rects)):
            hit = box.collidelist(self.rects)
            if hit < 0:
                break
            box.top = self.rects[hit].bottom + 6
        return box

    def _draw_errands(self, surface: pygame.Surface, world: WorldSnapshot) -> None:
        if not world.errands:
            return
        names = {actor.id: actor.name for actor in world.actors}
        rows: list[pygame.Surface] = []
        for errand in world.errands:
            title = errand.title
            giver = names.get(errand.giver_id, "")
            if giver and giver.lower() not in title.lower():
                title = f"{title} for {giver}"
            if not errand.open:
                tally, color = f"{title}: standing", HUD_DIM
            else:
                tally = f"{title} {errand.progress}/{errand.goal}" + (" ✓" if errand.done else "")
                color = HUD_GOOD if errand.done else HUD_TEXT
            rows.append(self._text.render(tally, BODY, color))
        width = max(r.get_width() for r in rows) + 16
        self._blit_rows(surface, rows, surface.get_width() - MARGIN - width, MARGIN)

    def _draw_chat(self, surface: pygame.Surface, chat: ChatView, time: float) -> int:
        """The chat box at the bottom centre, or why it closed; returns its top."""
        width = min(surface.get_width() - 2 * MARGIN, 640)
        if not chat.open:
            note = self._text.render(chat.notice, BODY, HUD_WARN)
            box = pygame.Rect(0, 0, width, note.get_height() + 14)
            box.midbottom = (surface.get_width() // 2, surface.get_height() - MARGIN)
            self.rects.append(surface.blit(self._panel(box.size, 200), box))
            pygame.draw.rect(surface, (150, 130, 90), box, 2, border_radius=6)
            surface.blit(note, note.get_rect(center=box.center))
            return box.top
        who = self._text.render(f"Talking to {chat.target}", SMALL, (150, 190, 255), bold=True)
        keys = self._text.render("Enter: send  ·  Esc: leave", SMALL, HUD_DIM)
        prompt = self._text.render("Say:", BODY, HUD_DIM, bold=True)
        entry = self._text.render(chat.typed, BODY, HUD_TEXT) if chat.typed else None
        height = who.get_height() + prompt.get_height() + 20
        box = pygame.Rect(0, 0, width, height)
        box.midbottom = (surface.get_width() // 2, surface.get_height() - MARGIN)
        self.rects.append(surface.blit(self._panel(box.size, 215), box))
        pygame.draw.rect(surface, (92, 140, 220), box, 2, border_radius=6)
        surface.blit(who, (box.left + 10, box.top + 6))
        surface.blit(keys, keys.get_rect(topright=(box.right - 10, box.top + 6)))
        line_top = box.top + 12 + who.get_height()
        x = box.left + 10
        surface.blit(prompt, (x, line_top))
        x += prompt.get_width() + 8
        if entry is not None:
            # Keep the end of a long entry visible: show its right-hand part.
            room = box.right - 16 - x
            shown = pygame.Rect(
                max(0, entry.get_width() - room),
                0,
                min(room, entry.get_width()),
                entry.get_height(),
            )
            surface.blit(entry, (x, line_top), shown)
            x += shown.width
        if (time * 2.0) % 1.0 < 0.6:
            pygame.draw.line(
                surface, HUD_TEXT, (x + 2, line_top + 1), (x + 2, line_top + prompt.get_height())
            )
        return box.top

    def _draw_hint(self, surface: pygame.Surface, hint: str, alpha: float) -> None:
        glyphs = self._text.render(hint, BODY, (255, 226, 140), bold=True)
        rect = glyphs.get_rect(midtop=(surface.get_width() // 2, MARGIN)).inflate(24, 12)
        panel = self._panel(rect.size, 190).copy()
        panel.blit(glyphs, glyphs.get_rect(center=panel.get_rect().center))
        panel.set_alpha(round(255 * max(0.0, min(1.0, alpha))))
        self.rects.append(surface.blit(panel, rect))

    def _draw_cheer(self, surface: pygame.Surface, cheer: CheerView) -> None:
        """A banner for a finished errand: it drops in, holds, and fades."""
        t = cheer.progress
        alpha = min(1.0, t * 8.0, (1.0 - t) * 4.0)
        if alpha <= 0.0:
            return
        head = self._text.render("Errand done!", 26, (255, 226, 140), bold=True)
        line = self._text.render(cheer.title, BODY, HUD_TEXT)
        width = max(head.get_width(), line.get_width()) + 40
        height = head.get_height() + line.get_height() + 22
        panel = pygame.Surface((width, height), pygame.SRCALPHA)
        pygame.draw.rect(panel, (*HUD_PANEL, 225), panel.get_rect(), border_radius=12)
        pygame.draw.rect(panel, HUD_GOOD, panel.get_rect(), 3, border_radius=12)
        panel.blit(head, head.get_rect(midtop=(width // 2, 8)))
        panel.blit(line, line.get_rect(midtop=(width // 2, 14 + head.get_height())))
        panel.set_alpha(round(255 * alpha))
        drop = round(20 * max(0.0, 1.0 - t * 8.0))
        rect = panel.get_rect(midtop=(surface.get_width() // 2, 100 - drop))
        self.rects.append(surface.blit(panel, rect))

    def _draw_toast(self, surface: pygame.Surface, toast: str, bottom: int) -> None:
        glyphs = self._text.render(toast, BODY, HUD_TEXT)
        rect = glyphs.get_rect(midbottom=(surface.get_width() // 2, bottom)).inflate(20, 10)
        self.rects.append(surface.blit(self._panel(rect.size, 200), rect))
        surface.blit(glyphs, glyphs.get_rect(center=rect.center))

    def _draw_paused(self, surface: pygame.Surface, hud: HudView, *, title: bool) -> None:
        size = surface.get_size()
        if self._shade is None or self._shade.get_size() != size:
            self._shade = pygame.Surface(size, pygame.SRCALPHA)
            self._shade.fill((10, 12, 20, 120))
        surface.blit(self._shade, (0, 0))
        if not title:
            return
        big = self._text.render("Paused", TITLE, HUD_TEXT, bold=True)
        hint = self._text.render("↑ / ↓ and Enter, or click  ·  Esc resumes", BODY, HUD_DIM)
        cx, cy = size[0] // 2, size[1] // 2
        # Every item as wide as the widest label (in bold, as when chosen), plus a margin.
        width = max(
            [220]
            + [
                self._text.render(label, 22, HUD_TEXT, bold=True).get_width() + 48
                for label in hud.pause_items
            ]
        )
        item_h = self._text.render("Ag", 22, HUD_TEXT).get_height() + 14
        items_h = len(hud.pause_items) * (item_h + 10)
        # One backdrop behind the title, the items and the hint, so none of it is read
        # against the village.
        back = pygame.Rect(0, 0, max(width, big.get_width(), hint.get_width()) + 56, 0)
        back.top = cy - 90 - big.get_height() // 2 - 20
        back.height = (cy - 40 + items_h + 10 + hint.get_height() // 2 + 22) - back.top
        back.centerx = cx
        self.rects.append(surface.blit(self._panel(back.size, 215), back))
        pygame.draw.rect(surface, (120, 128, 150), back, 2, border_radius=6)
        surface.blit(big, big.get_rect(center=(cx, cy - 90)))
        y = cy - 40
        for i, label in enumerate(hud.pause_items):
            chosen = i == hud.pause_choice
            glyphs = self._text.render(label, 22, HUD_TEXT if chosen else HUD_DIM, bold=chosen)
            item = pygame.Rect(0, 0, width, glyphs.get_height() + 14)
            item.center = (cx, y)
            surface.blit(self._panel(item.size, 230 if chosen else 150), item)
            if chosen:
                pygame.draw.rect(surface, (255, 226, 140), item, 2, border_radius=6)
            surface.blit(glyphs, glyphs.get_rect(center=item.center))
            self.menu_rects.append(item)
            y += item.height + 10
        surface.blit(hint, hint.get_rect(center=(cx, y + 10)))

    def _draw_help(self, surface: pygame.Surface) -> None:
        if self._help is None:
            self._help = self._paint_help()
        surface.blit(self._help, self._help.get_rect(center=surface.get_rect().center))

    def _paint_help(self) -> pygame.Surface:
        title = self._text.render("Controls", 22, HUD_TEXT, bold=True)
        keys = [self._text.render(k, BODY, (255, 226, 140), bold=True) for k, _ in HELP_LINES]
        acts = [self._text.render(a, BODY, HUD_TEXT) for _, a in HELP_LINES]
        key_w = max(k.get_width() for k in keys)
        row_h = max(k.get_height() for k in keys) + 6
        width = max(title.get_width(), key_w + 24 + max(a.get_width() for a in acts)) + 48
        height = title.get_height() + row_h * len(keys) + 44
        panel = pygame.Surface((width, height), pygame.SRCALPHA)
        pygame.draw.rect(panel, (*HUD_PANEL, 228), panel.get_rect(), border_radius=10)
        pygame.draw.rect(panel, (120, 128, 150), panel.get_rect(), 2, border_radius=10)
        panel.blit(title, title.get_rect(midtop=(width // 2, 16)))
        y = 26 + title.get_height()
        for key, act in zip(keys, acts, strict=True):
            panel.blit(key, (24 + key_w - key.get_width(), y))
            panel.blit(act, (24 + key_w + 24, y))
            y += row_h
        return panel
