"""The pause menu's "Village voice on/off" and its models: the model swaps while
villagers talk on."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from game.core.session import Session
from game.dialogue.line_source import LineAsk, ModelChoice
from game.sim.events import Trigger
from game.ui.pause_menu import ITEMS, PauseMenu
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


def _models_folder(tmp_path: Path) -> tuple[Path, Path]:
    serving, other = tmp_path / "village-base.gguf", tmp_path / "other-model.gguf"
    for path in (serving, other):
        path.write_bytes(b"GGUF" + bytes(60))
    (tmp_path / "notes.txt").write_text("not a model", encoding="utf-8")
    return serving, other


def test_the_pause_menu_lists_the_models_folder_and_swaps_the_one_chosen(
    make_village: Callable[..., Session], tmp_path: Path
) -> None:
    serving, other = _models_folder(tmp_path)
    village = make_village(f"ai.model.model_dir={tmp_path}", f"ai.model.model_path={serving}")
    source = source_of(village)
    assert source.model_choices() == [ModelChoice(other, False), ModelChoice(serving, True)]

    menu = PauseMenu()
    menu.reset(source.model_choices())
    assert menu.labels == (
        "Resume",
        "Village voice on/off",
        "Model: other-model.gguf",
        "Model: village-base.gguf (speaking)",
        "Quit",
    )
    assert source.use_model_file(menu.pick(3).model or Path()).startswith(
        "Villagers already speak with"
    )
    picked = menu.pick(2)
    assert (picked.action, picked.model) == ("model", other)
    assert source.use_model_file(other).startswith("Loading ")
    notices: list[str] = []
    walk(village, STAY, 600, until=lambda: bool(notices.extend(source.take_notices()) or notices))
    assert notices[0].startswith("Villagers now speak with")
    assert source.model_choices() == [ModelChoice(other, True), ModelChoice(serving, False)]
