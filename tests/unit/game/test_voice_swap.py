"""The pause menu's "Village voice on/off": the model swaps while villagers talk on."""

from __future__ import annotations

from collections.abc import Callable

from game.core.session import Session
from game.dialogue.line_source import LineAsk
from game.sim.events import Trigger
from game.ui.pause_menu import ITEMS
from tests.unit.game.conftest import STAY, npc_named, player_id, source_of, walk


def test_the_village_voice_swaps_off_and_on_while_lines_flow(
    make_village: Callable[..., Session],
) -> None:
    village = make_village()
    source = source_of(village)
    voice = source.voice
    assert voice is not None
    assert voice.model.adapter  # the game starts with the village adapter
    pip, me = npc_named(village, "Pip"), player_id(village)

    said = source.toggle_adapter()
    assert said.startswith("Loading the base model")
    assert source.toggle_adapter() == "A model is still loading"
    village.dialogue.ask(LineAsk(village.tick, pip, Trigger.HIT, me))  # answered meanwhile
    notices: list[str] = []
    walk(village, STAY, 600, until=lambda: bool(notices.extend(source.take_notices()) or notices))

    assert notices[0].startswith("Villagers now speak with the base model")
    assert not voice.model.adapter
    assert source._builder.style == "fewshot"  # noqa: SLF001 - the prompts follow the model
    assert (
        village.dialogue.shown_by_trigger[("hit", "model")]
        + village.dialogue.shown_by_trigger[("hit", "fallback")]
        == 1
    )

    assert source.toggle_adapter().startswith("Loading the village voice")
    notices.clear()
    walk(village, STAY, 600, until=lambda: bool(notices.extend(source.take_notices()) or notices))
    assert notices[0].startswith("Villagers now speak with the village voice")
    assert voice.model.adapter


def test_the_pause_menu_offers_the_village_voice() -> None:
    assert ("Village voice on/off", "voice") in ITEMS
