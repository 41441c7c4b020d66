"""Walking away mid-reply, with the chat box open, closes the box and stops the reply."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from game.core.session import Session
from game.dialogue.line_source import LineReady
from game.sim.events import Trigger
from game.sim.player import PlayerIntent
from game.ui.chat_box import ChatBox
from tests.unit.game.conftest import (
    CHAT,
    CHAT_REPLY,
    LEFT,
    STAY,
    GatedBackend,
    Tap,
    let_through,
    npc_named,
    source_of,
    wait_for,
    walk,
)

RIGHT = PlayerIntent(move=1)


def test_walking_away_mid_reply_closes_the_box_and_ends_the_reply(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend(script={CHAT: CHAT_REPLY})
    backend.hold(lambda prompt: prompt.situation == CHAT)
    village = make_village(backend=backend)
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    marta = npc_named(village, "Marta")
    world = village.world
    walk(village, LEFT, 200, until=lambda: world.nearest_talker() == marta)
    walk(village, STAY, 20)

    box = ChatBox(world, village.dialogue)
    assert box.open()
    assert box.view().target == "Marta"  # type: ignore[union-attr]
    box.type("Is the oven hot yet?")
    assert box.submit() == "Is the oven hot yet?"
    village.dialogue.update(village.tick)
    let_through(village, backend, 2)
    walk(village, STAY, 1, backend=backend)
    assert any(text for _, text in tap.partials(marta))  # the reply is under way
    assert box.is_open  # the box waits for the next line, it did not close on Enter
    cancelled = source.runtime.metrics().cancelled

    def replied() -> list[LineReady]:
        return [e for _, e in tap.ready(marta) if e.ask.trigger is Trigger.CHAT]

    def stepped() -> bool:
        box.update()
        return bool(replied())

    walk(village, RIGHT, 120, until=stepped, backend=backend)
    walk(village, STAY, 1)  # the runtime reports the cancel at its next poll
    box.update()

    assert not box.is_open
    assert "out of earshot" in box.view().notice  # type: ignore[union-attr]
    # The words she had said stay, ended there.
    assert [(e.origin, e.text) for e in replied()] == [("unfinished", "Aye, the\u2026")]
    assert tap.cuts(marta) == []
    assert source.runtime.metrics().cancelled == cancelled + 1
    wait_for(lambda: any(p.situation == CHAT for p in backend.stopped), "the stream to stop")
    assert not any(p.situation == CHAT for p in backend.finished)
    assert not village.dialogue.board.is_streaming(marta)
