"""Routes villagers' wishes to speak to a line source, and puts finished lines up."""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from typing import IO

from ai import sanitize_player_text
from ai.content import ContentFilter
from game.core.stats import RecentSamples, tick_quantiles
from game.dialogue.bubble_board import BubbleBoard
from game.dialogue.disruptions import Disruptions
from game.dialogue.line_source import LineAsk, LineCut, LinePartial, LineReady, LineSource
from game.dialogue.memory import (
    ASKED_FACT,
    BUMPED_FACT,
    ERRAND_FACT,
    PLAYER_SPEAKER,
    THREW_FACT,
    Memories,
)
from game.headless.report import LineLatency, LinesReport
from game.sim.events import (
    ErrandCompleted,
    GameEvent,
    PlayerBumpedNpc,
    PropHitNpc,
    SpeechWanted,
    Trigger,
)
from game.sim.ticks import ticks
from game.ui.views import BubbleKind, BubbleView

logger = logging.getLogger(__name__)

_MODEL_ORIGINS = frozenset({"model", "prepared"})
"""The origins of lines the model wrote (a prepared greeting among them)."""

# Latencies kept per trigger for the report: plenty for percentiles, bounded for long play.
_LATENCY_WINDOW = 4096
# How long a chat reply stays up before another line of the villager's may replace it: a
# second to look up at it, and a reader's pace of about 200 words a minute.
_READ_S = 1.0
_READ_S_PER_WORD = 0.3


def read_ticks(text: str) -> int:
    """The ticks a player needs to read ``text`` in a bubble."""
    return ticks(_READ_S + _READ_S_PER_WORD * len(text.split()))


def with_article(noun: str) -> str:
    """ "a crate", "an apple"."""
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


class Dialogue:
    """The game side of speech: asks go out through one ``LineSource``, lines come back.

    Every line request in the game passes through here, so a different source (template
    lines, or the language model) changes where words come from and nothing else. Lines
    enter a villager's memory only here, at the moment their bubble appears. Each tick's
    events are read once, here: wishes to speak become asks, and hits and falls are
    recorded as disruptions for the validator.
    """

    def __init__(
        self,
        source: LineSource,
        names: Mapping[int, str],
        bubble_ticks: int,
        chat_bubble_ticks: int,
        *,
        player_text_max_chars: int = 200,
        memories: Memories | None = None,
        disruptions: Disruptions | None = None,
        bubble_log: IO[str] | None = None,
        kind_of: Callable[[int], str | None] | None = None,
        player_dx: Callable[[int], float | None] | None = None,
        clock: Callable[[], float] = time.perf_counter,
        topic_of: Callable[[int, str], str] | None = None,
        on_reply: Callable[[int, int, str], None] | None = None,
        content: ContentFilter | None = None,
        refusals: Mapping[int, Sequence[str]] | None = None,
    ) -> None:
        self.source = source
        self.board = BubbleBoard()
        self.memories = memories or Memories()
        self._disruptions = disruptions
        self._names = names
        self._bubble_ticks = bubble_ticks
        self._chat_bubble_ticks = chat_bubble_ticks
        self._player_text_max_chars = player_text_max_chars
        self._log = bubble_log
        self._kind_of = kind_of
        self._player_dx = player_dx
        """What an entity is ("apple"), for the bubble log's ``subject``."""
        self._clock = clock
        self._topic_of = topic_of
        self.on_reply = on_reply
        """Called with (tick, villager, player's line) once the reply to that line is over:
        on screen, or cut because the world moved on (the villager still heard it)."""
        self._content = content
        self._refusals = refusals or {}
        self._refused_turn: Counter[int] = Counter()
        self._heard: dict[int, str] = {}
        self.asked: Counter[str] = Counter()
        self.shown: Counter[str] = Counter()
        self.shown_by_trigger: Counter[tuple[str, str]] = Counter()
        self.latency_ticks: dict[str, deque[int]] = {}
        self.ai_ms = RecentSamples()
        self._tick_ai_s = 0.0

    def use_settings(
        self, bubble_ticks: int, chat_bubble_ticks: int, player_text_max_chars: int
    ) -> None:
        """Show bubbles shown from now on this long, and cut player text at this length."""
        self._bubble_ticks = bubble_ticks
        self._chat_bubble_ticks = chat_bubble_ticks
        self._player_text_max_chars = player_text_max_chars

    def handle_events(self, tick: int, events: Sequence[GameEvent]) -> None:
        """Turn this tick's wishes to speak into asks, and remember what matters."""
        disruptions = self._disruptions
        for event in events:
            if disruptions is not None:
                disruptions.handle_event(tick, event)
            if isinstance(event, SpeechWanted):
                self.ask(LineAsk(tick, event.npc_id, event.trigger, event.listener_id, event.refs))
            elif isinstance(event, PropHitNpc) and event.thrown_by_player:
                thrown = with_article(event.prop_kind) if event.prop_kind else "something"
                self.memories.of(event.npc_id).add_fact(f"{THREW_FACT}{thrown} at them")
            elif isinstance(event, PlayerBumpedNpc):
                self.memories.of(event.npc_id).add_fact(BUMPED_FACT)
            elif isinstance(event, ErrandCompleted):
                self.memories.of(event.giver_id).add_fact(ERRAND_FACT)

    def ask(self, ask: LineAsk) -> None:
        """Send one ask to the line source."""
        self.asked[ask.trigger.value] += 1
        start = self._clock()
        self.source.request(ask)
        self._tick_ai_s += self._clock() - start

    def say(self, tick: int, npc_id: int, player_id: int, text: str) -> str:
        """The player said ``text`` to a villager; remember it and ask for the reply.

        The text is cleaned and capped here, where it enters the game, so the prompt
        and the memory see the same safe line. Text the content filter's word list
        refuses is never remembered nor sent to the model: the villager answers with
        one of their refusals. Returns the line as it was kept ("" if nothing was left
        of it or it was refused, and then nothing is asked).
        """
        text = sanitize_player_text(text, self._player_text_max_chars)
        if not text:
            return ""
        if not self._fits(text):
            self._refuse(tick, npc_id)
            return ""
        memory = self.memories.of(npc_id)
        memory.record_shown(PLAYER_SPEAKER, text)
        memory.met = True
        self._heard[npc_id] = text
        self.ask(LineAsk(tick, npc_id, Trigger.CHAT, player_id, player_text=text))
        return text

    def typing(self, tick: int, npc_id: int, player_id: int, text: str) -> None:
        """The player has typed ``text`` to a villager and not sent it yet.

        The source may read the reply's prompt ahead, so that the reply starts the
        moment the line is sent. Nothing is remembered until it is.
        """
        text = sanitize_player_text(text, self._player_text_max_chars)
        if text and self._fits(text):
            start = self._clock()
            self.source.prepare(LineAsk(tick, npc_id, Trigger.CHAT, player_id, player_text=text))
            self._tick_ai_s += self._clock() - start

    def _fits(self, text: str) -> bool:
        """The word list on the player's text (cheap; the main thread may run it)."""
        return self._content is None or self._content.check_words(text).ok

    def _refuse(self, tick: int, npc_id: int) -> None:
        """The villager turns the player's words down in their own voice."""
        lines = self._refusals.get(npc_id, ())
        turn = self._refused_turn[npc_id]
        self._refused_turn[npc_id] += 1
        text = lines[turn % len(lines)] if lines else "..."
        self.board.show(npc_id, text, tick, self._chat_bubble_ticks, "chat", read_ticks(text))
        self.shown["refusal"] += 1
        memory = self.memories.of(npc_id)
        memory.record_shown(self._names.get(npc_id, "?"), text)
        memory.met = True
        logger.info("tick %d: npc %d refused the player's words", tick, npc_id)

    def update(self, tick: int) -> None:
        """Show what the source has ready, update streaming bubbles, expire old ones."""
        start = self._clock()
        events = self.source.poll(tick)
        self.ai_ms.add((self._tick_ai_s + self._clock() - start) * 1000.0)
        self._tick_ai_s = 0.0
        for event in events:
            if isinstance(event, LineReady):
                self._show(tick, event)
            elif isinstance(event, LinePartial):
                kind: BubbleKind = "chat" if event.text else "thinking"
                text = event.text or "..."
                self.board.stream(event.npc_id, text, tick, self._chat_bubble_ticks, kind)
            elif isinstance(event, LineCut):
                # A cut reply showed no words; words up (another reply's) stay.
                self.board.clear_thinking(event.npc_id)
                heard = self._heard.pop(event.npc_id, "")
                if heard and self.on_reply is not None:
                    self.on_reply(tick, event.npc_id, heard)
        self.board.expire(tick)

    def _subject(self, ask: LineAsk) -> str:
        """The kind of thing the line is about (the prop that hit), "" if none or gone."""
        if not ask.refs or self._kind_of is None:
            return ""
        return self._kind_of(ask.refs[0]) or ""

    def _show(self, tick: int, ready: LineReady) -> None:
        ask = ready.ask
        if ready.origin == "refusal":
            # The worker's semantic layer refused the player's words: take them back.
            self._heard.pop(ask.npc_id, None)
            self.memories.of(ask.npc_id).forget(PLAYER_SPEAKER, ask.player_text)
            self._refuse(tick, ask.npc_id)
            return
        chat = ask.trigger is Trigger.CHAT
        ttl = self._chat_bubble_ticks if chat else self._bubble_ticks
        shown_as: BubbleKind = (
            "fallback" if ready.origin == "fallback" else ("chat" if chat else "line")
        )
        # A chat reply stays up until it has been read: a farewell or a bark waits.
        read = read_ticks(ready.text) if chat else 0
        self.board.show(ask.npc_id, ready.text, tick, ttl, shown_as, read, reply=chat)
        self.shown[ready.origin] += 1
        self.shown_by_trigger[(ask.trigger.value, ready.origin)] += 1
        latency = self.latency_ticks.setdefault(ask.trigger.value, deque(maxlen=_LATENCY_WINDOW))
        latency.append(tick - ask.tick)
        memory = self.memories.of(ask.npc_id)
        memory.record_shown(self._names.get(ask.npc_id, "?"), ready.text)
        if ask.listener_id is not None and ask.listener_id not in self._names:
            memory.met = True  # said to the traveller: not to a villager, nor to nobody
        logger.debug("tick %d: npc %d says %r (%s)", tick, ask.npc_id, ready.text, ready.origin)
        if self._log is not None:
            record = {
                "tick": tick,
                "npc_id": ask.npc_id,
                "name": self._names.get(ask.npc_id, "?"),
                "listener": None if ask.listener_id is None else self._names.get(ask.listener_id),
                "remembers": list(memory.facts),
                "trigger": ask.trigger.value,
                "subject": self._subject(ask),
                "asked_tick": ask.tick,
                "origin": ready.origin,
                "tier": ready.tier,
                "request_id": ready.request_id,
                "text": ready.text,
                # How far the speaker stands from the player along x: whether the line
                # was in view (the view follows the player).
                "player_dx": None if self._player_dx is None else self._player_dx(ask.npc_id),
                "snapshot": None if ready.snapshot is None else dataclasses.asdict(ready.snapshot),
                "live": ready.live,
            }
            self._log.write(json.dumps(record) + "\n")
        if ask.trigger is Trigger.CHAT and ask.player_text and self._topic_of is not None:
            # Remembered once the reply is on screen, so the reply's own prompt (read ahead
            # while the player typed) is the one that was sent.
            topic = self._topic_of(ask.npc_id, ask.player_text)
            if topic:
                memory.add_fact(f"{ASKED_FACT}{topic}")
        if ask.trigger is Trigger.CHAT and ask.player_text:
            self._heard.pop(ask.npc_id, None)
            if self.on_reply is not None:
                self.on_reply(tick, ask.npc_id, ask.player_text)

    def bubbles(self, tick: int) -> tuple[BubbleView, ...]:
        """What the renderer should draw now."""
        return self.board.views(tick)

    def hud_rows(self) -> tuple[tuple[str, str], ...]:
        """The dialogue's own rows for the HUD's stats panel."""
        shown = sum(self.shown.values())
        return (("lines asked", str(sum(self.asked.values()))), ("lines shown", str(shown)))

    def report(self) -> LinesReport:
        """Counts for the headless report."""
        by_trigger: dict[str, dict[str, int]] = {}
        for (trigger, origin), count in sorted(self.shown_by_trigger.items()):
            by_trigger.setdefault(trigger, {})[origin] = count
        share = {
            trigger: round(
                sum(n for o, n in origins.items() if o in _MODEL_ORIGINS) / sum(origins.values()), 4
            )
            for trigger, origins in by_trigger.items()
        }
        return LinesReport(
            dict(self.asked),
            dict(self.shown),
            self.memories.lines_remembered(),
            by_trigger,
            share,
        )

    def latency_report(self) -> LineLatency:
        """How soon lines appeared after they were asked for, and the AI's cost per tick."""
        greetings = list(self.latency_ticks.get(Trigger.GREET.value, ()))
        all_latency = [t for ticks in self.latency_ticks.values() for t in ticks]
        return LineLatency(
            encounters=self.asked[Trigger.GREET.value],
            encounters_shown=len(greetings),
            encounter_latency_ticks=tick_quantiles(greetings),
            greetings_within_1_tick=sum(1 for t in greetings if t <= 1),
            line_latency_ticks=tick_quantiles(all_latency),
            main_thread_ai_ms=self.ai_ms.summary(),
        )

    def close(self) -> None:
        """Release the line source."""
        self.source.close()
