"""An errand hint is the villager's own template line even when the model is ready: the
way up to the roof ball is a fact of the level the model is never told."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from game.core.session import Session
from game.dialogue.line_source import LineAsk
from game.sim.events import Trigger
from tests.unit.game.conftest import (
    STAY,
    GatedBackend,
    Tap,
    npc_named,
    player_id,
    source_of,
    walk,
)

HINT = Trigger("errand_hint")


def test_a_hint_is_the_template_with_the_model_ready_and_never_asked_of_it(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = GatedBackend()
    village = make_village("game.dialogue.greet_ahead=false", backend=backend)
    village.world.skip_welcome()
    source = source_of(village)
    tap = Tap(source, monkeypatch)
    pip, me = npc_named(village, "Pip"), player_id(village)
    walk(village, STAY, 10)
    spec = village.world.npc_spec(pip)
    assert spec is not None
    hints = set(spec.lines_for(HINT))

    tick = village.tick
    village.dialogue.ask(LineAsk(tick, pip, HINT, me))
    village.dialogue.update(tick)
    walk(village, STAY, 5)

    ready = [e for _, e in tap.ready(pip) if e.ask.trigger is HINT]
    assert [(e.origin, e.text in hints) for e in ready] == [("template", True)]
    assert village.dialogue.board.text_of(pip) in hints
    written = [p.situation for p in backend.finished + backend.stopped]
    assert not [s for s in written if s.startswith("telling")], written
