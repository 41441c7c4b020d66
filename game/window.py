"""The desktop window: events in, fixed-step simulation, interpolated drawing out."""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from pathlib import Path

import pygame

from game.config import GameConfig
from game.input.controls import Controls
from game.loop import FixedStepLoop
from game.render.renderer import Renderer, screenshot
from game.session import Session
from game.sim.snapshot import WorldSnapshot
from game.sim.ticks import HZ
from game.views import HudView

logger = logging.getLogger(__name__)

_GRAPH_FRAMES = 240
_CHAT_MAX = 160
#: The AI figures are re-read this often; they change slowly and a panel that redraws
#: faster than 4 Hz cannot be read anyway. Reading them sorts the metric windows.
_STATS_REFRESH_S = 0.25


class GameWindow:
    """Owns the pygame window and runs the interactive loop until the player quits."""

    def __init__(
        self, village: Session, config: GameConfig, *, launched_at: float | None = None
    ) -> None:
        self.village = village
        self.launched_at = launched_at
        self.config = config
        flags = pygame.RESIZABLE | (pygame.FULLSCREEN if config.window.fullscreen else 0)
        size = (config.window.width, config.window.height)
        # The dummy driver (tests, CI) has no renderer to sync with.
        vsync = config.window.vsync and os.environ.get("SDL_VIDEODRIVER") != "dummy"
        self.surface = pygame.display.set_mode(size, flags, vsync=int(vsync))
        pygame.display.set_caption("Zerostall — a village that never waits")
        self.renderer = Renderer(village.world.level_view())
        self.loop = FixedStepLoop(
            time.perf_counter,
            HZ,
            config.loop.max_frame_s,
            config.loop.max_steps_per_frame,
        )
        self.controls = Controls()
        self.clock = pygame.time.Clock()
        self.frame_ms: deque[float] = deque(maxlen=_GRAPH_FRAMES)
        self.show_help = False
        self.show_graph = False
        self.paused = False
        self.chat: str | None = None
        self.chat_npc: int | None = None
        self._swallow = ""  # typed text to drop once: the key that opened the chat
        self.toast = ""
        self.toast_until = 0.0
        self.ai_stats: tuple[tuple[str, str], ...] = ()
        self._stats_at = -_STATS_REFRESH_S
        self.first_frame_ms: float | None = None
        self.running = True
        self.prev: WorldSnapshot = village.world.snapshot()
        self.curr: WorldSnapshot = self.prev

    def run(self, max_frames: int = 0, screenshot_path: Path | None = None) -> None:
        """Run until the window closes, or for ``max_frames`` frames when that is set."""
        frames = 0
        last = time.perf_counter()
        while self.running:
            for event in pygame.event.get():
                self._handle_event(event)
            # The opening key's text arrives in the same batch, if at all; a later "t"
            # is the player's.
            self._swallow = ""
            if not self.paused:
                self.loop.advance(self._step)
            now = time.perf_counter()
            frame_dt, last = now - last, now
            self.frame_ms.append(frame_dt * 1000.0)
            alpha = self.loop.accumulator / self.loop.dt
            tick = self.village.tick
            self.renderer.draw(
                self.surface,
                self.prev,
                self.curr,
                alpha,
                self.village.dialogue.bubbles(tick),
                self._hud(),
                frame_dt,
            )
            pygame.display.flip()
            if frames == 0:
                self._log_first_frame()
            self.clock.tick(self.config.window.max_fps)
            frames += 1
            if max_frames and frames >= max_frames:
                break
        if screenshot_path is not None:
            screenshot(self.surface, screenshot_path)
            logger.info("screenshot saved to %s", screenshot_path)

    def _log_first_frame(self) -> None:
        if self.launched_at is None:
            return
        self.first_frame_ms = (time.perf_counter() - self.launched_at) * 1000.0
        logger.info("first frame after %.0f ms", self.first_frame_ms)

    def _step(self, _tick: int) -> None:
        self.village.step(self.controls.take_intent())
        self.prev, self.curr = self.curr, self.village.world.snapshot()
        if self.chat_npc is not None and not self._in_talk_range(self.chat_npc):
            self._close_chat()

    def _hud(self) -> HudView:
        ai = self.village.ai
        now = time.perf_counter()
        if self.show_graph and now - self._stats_at >= _STATS_REFRESH_S:
            rows = self.village.dialogue.hud_rows() + ai.hud_stats()
            self.ai_stats, self._stats_at = rows, now
        return HudView(
            fps=self.clock.get_fps(),
            tick_ms=self.village.last_tick_ms(),
            frame_ms=tuple(self.frame_ms) if self.show_graph else (),
            show_graph=self.show_graph,
            show_help=self.show_help,
            paused=self.paused,
            mode=ai.mode,
            load=ai.load_view(),
            ai_stats=self.ai_stats if self.show_graph else (),
            chat_input=self.chat,
            chat_target=self._name_of(self.chat_npc),
            toast=self.toast if now < self.toast_until else "",
        )

    def _handle_event(self, event: pygame.event.Event) -> None:
        if event.type == pygame.QUIT:
            self.running = False
        elif event.type == pygame.KEYDOWN:
            if self.chat is not None:
                self._chat_key(event)
            else:
                self._key(event.key, getattr(event, "unicode", ""))
        elif event.type == pygame.KEYUP:
            self.controls.key_up(event.key)
        elif event.type == pygame.TEXTINPUT and self.chat is not None:
            swallow, self._swallow = self._swallow, ""
            if event.text != swallow or self.chat:
                self.chat = (self.chat + event.text)[:_CHAT_MAX]

    def _key(self, key: int, typed: str = "") -> None:
        if key == pygame.K_ESCAPE:
            self.paused = not self.paused
            self.loop.reset()
        elif key == pygame.K_F1:
            self.show_help = not self.show_help
        elif key == pygame.K_F3:
            self.show_graph = not self.show_graph
            self._stats_at = -_STATS_REFRESH_S  # fresh figures the moment the panel opens
        elif key == pygame.K_F5:
            self._say(f"AI mode: {self.village.ai.toggle_mode()}")
        elif key == pygame.K_F12:
            path = Path(f"zerostall-{int(time.time())}.png")
            screenshot(self.surface, path)
            self._say(f"Saved {path}")
        elif key in (pygame.K_t, pygame.K_RETURN):
            self._open_chat()
            if self.chat is not None:
                # SDL also sends the key that opened the chat as typed text ("t").
                self._swallow = typed
        else:
            self.controls.key_down(key)

    def _chat_key(self, event: pygame.event.Event) -> None:
        if event.key == pygame.K_ESCAPE:
            self._close_chat()
        elif event.key in (pygame.K_RETURN, pygame.K_KP_ENTER):
            text, npc_id = (self.chat or "").strip(), self.chat_npc
            self.chat = None
            pygame.key.stop_text_input()
            if text and npc_id is not None:
                player = self.village.world.player_status()
                self.village.dialogue.say(self.village.tick, npc_id, player.id, text)
        elif event.key == pygame.K_BACKSPACE and self.chat:
            self.chat = self.chat[:-1]

    def _open_chat(self) -> None:
        npc_id = self._nearest_talker()
        if npc_id is None:
            self._say("Walk up to a villager to talk (T)")
            return
        self.controls.release_all()
        self.chat, self.chat_npc = "", npc_id
        self.village.world.set_talking(npc_id, True)
        pygame.key.start_text_input()

    def _close_chat(self) -> None:
        if self.chat_npc is not None:
            self.village.world.set_talking(self.chat_npc, False)
        self.chat, self.chat_npc = None, None
        pygame.key.stop_text_input()

    def _nearest_talker(self) -> int | None:
        world = self.village.world
        player = world.player_status()
        best: tuple[float, int] | None = None
        for npc_id in world.npc_ids():
            distance = world.distance(player.id, npc_id)
            status = world.npc(npc_id)
            if distance is None or status is None or not status.can_talk:
                continue
            if distance <= world.talk_radius and (best is None or distance < best[0]):
                best = (distance, npc_id)
        return None if best is None else best[1]

    def _in_talk_range(self, npc_id: int) -> bool:
        world = self.village.world
        distance = world.distance(world.player_status().id, npc_id)
        return distance is not None and distance <= world.talk_radius * 1.5

    def _name_of(self, npc_id: int | None) -> str:
        status = None if npc_id is None else self.village.world.npc(npc_id)
        return "" if status is None else status.name

    def _say(self, text: str) -> None:
        self.toast, self.toast_until = text, time.perf_counter() + 2.5
