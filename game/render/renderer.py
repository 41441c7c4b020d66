"""The renderer: one ``draw`` call per frame turns two snapshots and the overlay views into
pixels. It only reads what it is given and never changes it.
"""

from __future__ import annotations

import logging
import time as _time
from collections.abc import Sequence
from pathlib import Path

import pygame

from game.render.backdrop import FAR_PARALLAX, NEAR_PARALLAX, build_hills, build_sky
from game.render.bubble_artist import BubbleArtist
from game.render.bubble_choice import BubbleCrowd
from game.render.camera import Camera
from game.render.hud import Hud
from game.render.overlays import (
    draw_aim,
    draw_cheer,
    draw_edge_marker,
    draw_emote,
    draw_highlight,
    layout_tags,
)
from game.render.scenery import build_level_layer, level_bottom
from game.render.shapes import NameTags, blend, draw_actor, draw_prop
from game.render.text import TextCache
from game.sim.snapshot import LevelView, PropView, WorldSnapshot
from game.ui.views import BubbleView, HudView

logger = logging.getLogger(__name__)

#: The camera aims a little above and ahead of the player, so more of what they walk
#: toward is on screen than what is behind them.
LOOK_UP = 140.0
LOOK_AHEAD = 60.0
ASIDE_SCALE = 0.88


def screenshot(surface: pygame.Surface, path: str | Path) -> Path:
    """Save ``surface`` as an image at ``path`` (format from the suffix); return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(surface, str(target))
    logger.info("screenshot saved to %s", target)
    return target


def _for_display(surface: pygame.Surface) -> pygame.Surface:
    """Convert to the display's pixel format when there is a display, for faster blits."""
    if not (pygame.display.get_init() and pygame.display.get_surface() is not None):
        return surface
    key = surface.get_colorkey()
    converted = surface.convert()
    if key is not None:
        converted.set_colorkey(key, pygame.RLEACCEL)
    return converted


class Renderer:
    """Draws the level, props, villagers, speech bubbles and HUD for one frame.

    The static picture (sky, hills, level) is painted once into large surfaces and rebuilt
    only when the zoom or the window size changes; a frame blits those, then draws the
    moving things blended between the previous and current snapshots.
    """

    def __init__(
        self, level: LevelView, *, zoom: float = 1.0, text: TextCache | None = None
    ) -> None:
        self.level = level
        self.text = text if text is not None else TextCache()
        self.camera = Camera(level.width, level.height, zoom=zoom, bottom=level_bottom(level))
        self.bubbles = BubbleArtist(self.text)
        self.hud = Hud(self.text)
        self.tags = NameTags(self.text)
        self.last_draw_ms = 0.0  # wall time of the last draw, for the stats panel
        self.last_hud_ms = 0.0  # the HUD's share of it, to show the HUD costs nothing
        self.last_bubble_rects: list[pygame.Rect] = []
        self._time = 0.0
        self._layers_key: tuple[float, int, int] | None = None
        self._sky = pygame.Surface((1, 1))
        self._far = self._sky
        self._near = self._sky
        self._far_top = self._near_top = 0
        self._level_layer = self._sky
        self._signs: list[pygame.Rect] = []  # sign boards, in level-layer pixels
        self.crowd = BubbleCrowd()

    @property
    def time(self) -> float:
        """Seconds of frame time drawn so far; drives blinking and animated dots."""
        return self._time

    def draw(
        self,
        surface: pygame.Surface,
        prev: WorldSnapshot,
        curr: WorldSnapshot,
        alpha: float,
        bubbles: Sequence[BubbleView],
        hud: HudView,
        frame_dt: float,
    ) -> None:
        """Draw one frame of the world blended ``alpha`` (0..1) from ``prev`` to ``curr``.

        The camera follows the actor ``curr.player_id``; ``frame_dt`` (seconds since the
        last frame) paces the camera and the animations.
        """
        started = _time.perf_counter()
        self._time += max(0.0, frame_dt)
        alpha = max(0.0, min(1.0, alpha))
        width, height = surface.get_size()
        camera = self.camera
        camera.set_viewport((width, height))

        actors = blend(prev.actors, curr.actors, alpha)
        for actor, x, y, _ in actors:
            if actor.id == curr.player_id:
                facing = 1 if actor.facing >= 0 else -1
                camera.follow(x + facing * LOOK_AHEAD, y + LOOK_UP, frame_dt)
                break

        self._ensure_layers(width, height)
        ox, oy = camera.origin
        surface.blit(self._sky, (0, 0))
        surface.blit(self._far, (round(ox * FAR_PARALLAX), oy + self._far_top))
        surface.blit(self._near, (round(ox * NEAR_PARALLAX), oy + self._near_top))
        surface.blit(self._level_layer, (ox, oy))

        zoom = camera.zoom
        held: list[tuple[PropView, float, float, float]] = []
        target: tuple[float, float, float] | None = None
        for prop, x, y, angle in blend(prev.props, curr.props, alpha):
            sx, sy = camera.world_to_screen(x, y)
            reach = max(prop.w, prop.h) * zoom
            if sx < -reach or sx > width + reach or sy < -reach or sy > height + reach:
                continue
            if prop.id == curr.grab_target:
                target = (sx, sy, max(prop.w, prop.h) * zoom)
            if prop.held:
                held.append((prop, sx, sy, angle))
            else:
                draw_prop(surface, prop, sx, sy, angle, zoom)

        anchors: dict[int, tuple[float, float]] = {}
        offscreen: dict[int, tuple[str, float, float]] = {}
        # Name tags, the player's marker and sign boards stay readable: bubbles keep off.
        keep_clear: list[pygame.Rect] = list(self.hud.rects) + self._visible_signs(width, height)
        tags_wanted: list[tuple[str, float, float]] = []
        tag_owners: list[tuple[int, float]] = []
        moods: dict[int, tuple[int, str]] = {}
        # Villagers stepping aside are drawn first and a little smaller: further back.
        for actor, x, y, angle in sorted(actors, key=lambda item: not item[0].aside):
            sx, sy = camera.world_to_screen(x, y)
            reach = max(actor.w, actor.h) * zoom
            if sx < -reach or sx > width + reach or sy < -reach or sy > height + reach:
                offscreen[actor.id] = (actor.name, sx, sy - actor.h * zoom / 2)
                continue
            top = draw_actor(
                surface, actor, sx, sy, angle, zoom * (ASIDE_SCALE if actor.aside else 1.0)
            )
            if not actor.is_player and actor.name:
                tags_wanted.append((actor.name, sx, top - 4))
                tag_owners.append((actor.id, sx))
                moods[actor.id] = (actor.attitude, actor.action)
            else:
                keep_clear.append(pygame.Rect(round(sx) - 8, round(top), 16, 12))
            anchors[actor.id] = (sx, top - 2)
        for prop, sx, sy, angle in held:
            draw_prop(surface, prop, sx, sy, angle, zoom)
        # Tags go over carried props, so a crate on the player's head never hides a name.
        placed = layout_tags(tags_wanted, lambda name: self.tags.get(name).get_size())
        for (actor_id, sx), tag in zip(tag_owners, placed, strict=True):
            attitude, action = moods.get(actor_id, (0, ""))
            surface.blit(self.tags.get(tag.text, attitude), tag.rect)
            keep_clear.append(tag.rect)
            anchors[actor_id] = (sx, tag.rect.top - 2)
            if action:
                emote = draw_emote(
                    surface, self.text, action, (tag.rect.right + 3, tag.rect.centery)
                )
                if emote is not None:
                    keep_clear.append(emote)
        if curr.grab_target is not None and target is not None:
            draw_highlight(surface, *target, self._time, self.text)
        for cheer in hud.cheers:
            if cheer.giver_id in anchors:
                draw_cheer(surface, cheer, anchors[cheer.giver_id])

        # The HUD panels are last frame's: the HUD draws after the bubbles and barely moves.
        on_screen, markers = self.crowd.select(bubbles, anchors, offscreen, self._time)
        self.last_bubble_rects = self.bubbles.draw(
            surface, on_screen, anchors, self._time, obstacles=keep_clear
        )
        self._draw_markers(surface, markers)
        # The throw's path goes over the bubbles: it is what the player is aiming with.
        if curr.aim is not None:
            draw_aim(surface, curr.aim, camera.world_to_screen)
        hud_started = _time.perf_counter()
        self.hud.draw(surface, hud, curr, self._time)
        done = _time.perf_counter()
        self.last_hud_ms = (done - hud_started) * 1000.0
        self.last_draw_ms = (done - started) * 1000.0

    def _visible_signs(self, width: int, height: int) -> list[pygame.Rect]:
        ox, oy = self.camera.origin
        screen = pygame.Rect(0, 0, width, height)
        moved = (r.move(ox, oy) for r in self._signs)
        return [r for r in moved if r.colliderect(screen)]

    def _draw_markers(
        self, surface: pygame.Surface, markers: Sequence[tuple[str, float, float]]
    ) -> None:
        taken: list[pygame.Rect] = []
        for name, sx, sy in markers:
            draw_edge_marker(surface, name, sx, sy, self.text, taken)

    def screenshot(self, surface: pygame.Surface, path: str | Path) -> Path:
        """Save the last drawn frame on ``surface`` to ``path``; see ``screenshot``."""
        return screenshot(surface, path)

    def _ensure_layers(self, width: int, height: int) -> None:
        key = (self.camera.zoom, width, height)
        if key == self._layers_key:
            return
        started = _time.perf_counter()
        zoom = self.camera.zoom
        self._sky = _for_display(build_sky((width, height)))
        if self._layers_key is None or self._layers_key[:2] != key[:2]:
            far, self._far_top = build_hills(self.level, zoom, width, FAR_PARALLAX, near=False)
            near, self._near_top = build_hills(self.level, zoom, width, NEAR_PARALLAX, near=True)
            self._far, self._near = _for_display(far), _for_display(near)
        if self._layers_key is None or self._layers_key[0] != zoom:
            self._signs = []
            self._level_layer = _for_display(
                build_level_layer(self.level, zoom, self.text, self._signs)
            )
        self._layers_key = key
        logger.debug(
            "background layers for %s built in %.1f ms",
            key,
            (_time.perf_counter() - started) * 1000,
        )
