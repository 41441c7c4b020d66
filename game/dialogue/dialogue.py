"""Routes villagers' wishes to speak to a line source, and puts finished lines up."""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import IO

from game.dialogue.bubbles import BubbleBoard
from game.dialogue.line_source import LineAsk, LineCut, LinePartial, LineReady, LineSource
from game.dialogue.memory import Memories
from game.views import BubbleKind, BubbleView, LoadView
from game.sim.events import (
    ErrandCompleted,
    GameEvent,
    PlayerBumpedNpc,
    PropHitNpc,
    SpeechWanted,
    Trigger,
)
from game.stats import summarize_ms, summarize_ticks

logger = logging.getLogger(__name__)

PLAYER_SPEAKER = "Player"


class Dialogue:
    """The game side of speech: asks go out through one ``LineSource``, lines come back.

    Every line request in the game passes through here, so a different source (template
    lines, or the language model) changes where words come from and nothing else. Lines
    enter a villager's memory only here, at the moment their bubble appears.
    """

    def __init__(
        self,
        source: LineSource,
        names: Mapping[int, str],
        bubble_ticks: int,
        chat_bubble_ticks: int,
        memories: Memories | None = None,
        bubble_log: IO[str] | None = None,
    ) -> None:
        self.source = source
        self.board = BubbleBoard()
        self.memories = memories or Memories()
        self._names = names
        self._bubble_ticks = bubble_ticks
        self._chat_bubble_ticks = chat_bubble_ticks
        self._log = bubble_log
        self.asked: Counter[str] = Counter()
        self.shown: Counter[str] = Counter()
        self.latency_ticks: dict[str, list[int]] = {}
        self.ai_ms: list[float] = []
        self._tick_ai_s = 0.0

    @property
    def mode(self) -> str:
        """How lines are written now, for the HUD."""
        return self.source.mode

    def handle_events(self, tick: int, events: Sequence[GameEvent]) -> None:
        """Turn this tick's wishes to speak into asks, and remember what matters."""
        start = time.perf_counter()
        self.source.notice(tick, events)
        self._tick_ai_s += time.perf_counter() - start
        for event in events:
            if isinstance(event, SpeechWanted):
                self.ask(LineAsk(tick, event.npc_id, event.trigger, event.listener_id, event.refs))
            elif isinstance(event, PropHitNpc) and event.thrown_by_player:
                self.memories.of(event.npc_id).add_fact("the traveller threw something at them")
            elif isinstance(event, PlayerBumpedNpc):
                self.memories.of(event.npc_id).add_fact("the traveller bumped into them")
            elif isinstance(event, ErrandCompleted):
                self.memories.of(event.giver_id).add_fact("the traveller helped with their errand")

    def ask(self, ask: LineAsk) -> None:
        """Send one ask to the line source."""
        self.asked[ask.trigger.value] += 1
        start = time.perf_counter()
        self.source.request(ask)
        self._tick_ai_s += time.perf_counter() - start

    def say(self, tick: int, npc_id: int, player_id: int, text: str) -> None:
        """The player said ``text`` to a villager; remember it and ask for the reply."""
        self.memories.of(npc_id).record_shown(PLAYER_SPEAKER, text)
        self.ask(LineAsk(tick, npc_id, Trigger.CHAT, player_id, player_text=text))

    def update(self, tick: int) -> None:
        """Show what the source has ready, update streaming bubbles, expire old ones."""
        start = time.perf_counter()
        events = self.source.poll(tick)
        self.ai_ms.append((self._tick_ai_s + time.perf_counter() - start) * 1000.0)
        self._tick_ai_s = 0.0
        for event in events:
            if isinstance(event, LineReady):
                self._show(tick, event)
            elif isinstance(event, LinePartial):
                kind: BubbleKind = "chat" if event.text else "thinking"
                text = event.text or "..."
                self.board.stream(event.npc_id, text, tick, self._chat_bubble_ticks, kind)
            elif isinstance(event, LineCut):
                self.board.clear(event.npc_id)
        self.board.expire(tick)

    def _show(self, tick: int, ready: LineReady) -> None:
        ask = ready.ask
        chat = ask.trigger is Trigger.CHAT
        ttl = self._chat_bubble_ticks if chat else self._bubble_ticks
        shown_as: BubbleKind = (
            "fallback" if ready.origin == "fallback" else ("chat" if chat else "line")
        )
        self.board.show(ask.npc_id, ready.text, tick, ttl, shown_as)
        self.shown[ready.origin] += 1
        self.latency_ticks.setdefault(ask.trigger.value, []).append(tick - ask.tick)
        self.memories.of(ask.npc_id).record_shown(self._names.get(ask.npc_id, "?"), ready.text)
        logger.debug("tick %d: npc %d says %r (%s)", tick, ask.npc_id, ready.text, ready.origin)
        if self._log is not None:
            record = {
                "tick": tick,
                "npc_id": ask.npc_id,
                "trigger": ask.trigger.value,
                "asked_tick": ask.tick,
                "origin": ready.origin,
                "text": ready.text,
                "snapshot": None if ready.snapshot is None else dataclasses.asdict(ready.snapshot),
                "live": ready.live,
            }
            self._log.write(json.dumps(record) + "\n")

    def bubbles(self, tick: int) -> tuple[BubbleView, ...]:
        """What the renderer should draw now."""
        return self.board.views(tick)

    def toggle_mode(self) -> str:
        """Switch the source's mode (async and sync for the model); return the new one."""
        return self.source.toggle_mode()

    def load_view(self) -> LoadView | None:
        """Model loading progress for the HUD, if any."""
        return self.source.load_view()

    def hud_stats(self) -> tuple[tuple[str, str], ...]:
        """Rows for the HUD's stats panel."""
        shown = sum(self.shown.values())
        rows = (("lines asked", str(sum(self.asked.values()))), ("lines shown", str(shown)))
        return rows + self.source.hud_stats()

    def report(self) -> dict[str, object]:
        """Counts for the headless report."""
        return {
            "asked": dict(self.asked),
            "shown": dict(self.shown),
            "remembered": self.memories.lines_remembered(),
        }

    def ai_report(self) -> dict[str, object]:
        """The report's ``ai`` section: the source's figures plus latency seen by the game."""
        greetings = self.latency_ticks.get(Trigger.GREET.value, [])
        all_latency = [t for ticks in self.latency_ticks.values() for t in ticks]
        return {
            **self.source.report(),
            "encounters": self.asked[Trigger.GREET.value],
            "encounters_shown": len(greetings),
            "encounter_latency_ticks": summarize_ticks(greetings),
            "greetings_within_1_tick": sum(1 for t in greetings if t <= 1),
            "line_latency_ticks": summarize_ticks(all_latency),
            "main_thread_ai_ms": summarize_ms(self.ai_ms),
        }

    def wait_ready(self, timeout_s: float) -> str:
        """Block until the source has loaded (for headless runs only); return its state."""
        return self.source.wait_ready(timeout_s)

    def close(self) -> None:
        """Release the source."""
        self.source.close()
