"""Cached text: fonts loaded once, rendered surfaces and wrapped layouts kept in LRUs.

``Font.render`` costs tens to hundreds of microseconds per call and is not thread-safe, so
every piece of text the renderer shows goes through one ``TextCache`` owned by the main
thread. A label that does not change is rendered once, however many frames show it.
"""

from __future__ import annotations

import logging
import unicodedata
from collections import OrderedDict
from pathlib import Path

import pygame
import pygame.freetype

from game.assets import ASSETS_DIR

logger = logging.getLogger(__name__)

Rgb = tuple[int, int, int]

#: Bundled fonts (DejaVu Sans, see assets/fonts/LICENSE-DejaVu.txt). They cover accents,
#: arrows and check marks that a language model or the HUD may produce; pygame's default
#: font is the fallback when they are missing.
REGULAR_FONT = ASSETS_DIR / "fonts" / "DejaVuSans.ttf"
BOLD_FONT = ASSETS_DIR / "fonts" / "DejaVuSans-Bold.ttf"


class TextCache:
    """Renders text through per-(size, bold) fonts and caches the surfaces, LRU and bounded.

    ``render`` returns the same ``Surface`` object for the same (text, size, colour, bold)
    while the entry stays in the cache, so callers must treat returned surfaces as
    read-only. ``wrap`` caches line layouts the same way.
    """

    def __init__(
        self,
        capacity: int = 512,
        *,
        regular: Path | None = REGULAR_FONT,
        bold: Path | None = BOLD_FONT,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self._paths: dict[bool, Path | None] = {
            False: regular if regular is not None and regular.is_file() else None,
            True: bold if bold is not None and bold.is_file() else None,
        }
        self._fonts: dict[tuple[int, bool], pygame.font.Font] = {}
        self._surfaces: OrderedDict[tuple[str, int, Rgb, bool], pygame.Surface] = OrderedDict()
        self._wraps: OrderedDict[tuple[str, int, int, bool], tuple[str, ...]] = OrderedDict()
        self.renders = 0  # Font.render calls made; lets tests and benchmarks see cache misses
        self._glyphs: dict[str, bool] = {}
        self._face: pygame.freetype.Font | None = None

    def __len__(self) -> int:
        return len(self._surfaces)

    def font(self, size: int, bold: bool = False) -> pygame.font.Font:
        """Return the font for ``size`` and weight, loading it on first use."""
        key = (size, bold)
        font = self._fonts.get(key)
        if font is None:
            path = self._paths[bold]
            font = pygame.font.Font(path, size)
            if path is None and bold:
                font.bold = True  # pygame's default font has no bold face: embolden it
            self._fonts[key] = font
            logger.debug("loaded font %s size %d bold=%s", path or "default", size, bold)
        return font

    def line_height(self, size: int, bold: bool = False) -> int:
        """Distance in pixels between the baselines of two lines of this font."""
        return int(self.font(size, bold).get_linesize())

    def measure(self, text: str, size: int, bold: bool = False) -> tuple[int, int]:
        """Width and height of ``text`` rendered in this font, without rendering it."""
        width, height = self.font(size, bold).size(self.readable(text))
        return int(width), int(height)

    def readable(self, text: str) -> str:
        """``text`` with every character the bundled font cannot draw put in words.

        An emoji the font lacks would be drawn as a box; instead it reads as its name in
        brackets ("I don't like (teapot)."), and the joiners and modifiers that build one
        emoji out of several are dropped, so a joined emoji is one group of names.
        """
        if text.isascii():
            return text
        out: list[str] = []
        for ch in text:
            drawable = self._glyphs.get(ch)
            if drawable is None:
                drawable = self._glyphs[ch] = self._has_glyph(ch)
            if drawable:
                out.append(ch)
            elif not _invisible(ch):
                out.append(f"({unicodedata.name(ch, 'symbol').lower()})")
        return "".join(out)

    def _has_glyph(self, ch: str) -> bool:
        path = self._paths[False]
        if path is None or not ch.isprintable():
            return ch.isprintable()
        if self._face is None:
            pygame.freetype.init()
            self._face = pygame.freetype.Font(path, 12)
        return self._face.get_metrics(ch)[0] is not None

    def render(self, text: str, size: int, color: Rgb, bold: bool = False) -> pygame.Surface:
        """Return an antialiased surface with per-pixel alpha showing ``text``.

        Characters the font cannot draw are put in words first (:meth:`readable`).
        """
        text = self.readable(text)
        key = (text, size, color, bold)
        surface = self._surfaces.get(key)
        if surface is not None:
            self._surfaces.move_to_end(key)
            return surface
        surface = self.font(size, bold).render(text, True, color)
        self.renders += 1
        self._surfaces[key] = surface
        if len(self._surfaces) > self.capacity:
            self._surfaces.popitem(last=False)
        return surface

    def wrap(self, text: str, size: int, max_width: int, bold: bool = False) -> tuple[str, ...]:
        """Split ``text`` into lines no wider than ``max_width`` pixels, measuring with the font.

        Words are kept whole unless a single word is wider than the limit, in which case it
        is broken between characters. Explicit newlines start a new line.
        """
        text = self.readable(text)
        key = (text, size, max_width, bold)
        lines = self._wraps.get(key)
        if lines is not None:
            self._wraps.move_to_end(key)
            return lines
        font = self.font(size, bold)
        out: list[str] = []
        for paragraph in text.split("\n"):
            out.extend(_wrap_paragraph(font, paragraph, max_width))
        lines = tuple(out)
        self._wraps[key] = lines
        if len(self._wraps) > self.capacity:
            self._wraps.popitem(last=False)
        return lines

    def clear(self) -> None:
        """Drop every cached surface and layout; fonts stay loaded."""
        self._surfaces.clear()
        self._wraps.clear()


def _invisible(ch: str) -> bool:
    """Joiners, variation selectors and skin-tone modifiers: parts of a joined emoji."""
    code = ord(ch)
    return ch in "\u200d\ufe0e\ufe0f" or 0x1F3FB <= code <= 0x1F3FF or 0xE0020 <= code <= 0xE007F


def _wrap_paragraph(font: pygame.font.Font, paragraph: str, max_width: int) -> list[str]:
    words = paragraph.split()
    if not words:
        return [""]
    lines: list[str] = []
    current = ""
    for word in words:
        candidate = f"{current} {word}" if current else word
        if font.size(candidate)[0] <= max_width:
            current = candidate
            continue
        if current:
            lines.append(current)
        if font.size(word)[0] <= max_width:
            current = word
        else:
            pieces = _break_word(font, word, max_width)
            lines.extend(pieces[:-1])
            current = pieces[-1]
    lines.append(current)
    return lines


def _break_word(font: pygame.font.Font, word: str, max_width: int) -> list[str]:
    """Break a word too long for one line between characters (at least one per line)."""
    pieces: list[str] = []
    current = ""
    for char in word:
        if current and font.size(current + char)[0] > max_width:
            pieces.append(current)
            current = char
        else:
            current += char
    pieces.append(current)
    return pieces
