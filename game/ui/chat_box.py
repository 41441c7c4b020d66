"""The chat box as plain state: whom the player talks to, what they type, why it closed.

No pygame here. The window feeds it keys and typed text and draws what ``view`` returns;
the rules (who can be talked to, how far a chat reaches, what is sent) live here and in
the world, so they are tested without a window.
"""

from __future__ import annotations

import logging
from typing import Protocol

from game.sim.status import NpcStatus, PlayerStatus
from game.ui.views import ChatView

logger = logging.getLogger(__name__)

MAX_CHARS = 160
NOTICE_TICKS = 180
"""How long (ticks) the box keeps saying why it closed."""
NOBODY_NEAR = "Walk up to a villager to talk (T)"
PREPARE_EVERY_TICKS = 12
"""While the player types, the text goes to the dialogue at most this often (0.2 s)."""


class ChatWorld(Protocol):
    """What the chat box needs from the world."""

    @property
    def tick(self) -> int: ...

    def nearest_talker(self) -> int | None: ...

    def in_chat_range(self, npc_id: int) -> bool: ...

    def set_talking(self, npc_id: int, talking: bool) -> bool: ...

    def npc(self, npc_id: int) -> NpcStatus | None: ...

    def player_status(self) -> PlayerStatus: ...


class ChatSpeech(Protocol):
    """What the chat box needs from the dialogue: a way to say a line to a villager."""

    def say(self, tick: int, npc_id: int, player_id: int, text: str) -> str: ...

    def typing(self, tick: int, npc_id: int, player_id: int, text: str) -> None: ...


#: Actions that end a conversation at once, and what the notice says.
_ENDS_CHAT = {"turn_away": "turned away from you", "flee": "ran off"}
#: Actions that take a villager out of earshot on purpose, and what the notice says.
_BUSY = {
    "fetch": "went to fetch it",
    "put": "went to the basket",
    "show_way": "is leading the way",
    "call": "is calling someone over",
    "follow": "is following you",
}


class ChatBox:
    """One conversation at a time, with the villager it was opened with.

    It stays with them through any number of lines, until the player closes it (Esc) or
    they are no longer in range or able to talk; then it says so for a moment.
    """

    def __init__(self, world: ChatWorld, speech: ChatSpeech) -> None:
        self._world = world
        self._speech = speech
        self.npc_id: int | None = None
        self.name = ""
        self.typed = ""
        self.sent = 0
        self.notice = ""
        self._notice_until = -1
        self._swallow = ""
        self._prepared = ""
        self._prepared_at = -PREPARE_EVERY_TICKS

    @property
    def is_open(self) -> bool:
        """Whether the box is open and takes the keyboard."""
        return self.npc_id is not None

    def open(self, swallow: str = "") -> bool:
        """Open a chat with the nearest villager who can talk; False if there is none.

        ``swallow`` is text to drop if it is typed first: the key that opened the box
        arrives as typed text too.
        """
        if self.is_open:
            return True
        npc_id = self._world.nearest_talker()
        if npc_id is None:
            self._say(NOBODY_NEAR)
            return False
        name = self._name(npc_id)
        if not self._world.set_talking(npc_id, True):
            self._say(f"{name} can't talk right now")
            return False
        self.npc_id, self.name, self.sent = npc_id, name, 0
        self.typed = ""
        self.notice, self._swallow = "", swallow
        logger.debug("chat opened with %s (%d)", name, npc_id)
        return True

    def type(self, text: str) -> None:
        """Add typed text (capped at ``MAX_CHARS``)."""
        if not self.is_open:
            return
        swallow, self._swallow = self._swallow, ""
        if text == swallow and not self.typed:
            return
        self.typed = (self.typed + text)[:MAX_CHARS]

    def end_batch(self) -> None:
        """The events of one frame are handled: a later copy of the opening key is typed."""
        self._swallow = ""

    def backspace(self) -> None:
        """Delete the last typed character."""
        self.typed = self.typed[:-1]

    def submit(self) -> str:
        """Send what was typed; the box stays open for the next line. Returns what was sent."""
        if self.npc_id is None:
            return ""
        text = self.typed.strip()
        self.typed = ""
        self._prepared = ""
        if not text:
            return ""
        world = self._world
        sent = self._speech.say(world.tick, self.npc_id, world.player_status().id, text)
        if sent:
            self.sent += 1
        return sent

    def close(self, notice: str = "") -> None:
        """Leave the conversation; ``notice`` says why, for a moment."""
        if self.npc_id is not None:
            self._world.set_talking(self.npc_id, False)
            logger.debug("chat with %d closed (%s)", self.npc_id, notice or "by the player")
        self.npc_id, self._swallow, self._prepared = None, "", ""
        self.typed = ""
        if notice:
            self._say(notice)

    def update(self) -> None:
        """Once per tick: end the chat if the villager walked off or cannot talk now.

        While the chat goes on, the text typed so far goes to the dialogue as a line
        being typed, so the reply can be prepared before Enter.
        """
        npc_id = self.npc_id
        if npc_id is None:
            return
        status = self._world.npc(npc_id)
        if status is not None and (status.action or status.state) in _ENDS_CHAT:
            self.close(f"{self.name} {_ENDS_CHAT[status.action or status.state]}. Chat closed.")
            return
        if self._world.in_chat_range(npc_id):
            self._prepare(npc_id)
            return
        if status is not None and not status.can_talk:
            self.close(f"{self.name} can't talk right now. Chat closed.")
        elif status is not None and status.action in _BUSY:
            self.close(f"{self.name} {_BUSY[status.action]}. Chat closed.")
        else:
            self.close(f"{self.name} is out of earshot. Chat closed.")

    def view(self) -> ChatView | None:
        """What to draw: the open box, or the notice of why it closed, or nothing."""
        if self.npc_id is not None:
            return ChatView(self.name, self.typed, True, "", self.sent)
        if self.notice and self._world.tick < self._notice_until:
            return ChatView(self.name, "", False, self.notice, self.sent)
        return None

    def _prepare(self, npc_id: int) -> None:
        """Hand the text over from the first key on, then at most every 0.2 s.

        The first hand-over lets the model read the conversation so far while the
        question is still being typed; each later one only adds what changed since.
        """
        text = self.typed.strip()
        world = self._world
        if (
            not text
            or text == self._prepared
            or world.tick - self._prepared_at < PREPARE_EVERY_TICKS
        ):
            return
        self._prepared, self._prepared_at = text, world.tick
        self._speech.typing(world.tick, npc_id, world.player_status().id, text)

    def _say(self, notice: str) -> None:
        self.notice = notice
        self._notice_until = self._world.tick + NOTICE_TICKS

    def _name(self, npc_id: int) -> str:
        status = self._world.npc(npc_id)
        return status.name if status is not None else "them"
