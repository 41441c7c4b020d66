"""The welcome is the first line a player hears: the villager sets off once the model
can write it, not a moment before with a template line; a model that never comes does
not cost the player their welcome."""

from __future__ import annotations

from collections.abc import Callable

from game.core.session import Session
from game.sim.welcome import WELCOME_HOLD_TICKS
from tests.unit.game.conftest import STAY, GatedBackend, walk


def _welcoming(village: Session) -> bool:
    return any(v.brain.welcoming for v in village.world.villagers)


def test_the_welcome_waits_for_the_model_and_sets_off_once_it_serves(
    make_village: Callable[..., Session],
) -> None:
    backend = GatedBackend(hold_load=True)
    village = make_village(backend=backend, wait=False)
    walk(village, STAY, 90)
    assert village.ai.voices_loading()
    assert not _welcoming(village)

    backend.finish_loading()
    walk(village, STAY, 120, until=lambda: not village.ai.voices_loading())
    walk(village, STAY, 2, until=lambda: _welcoming(village))
    assert village.tick < WELCOME_HOLD_TICKS


def test_a_model_that_never_loads_holds_the_welcome_no_longer_than_its_cap(
    make_village: Callable[..., Session],
) -> None:
    backend = GatedBackend(hold_load=True)
    village = make_village(backend=backend, wait=False)
    walk(village, STAY, WELCOME_HOLD_TICKS)
    assert not _welcoming(village)
    walk(village, STAY, 1)
    assert village.ai.voices_loading()
    assert _welcoming(village)


def test_without_a_model_the_welcome_starts_on_the_first_tick(
    make_village: Callable[..., Session],
) -> None:
    village = make_village('game.dialogue.ai_mode="off"', wait=False)
    village.step(STAY)
    assert _welcoming(village)
