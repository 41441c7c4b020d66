"""The desktop window: events in, fixed-step simulation, interpolated drawing out; and
opening it, with the fonts checked first."""

from __future__ import annotations

import logging
import math
import os
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

import pygame

from game.assets import AssetError
from game.cli import EXIT_OK, fail
from game.config.settings import GameConfig
from game.core.gcwatch import settle_heap
from game.core.loop import FixedStepLoop
from game.core.session import Session
from game.core.shutdown import StopRequest
from game.input.controls import Controls
from game.input.keys import Action, pressed
from game.render.renderer import Renderer, screenshot
from game.render.text import BOLD_FONT, REGULAR_FONT
from game.sim.player import PlayerIntent
from game.sim.snapshot import WorldSnapshot
from game.sim.ticks import HZ
from game.ui.chat_box import ChatBox
from game.ui.pause_menu import PauseMenu
from game.ui.views import CheerView, HudView

logger = logging.getLogger(__name__)

_GRAPH_FRAMES = 240
TITLE = "Zerostall"
HINT = "F1: help"
HINT_S = (8.0, 2.0)
"""The start hint holds for 8 s, then fades over 2 s."""
CHEER_S = 3.5
#: The AI figures are re-read this often; they change slowly and a panel that redraws
#: faster than 4 Hz cannot be read anyway. Reading them sorts the metric windows.
_STATS_REFRESH_S = 0.25
_NOTICE_S = 8.0
"""How long a notice (about the save, a model swap, a settings reload) stays on screen."""


class GameWindow:
    """Owns the pygame window and runs the interactive loop until the player quits."""

    def __init__(
        self,
        village: Session,
        config: GameConfig,
        *,
        launched_at: float | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.village = village
        self.launched_at = launched_at
        self.config = config
        self.now = clock
        flags = pygame.RESIZABLE | (pygame.FULLSCREEN if config.window.fullscreen else 0)
        size = (config.window.width, config.window.height)
        # The dummy driver (tests, CI) has no renderer to sync with.
        vsync = config.window.vsync and os.environ.get("SDL_VIDEODRIVER") != "dummy"
        self.surface = pygame.display.set_mode(size, flags, vsync=int(vsync))
        pygame.display.set_caption(TITLE, TITLE)
        self.renderer = Renderer(village.world.level_view())
        self.loop = FixedStepLoop(
            clock,
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
        self.menu = PauseMenu()
        self.chat = ChatBox(village.world, village.dialogue)
        self._typing = False
        self.started_at = clock()
        self.cheers: list[tuple[int, str, float]] = []  # giver, title, when it finished
        self.toast = " ".join(village.notices)
        self.toast_until = clock() + _NOTICE_S if village.notices else 0.0
        self.ai_stats: tuple[tuple[str, str], ...] = ()
        self._stats_at = -_STATS_REFRESH_S
        self.first_frame_ms: float | None = None
        self.running = True
        self.prev: WorldSnapshot = village.world.snapshot()
        self.curr: WorldSnapshot = self.prev

    def run(self, max_frames: int = 0, screenshot_path: Path | None = None) -> None:
        """Run until the window closes, or for ``max_frames`` frames when that is set."""
        frames = 0
        last = self.now()
        while self.running:
            for event in pygame.event.get():
                self._handle_event(event)
            # The opening key's text arrives in the same batch, if at all; a later "t"
            # is the player's.
            self.chat.end_batch()
            if not self.paused:
                self.loop.advance(self._step)
                if self._typing and not self.chat.is_open:
                    pygame.key.stop_text_input()  # the chat ended on its own
                    self._typing = False
            now = self.now()
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
        self.first_frame_ms = (self.now() - self.launched_at) * 1000.0
        logger.info("first frame after %.0f ms", self.first_frame_ms)

    def _step(self, _tick: int) -> None:
        self.step(self.controls.take_intent())

    def step(self, intent: PlayerIntent) -> None:
        """One fixed tick as the window runs it: the village, the frames, the chat, cheers.

        The loop feeds it the player's keys; tools that drive a window feed it intents.
        """
        self.village.step(intent)
        self.prev, self.curr = self.curr, self.village.world.snapshot()
        self.chat.update()
        notices = self.village.take_notices()  # a model swap, a settings reload
        if notices:
            self._say("  ".join(notices), _NOTICE_S)
        self._cheer_finished_errands()

    def _cheer_finished_errands(self) -> None:
        before = {e.id: e.done for e in self.prev.errands}
        for errand in self.curr.errands:
            if errand.done and not before.get(errand.id, True):
                self.cheers.append((errand.giver_id, errand.title, self.now()))
                logger.info("errand %s done", errand.id)

    def _cheer_views(self, now: float) -> tuple[CheerView, ...]:
        self.cheers = [c for c in self.cheers if now - c[2] < CHEER_S]
        return tuple(CheerView(g, t, (now - at) / CHEER_S) for g, t, at in self.cheers)

    def _hint_alpha(self, now: float) -> float:
        hold, fade = HINT_S
        return max(0.0, min(1.0, 1.0 - (now - self.started_at - hold) / fade))

    def _hud(self) -> HudView:
        ai = self.village.ai
        now = self.now()
        if self.show_graph and now - self._stats_at >= _STATS_REFRESH_S:
            rows = self.village.dialogue.hud_rows() + ai.hud_stats()
            if self.village.decider is not None:
                rows += self.village.decider.hud_rows()
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
            chat=self.chat.view(),
            toast=self.toast if now < self.toast_until else "",
            pause_items=self.menu.labels if self.paused else (),
            pause_choice=self.menu.choice,
            hint=HINT,
            hint_alpha=self._hint_alpha(now),
            cheers=self._cheer_views(now),
        )

    def _handle_event(self, event: pygame.event.Event) -> None:
        if event.type == pygame.QUIT:
            self.running = False
        elif event.type == pygame.KEYDOWN:
            if self.chat.is_open:
                self._chat_key(event.key)
            elif self.paused:
                self._menu_key(event.key)
            else:
                self._key(event.key, getattr(event, "unicode", ""))
        elif event.type == pygame.KEYUP:
            self.controls.key_up(event.key)
        elif event.type == pygame.TEXTINPUT and self.chat.is_open:
            self.chat.type(event.text)
        elif event.type == pygame.MOUSEWHEEL and not self.paused:
            self.controls.wheel(event.y)
        elif event.type == pygame.MOUSEMOTION and not self.paused:
            self.controls.mouse_aim = self._mouse_aim(event.pos)
        elif event.type == pygame.MOUSEBUTTONDOWN and self.paused and event.button == 1:
            for i, rect in enumerate(self.renderer.hud.menu_rects):
                if rect.collidepoint(event.pos):
                    self._menu_pick(i)

    def _key(self, key: int, typed: str = "") -> None:
        if pressed(key, Action.PAUSE):
            self._pause(True)
        elif pressed(key, Action.HELP):
            self.show_help = not self.show_help
        elif pressed(key, Action.STATS):
            self.show_graph = not self.show_graph
            self._stats_at = -_STATS_REFRESH_S  # fresh figures the moment the panel opens
        elif pressed(key, Action.AI_MODE):
            self._say(f"AI mode: {self.village.ai.toggle_mode()}")
        elif pressed(key, Action.SCREENSHOT):
            path = Path(f"zerostall-{int(time.time())}.png")
            screenshot(self.surface, path)
            self._say(f"Saved {path}")
        elif pressed(key, Action.TALK):
            # SDL also sends the key that opened the chat as typed text ("t").
            if self.chat.open(swallow=typed):
                self.controls.release_all()
                pygame.key.start_text_input()
                self._typing = True
        else:
            self.controls.key_down(key)

    def _menu_key(self, key: int) -> None:
        if pressed(key, Action.PAUSE):
            self._pause(False)
        elif pressed(key, Action.MENU_UP):
            self.menu.move(-1)
        elif pressed(key, Action.MENU_DOWN):
            self.menu.move(1)
        elif pressed(key, Action.CONFIRM):
            self._menu_pick(None)
        elif pressed(key, Action.HELP):
            self.show_help = not self.show_help

    def _menu_pick(self, index: int | None) -> None:
        item = self.menu.pick(index)
        if item.action == "quit":
            self.running = False
        elif item.action == "voice":
            self._pause(False)
            self._say(self.village.ai.toggle_adapter())
        elif item.action == "model" and item.model is not None:
            self._pause(False)
            self._say(self.village.ai.use_model_file(item.model))
        else:
            self._pause(False)

    def _pause(self, paused: bool) -> None:
        self.paused = paused
        self.menu.reset(self.village.ai.model_choices() if paused else ())
        self.controls.release_all()
        self.loop.reset()

    def _chat_key(self, key: int) -> None:
        if key in (pygame.K_LEFT, pygame.K_RIGHT):  # not A / D: those letters are typed
            # The arrows still walk while chatting (letters are for typing), so the
            # player can walk away mid-conversation.
            self.controls.key_down(key)
        elif pressed(key, Action.PAUSE):
            self.chat.close()
        elif pressed(key, Action.SEND):
            self.chat.submit()
        elif pressed(key, Action.ERASE):
            self.chat.backspace()
        if not self.chat.is_open:
            pygame.key.stop_text_input()
            self._typing = False

    def _mouse_aim(self, pos: tuple[int, int]) -> float:
        """The throw angle toward the mouse pointer, mirrored if it is behind the player."""
        player = self.village.world.player_status()
        sx, sy = self.renderer.camera.world_to_screen(player.x, player.y + 40.0)
        return math.atan2(sy - pos[1], abs(pos[0] - sx) + 1e-6)

    def _say(self, text: str, seconds: float = 2.5) -> None:
        self.toast, self.toast_until = text, self.now() + seconds


def run_window(
    village: Session,
    config: GameConfig,
    stop: StopRequest,
    *,
    frames: int = 0,
    screenshot_path: Path | None = None,
    launched_at: float | None = None,
) -> int:
    """Open the window and play until the player quits (or ``frames`` frames, or ``stop``).

    Returns the exit code: 2 when the fonts are damaged or no window can be opened.
    """
    # Only what the window needs: ``pygame.init()`` also probes audio, which costs about
    # 100 ms at startup (longer on machines without a sound card) for sound we never play.
    try:
        pygame.display.init()
        pygame.font.init()
        check_fonts((REGULAR_FONT, BOLD_FONT))
    except AssetError as exc:
        pygame.quit()
        return fail(str(exc))
    except pygame.error:
        pass  # no display: reported just below, where the window is opened
    try:
        window = GameWindow(village, config, launched_at=launched_at)
    except pygame.error as exc:
        pygame.quit()
        return fail(
            f"cannot open a window ({exc}); on a machine without a display, run with --headless"
        )

    def finish_frame() -> None:
        window.running = False

    stop.on_stop(finish_frame)
    try:
        settle_heap()
        window.run(max_frames=frames, screenshot_path=screenshot_path)
    finally:
        pygame.quit()
    return EXIT_OK


def check_fonts(paths: tuple[Path, ...]) -> None:
    """Open each bundled font that exists, so a corrupt one stops the game with one line.

    A missing font is fine (pygame's default font stands in); a damaged one would
    otherwise fail at the first frame. Needs ``pygame.font.init()``. Raises AssetError.
    """
    for path in paths:
        if not path.is_file():
            continue
        try:
            # Opening succeeds on garbage; measuring text is what touches the glyphs.
            pygame.font.Font(path, 12).size("Zerostall")
        except (pygame.error, OSError, ValueError) as exc:
            raise AssetError(f"{path}: cannot load font: {exc}") from None
