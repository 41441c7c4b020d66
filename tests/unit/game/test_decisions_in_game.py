"""Villagers act on decisions in the running game: asked in chat, checked, carried out."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ai import PromptSpec, ScriptedBackend
from game.core.session import Session
from game.sim.events import ActionEnded, ActionStarted, GameEvent
from tests.unit.game.conftest import FAST_TIMINGS, LEFT, STAY, npc_named, open_chat, player_id


def village_backend(
    chooser: Callable[[PromptSpec, Sequence[str]], tuple[float, ...] | None] | None = None,
) -> ScriptedBackend:
    """A scripted model standing in for the village model (which makes decisions)."""
    return ScriptedBackend(FAST_TIMINGS, prompt_style="village", chooser=chooser)


def run_until_action_ends(village: Session, ticks: int) -> tuple[list[str], list[ActionEnded]]:
    """Step with the player standing still until a villager's action ends."""
    started: list[str] = []
    ended: list[ActionEnded] = []
    for _ in range(ticks):
        village.step(STAY)
        events: list[GameEvent] = village.last_events
        started += [e.kind for e in events if isinstance(e, ActionStarted)]
        ended += [e for e in events if isinstance(e, ActionEnded)]
        if ended:
            break
    return started, ended


def apples_in_basket(village: Session) -> int:
    return next(e.progress for e in village.world.errands.errands if e.spec.id == "apples")


def near_marta(village: Session) -> int:
    """Walk the player left until Marta is the nearest to talk to, then wait a second."""
    marta = npc_named(village, "Marta")
    world = village.world
    for _ in range(200):
        village.step(LEFT)
        if world.nearest_talker() == marta:
            break
    for _ in range(60):
        village.step(STAY)
    assert world.nearest_talker() == marta
    return marta


def wait(village: Session, ticks: int) -> None:
    for _ in range(ticks):
        village.step(STAY)


def test_marta_puts_an_apple_in_the_basket_when_the_model_decides_so(
    make_village: Callable[..., Session],
) -> None:
    village = make_village(backend=village_backend())
    marta = near_marta(village)
    before = apples_in_basket(village)
    open_chat(village, marta, "Could you put the apple in the basket for me?")
    started, ended = run_until_action_ends(village, 1800)
    assert started == ["put"]
    assert (ended[0].kind, ended[0].outcome) == ("put", "done")
    wait(village, 90)
    assert apples_in_basket(village) == before + 1
    decider = village.decider
    assert decider is not None
    assert decider.made["model"] == 1
    assert decider.applied["put"] == 1


def test_the_rules_decide_the_same_with_the_model_off(
    make_village: Callable[..., Session],
) -> None:
    village = make_village('game.dialogue.ai_mode="off"', wait=False)
    marta = near_marta(village)
    before = apples_in_basket(village)
    assert village.world.set_talking(marta, True)
    village.dialogue.say(village.tick, marta, player_id(village), "Put an apple in the basket?")
    started, ended = run_until_action_ends(village, 1800)
    assert started == ["put"]
    assert ended[0].outcome == "done"
    wait(village, 90)
    assert apples_in_basket(village) == before + 1
    assert village.decider is not None
    assert village.decider.made["rules"] == 1


def test_a_fond_villager_greeting_the_traveller_helps_with_the_basket_unasked(
    make_village: Callable[..., Session],
) -> None:
    village = make_village('game.dialogue.ai_mode="off"', wait=False)
    marta = npc_named(village, "Marta")
    village.dialogue.memories.of(marta).attitude = 2
    village.world.set_attitude(marta, 2)
    before = apples_in_basket(village)
    for _ in range(200):  # walk up to her: she greets, and goes to help
        village.step(LEFT)
        if village.world.npc(marta).action:  # type: ignore[union-attr]
            break
    assert village.world.npc(marta).action == "put"  # type: ignore[union-attr]
    _, ended = run_until_action_ends(village, 1800)
    assert ended[0].outcome == "done"
    wait(village, 90)
    assert apples_in_basket(village) == before + 1
    decider = village.decider
    assert decider is not None
    assert [d.note for d in decider.recent] == ["offered help"]


def test_a_neutral_villager_greeting_the_traveller_does_nothing_unasked(
    make_village: Callable[..., Session],
) -> None:
    village = make_village('game.dialogue.ai_mode="off"', wait=False)
    near_marta(village)
    wait(village, 300)
    assert village.decider is not None
    assert not village.decider.recent


def test_an_ask_for_what_is_not_here_comes_to_carrying_on(
    make_village: Callable[..., Session],
) -> None:
    """The model may recognise an ask it cannot carry out now: she carries on, and F3
    says what was asked."""
    village = make_village(backend=village_backend())
    marta = near_marta(village)
    decider = village.decider
    assert decider is not None
    choices = decider.choices(marta)
    absent = next(o for o in choices.absent if o.text.startswith(("fetch", "call")))
    # The scripted model picks the option sharing most words with the ask: the absent one.
    open_chat(village, marta, absent.text)
    for _ in range(600):
        village.step(STAY)
        if decider.recent:
            break
    (decision,) = decider.recent
    assert decision.source == "model"
    assert decision.option is not None
    assert decision.option.text == "carry on"
    assert decision.note == f"asked: {absent.text}, not possible now"
    assert village.world.npc(marta).action == ""  # type: ignore[union-attr]
