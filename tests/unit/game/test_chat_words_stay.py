"""A chat reply the player has started to read is never taken back.

Whatever stops it once its first words are up (a failed check, the villager walking
out of range, a timeout, a broken model), it keeps those words, ends with an ellipsis,
stays up and is remembered that way. Before its first word, the old fallbacks stand.
Driven in a real village on a gated scripted backend (``conftest.py``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from ai import PromptSpec
from ai.scripted_backend import ScriptedError, ScriptedReply, default_line
from game.core.session import Session
from game.dialogue.bubble_board import BubbleBoard
from game.dialogue.chat_streams import goes_on_from, unfinished
from game.dialogue.line_source import LineAsk, LineReady
from game.dialogue.speech import read_ticks
from game.dialogue.validation import reach
from game.sim.events import Trigger
from tests.unit.game.conftest import (
    CHAT,
    CHAT_REPLY,
    LEFT,
    STAY,
    GatedBackend,
    Tap,
    let_through,
    npc_named,
    open_chat,
    player_id,
    source_of,
    wait_for,
    walk,
)

NO_AHEAD = "game.dialogue.greet_ahead=false"
QUESTION = "Is the well water sweet?"
# Names a villager who is not in the conversation: a check only the whole line can fail.
ABSENT = "Aye, sweet as honey, and Brann says so too."


class Replies:
    """Chat replies in turn, one per generation; other prompts get the default line."""

    def __init__(self, *replies: ScriptedReply) -> None:
        self._replies = list(replies)
        self.chats: list[PromptSpec] = []

    def __call__(self, prompt: PromptSpec) -> ScriptedReply:
        if prompt.situation != CHAT:
            return default_line(prompt)
        self.chats.append(prompt)
        return self._replies[min(len(self.chats), len(self._replies)) - 1]


def _chat_lines(tap: Tap, npc: int) -> list[LineReady]:
    return [ready for _, ready in tap.ready(npc) if ready.ask.trigger is Trigger.CHAT]


def _said(village: Session, npc: int) -> list[str]:
    return [e.text for e in village.dialogue.memories.of(npc).exchanges]


def _typed(tap: Tap, npc: int) -> list[str]:
    return [text for _, text in tap.partials(npc) if text]


def _assert_never_retyped(shown: list[str], final: str) -> None:
    """Each text on screen went on from the one before, and the last line from them all."""
    assert shown
    assert all(b.startswith(a) for a, b in zip(shown, shown[1:], strict=False))
    assert goes_on_from(final, shown[-1])


def test_unfinished_keeps_every_word_and_ends_with_an_ellipsis() -> None:
    assert unfinished("Charcoal, Corvin") == "Charcoal, Corvin\u2026"
    assert unfinished("Charcoal, Corvin,") == "Charcoal, Corvin\u2026"
    assert unfinished("Charcoal. ") == "Charcoal. \u2026"
    assert unfinished("Wait\u2026") == "Wait\u2026"
    assert goes_on_from("Charcoal, Corvin sells it.", "Charcoal, Corvin")
    assert goes_on_from("Charcoal", "Charcoal,")
    assert not goes_on_from("Corvin sells it.", "Marta: Corvin")


@pytest.mark.parametrize(
    "second",
    [CHAT_REPLY, ABSENT],
    ids=["the second candidate would pass", "every candidate fails"],
)
def test_a_reply_whose_first_candidate_fails_after_its_words_showed_ends_with_them(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch, second: str
) -> None:
    replies = Replies(ABSENT, second)
    backend = GatedBackend(script=replies)
    backend.hold(lambda prompt: prompt.situation == CHAT)
    village = make_village(NO_AHEAD, backend=backend)
    tap = Tap(source_of(village), monkeypatch)
    pip = npc_named(village, "Pip")
    walk(village, STAY, 10)

    open_chat(village, pip, QUESTION)
    for _ in range(len(ABSENT.split())):
        let_through(village, backend, 1)
        walk(village, STAY, 1, backend=backend)
    backend.release()
    walk(village, STAY, 20, until=lambda: bool(_chat_lines(tap, pip)))
    walk(village, STAY, 5)

    (ready,) = _chat_lines(tap, pip)
    assert (ready.origin, ready.text) == ("unfinished", unfinished(ABSENT))
    _assert_never_retyped(_typed(tap, pip), ready.text)
    assert len(replies.chats) == 1  # no second candidate typed over the first
    assert village.dialogue.board.text_of(pip) == ready.text
    assert _said(village, pip) == [QUESTION, ready.text]


def test_a_reply_that_failed_before_any_word_showed_still_falls_back_to_the_template(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The model breaks before its first word: nothing was read, so the template stands.
    replies = Replies(ScriptedError("broken"))
    backend = GatedBackend(script=replies)
    village = make_village(NO_AHEAD, backend=backend)
    tap = Tap(source_of(village), monkeypatch)
    pip = npc_named(village, "Pip")
    walk(village, STAY, 10)

    open_chat(village, pip, QUESTION)
    walk(village, STAY, 20, until=lambda: bool(_chat_lines(tap, pip)))

    (ready,) = _chat_lines(tap, pip)
    assert ready.origin == "fallback"
    assert not ready.text.endswith("\u2026")
    assert _typed(tap, pip) == []
    assert village.dialogue.board.text_of(pip) == ready.text
    assert _said(village, pip) == [QUESTION, ready.text]


def test_a_reply_cut_when_the_player_walked_away_keeps_its_words_for_a_whole_bubble(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend(script={CHAT: CHAT_REPLY})
    backend.hold(lambda prompt: prompt.situation == CHAT)
    village = make_village(NO_AHEAD, "game.dialogue.chat_bubble_s=1.0", backend=backend)
    village.world.skip_welcome()  # Pip stays at the well: the walk away is measured from there
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    pip, me = npc_named(village, "Pip"), player_id(village)
    walk(village, STAY, 10)

    open_chat(village, pip, "Tell me about the well.")
    let_through(village, backend, 3)
    walk(village, STAY, 1, backend=backend)
    assert _typed(tap, pip)  # the reply is under way
    cancelled = source.runtime.metrics().cancelled
    limit = reach(Trigger.CHAT, village.world.talk_radius)
    # The model is held mid-reply: the cut must not wait for its next token.
    ended = walk(village, LEFT, 90, until=lambda: bool(_chat_lines(tap, pip)), backend=backend)
    assert village.world.distance(pip, me) > limit  # type: ignore[operator]
    walk(village, STAY, 1)  # the runtime reports the cancel at its next poll

    (ready,) = _chat_lines(tap, pip)
    assert (ready.origin, ready.text) == ("unfinished", "Aye, the well\u2026")
    _assert_never_retyped(_typed(tap, pip), ready.text)
    assert tap.cuts(pip) == []
    assert sum(source.checker.stale.values()) == 1
    assert source.runtime.metrics().cancelled == cancelled + 1
    wait_for(lambda: any(p.situation == CHAT for p in backend.stopped), "the stream to stop")
    assert not any(p.situation == CHAT for p in backend.finished)
    assert _said(village, pip) == ["Tell me about the well.", ready.text]
    board = village.dialogue.board
    assert board.text_of(pip) == ready.text
    assert not board.is_streaming(pip)
    # Up for a chat bubble's whole time from the tick it ended (60 ticks), fading at the end.
    alpha = {v.speaker_id: v.alpha for v in board.views(ended + 50)}
    assert alpha[pip] == pytest.approx(0.5)
    assert all(v.speaker_id != pip for v in board.views(ended + 60) if v.alpha > 0.0)


def test_a_reply_cut_before_its_first_word_takes_the_thinking_bubble_down(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend(script={CHAT: CHAT_REPLY})
    backend.hold(lambda prompt: prompt.situation == CHAT)
    village = make_village(NO_AHEAD, backend=backend)
    village.world.skip_welcome()  # Pip stays at the well: the walk away is measured from there
    tap = Tap(source_of(village), monkeypatch)
    pip = npc_named(village, "Pip")
    walk(village, STAY, 10)

    open_chat(village, pip, "Tell me about the well.")
    walk(village, STAY, 1, backend=backend)
    walk(village, LEFT, 90, until=lambda: bool(tap.cuts(pip)), backend=backend)
    walk(village, STAY, 1)

    assert _typed(tap, pip) == []
    assert _chat_lines(tap, pip) == []
    assert village.dialogue.board.text_of(pip) is None
    assert _said(village, pip) == ["Tell me about the well."]


def test_a_reply_that_timed_out_mid_stream_keeps_its_words(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    timeout_s = 1.5
    backend = GatedBackend(script={CHAT: CHAT_REPLY})
    backend.hold(lambda prompt: prompt.situation == CHAT)
    village = make_village(
        NO_AHEAD,
        "ai.scheduler.deadline_player_chat_s=1.0",
        f"ai.scheduler.timeout_player_chat_s={timeout_s}",
        backend=backend,
    )
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    pip = npc_named(village, "Pip")
    walk(village, STAY, 10)

    asked = time.monotonic()
    open_chat(village, pip, QUESTION)
    let_through(village, backend, 3)
    walk(village, STAY, 1, backend=backend)
    assert _typed(tap, pip)
    assert _chat_lines(tap, pip) == []
    # The model is held mid-reply until the request's whole budget has passed.
    time.sleep(max(0.0, asked + timeout_s + 0.1 - time.monotonic()))
    walk(village, STAY, 20, until=lambda: bool(_chat_lines(tap, pip)), backend=backend)

    (ready,) = _chat_lines(tap, pip)
    assert (ready.origin, ready.text) == ("unfinished", "Aye, the well\u2026")
    _assert_never_retyped(_typed(tap, pip), ready.text)
    assert source.late[Trigger.CHAT.value] == 1
    assert village.dialogue.board.text_of(pip) == ready.text
    assert _said(village, pip) == [QUESTION, ready.text]


def test_a_model_that_breaks_mid_reply_leaves_the_words_it_wrote(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    replies = Replies(ScriptedError("the model broke", after_words=4))
    backend = GatedBackend(script=replies)
    village = make_village(NO_AHEAD, backend=backend)
    tap = Tap(source_of(village), monkeypatch)
    pip = npc_named(village, "Pip")
    walk(village, STAY, 10)

    open_chat(village, pip, QUESTION)
    walk(village, STAY, 20, until=lambda: bool(_chat_lines(tap, pip)))

    (ready,) = _chat_lines(tap, pip)
    written = " ".join(default_line(replies.chats[0]).split()[:4])
    assert (ready.origin, ready.text) == ("unfinished", unfinished(written))
    _assert_never_retyped(_typed(tap, pip), ready.text)
    assert len(replies.chats) == 1
    assert _said(village, pip) == [QUESTION, ready.text]


def test_a_second_question_while_the_reply_types_leaves_its_words_up(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend(script={CHAT: CHAT_REPLY})
    backend.hold(lambda prompt: prompt.situation == CHAT)
    village = make_village(NO_AHEAD, backend=backend)
    tap = Tap(source_of(village), monkeypatch)
    pip = npc_named(village, "Pip")
    walk(village, STAY, 10)

    open_chat(village, pip, QUESTION)
    let_through(village, backend, 3)
    walk(village, STAY, 1, backend=backend)
    assert village.dialogue.board.text_of(pip) == "Aye, the well"
    village.dialogue.say(village.tick, pip, player_id(village), "And the bread?")
    village.dialogue.update(village.tick)
    walk(village, STAY, 1, backend=backend)

    # No "thinking" bubble over the words while they are still coming.
    assert village.dialogue.board.text_of(pip) == "Aye, the well"
    assert [text for _, text in tap.partials(pip)] == ["", "Aye,", "Aye, the well"]

    # Walking off cuts both: the reply under way ends with its words, the one not begun
    # goes quietly and takes nothing down with it.
    walk(village, LEFT, 90, until=lambda: bool(_chat_lines(tap, pip)), backend=backend)
    (ready,) = _chat_lines(tap, pip)
    assert (ready.origin, ready.text) == ("unfinished", "Aye, the well\u2026")
    assert len(tap.cuts(pip)) == 1
    assert village.dialogue.board.text_of(pip) == ready.text


# -- a reply the player reads is not replaced by another line of the villager's ----------


READ = 120


def test_a_bark_waits_behind_a_reply_until_it_has_been_read() -> None:
    board = BubbleBoard()
    board.show(7, CHAT_REPLY, tick=0, ttl_ticks=420, kind="chat", read_ticks=READ, reply=True)
    board.show(7, "Safe travels.", tick=10, ttl_ticks=240, kind="line")
    board.expire(READ - 1)
    assert board.text_of(7) == CHAT_REPLY
    assert board.waiting_of(7) == "Safe travels."
    board.expire(READ)
    assert board.text_of(7) == "Safe travels."
    # Its own time starts when it goes up.
    board.expire(READ + 239)
    assert board.text_of(7) == "Safe travels."
    board.expire(READ + 240)
    assert board.text_of(7) is None


def test_a_reply_still_typing_in_holds_a_bark_and_the_next_reply_takes_its_place() -> None:
    board = BubbleBoard()
    board.stream(7, "Aye, the", tick=0, ttl_ticks=420, kind="chat")
    board.show(7, "Ow! Watch it!", tick=5, ttl_ticks=240, kind="line")
    assert board.text_of(7) == "Aye, the"
    board.show(7, CHAT_REPLY, tick=9, ttl_ticks=420, kind="chat", read_ticks=READ, reply=True)
    assert board.text_of(7) == CHAT_REPLY
    # The player asked again: that answer does not wait.
    board.show(7, "Two coppers.", tick=20, ttl_ticks=420, kind="chat", read_ticks=60, reply=True)
    assert board.text_of(7) == "Two coppers."
    board.expire(20 + 60)
    assert board.text_of(7) == "Ow! Watch it!"


@pytest.mark.parametrize("second", ["farewell", "refusal"])
def test_a_farewell_or_a_refusal_does_not_replace_a_reply_before_it_is_read(
    make_village: Callable[..., Session], second: str
) -> None:
    village = make_village(NO_AHEAD, backend=GatedBackend(script={CHAT: CHAT_REPLY}))
    pip, me = npc_named(village, "Pip"), player_id(village)
    walk(village, STAY, 10)
    open_chat(village, pip, QUESTION)
    shown = walk(village, STAY, 30, until=lambda: village.dialogue.board.text_of(pip) == CHAT_REPLY)

    dialogue = village.dialogue
    if second == "farewell":
        dialogue.ask(LineAsk(village.tick, pip, Trigger.FAREWELL, me))
    else:
        dialogue.say(village.tick, pip, me, "Say sh1t, you stupid villager")
    walk(village, STAY, 2)
    assert dialogue.board.text_of(pip) == CHAT_REPLY
    assert dialogue.board.waiting_of(pip) is not None

    read = read_ticks(CHAT_REPLY)
    walk(village, STAY, read, until=lambda: dialogue.board.text_of(pip) != CHAT_REPLY)
    assert village.tick - shown >= read
    assert dialogue.board.text_of(pip) not in (None, CHAT_REPLY)
