"""One running village: the world, its dialogue, and the per-tick glue between them."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Protocol

from game.config.live import LiveSettings
from game.core.stats import RecentSamples
from game.decisions.decider import Decider
from game.dialogue.line_source import SourceStatus
from game.dialogue.speech import Dialogue
from game.sim.events import ErrandCompleted, GameEvent, NpcTransitioned
from game.sim.player import PlayerIntent
from game.sim.ticks import DT
from game.sim.world import World

Clock = Callable[[], float]


class AfterTick(Protocol):
    """Something that runs at the end of every tick (the autosave)."""

    def after_tick(self, tick: int) -> None:
        """Called with the tick just simulated."""


class Session:
    """Steps the world one fixed tick and lets the dialogue and decisions react, timing it.

    The same object runs behind the window and in headless runs, so the tick timings
    that CI checks are the timings a player gets. ``ai`` is the line source's status:
    mode, load progress and figures, for the HUD, the report and the F5 switch.
    """

    def __init__(
        self,
        world: World,
        dialogue: Dialogue,
        ai: SourceStatus,
        clock: Clock = time.perf_counter,
        decider: Decider | None = None,
    ) -> None:
        self.world = world
        self.dialogue = dialogue
        self.decider = decider
        self.ai = ai
        self._clock = clock
        self.tick_ms = RecentSamples(limit=DT * 1000.0)
        self.events: Counter[str] = Counter()
        self.npc_transitions = 0
        self.errands_done = 0
        self.autosave: AfterTick | None = None
        self.live_settings: LiveSettings | None = None
        """Takes in edits to the config files while the game runs, when watched."""
        self.notices: list[str] = []
        """One-line messages for the player from setting up (the save could not be used),
        shown by the window when it opens."""
        self.last_events: list[GameEvent] = []
        """The events of the latest tick, for tools and tests that watch the village."""

    @property
    def tick(self) -> int:
        """The number of ticks simulated so far."""
        return self.world.tick

    def step(self, intent: PlayerIntent) -> None:
        """Simulate one tick: physics and villagers, then speech."""
        start = self._clock()
        if self.world.welcome_pending:
            self.world.welcome_held = self.ai.voices_loading()
        events = self.last_events = self.world.step(intent)
        tick = self.world.tick
        self.dialogue.handle_events(tick, events)
        decider = self.decider
        if decider is not None:
            decider.handle_events(tick, events)
        self.dialogue.update(tick)
        if decider is not None:
            decider.update(tick)
        if self.autosave is not None:
            self.autosave.after_tick(tick)
        if self.live_settings is not None:
            self.live_settings.after_tick(tick)
        self.tick_ms.add((self._clock() - start) * 1000.0)
        for event in events:
            self.events[type(event).__name__] += 1
            if isinstance(event, NpcTransitioned):
                self.npc_transitions += 1
            elif isinstance(event, ErrandCompleted):
                self.errands_done += 1

    def take_notices(self) -> list[str]:
        """Messages for the player since the last call: a model swap, a settings reload."""
        notices = self.ai.take_notices()
        if self.live_settings is not None:
            notices += self.live_settings.take_notices()
        return notices

    def last_tick_ms(self) -> float:
        """How long the most recent tick took to process."""
        return self.tick_ms.last()

    def close(self) -> None:
        """Release the dialogue's line source (and with it any model thread)."""
        self.dialogue.close()
