"""Decisions against a world that moves on: the target is taken between decision and use.

Many times over, a villager is asked to fetch, follow or show the way; while the model
(scripted, with a real delay) is still deciding, or just after, the harness takes the
target away at a random moment: it moves the apple out of reach, knocks the villager
down, or sends the traveller far off. Every application is then checked from the world
itself, not from the decider's own verdict: nothing is ever applied that no longer fits,
and every rejection is counted with its reason.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence

from ai import PromptSpec, ScriptedBackend, ScriptedConfig
from game.core.session import Session
from game.decisions.decider import TRAVELLER_RANGE, Decision
from game.decisions.options import FETCH_RADIUS
from game.sim.orders import ActionKind
from game.sim.ticks import DT
from tests.unit.game.conftest import LEFT, STAY, npc_named

TRIALS = 36
ASKS = ("fetch the apple", "follow the traveller", "show the way to the well")
DISTURBANCES = ("move the apple", "knock down", "walk away", "none")


def prefer(wanted: str) -> Callable[[PromptSpec, Sequence[str]], tuple[float, ...]]:
    """Scripted scores: the wanted action, then the mood "unmoved"."""

    def choose(prompt: PromptSpec, options: Sequence[str]) -> tuple[float, ...]:
        del prompt
        return tuple(
            1.0 if text.startswith(wanted) or text.strip() == 'unmoved"' else 0.0
            for text in options
        )

    return choose


def check_fits(village: Session, decision: Decision) -> list[str]:
    """What is wrong with applying ``decision`` now, read straight from the world."""
    world = village.world
    snap = decision.snapshot
    option = decision.option
    assert option is not None
    npc = world.npc(snap.npc_id)
    assert npc is not None
    wrong = []
    if not npc.conscious or npc.state in ("knocked_down", "recover"):
        wrong.append("villager down")
    player = world.player_status()
    far = math.hypot(player.x - npc.x, player.y - npc.y) > TRAVELLER_RANGE
    if option.kind in (ActionKind.FOLLOW, ActionKind.FETCH, ActionKind.SHOW_WAY) and far:
        wrong.append("traveller gone")
    if option.kind is ActionKind.FETCH:
        prop_id = snap.choices.props[option.target]
        position = world.entity_position(prop_id)
        assert position is not None
        if math.hypot(position[0] - npc.x, position[1] - npc.y) > FETCH_RADIUS:
            wrong.append("prop out of reach")
    return wrong


def run_trials(
    make_village: Callable[..., Session], trials: int, seed: int, validate: bool = True
) -> tuple[int, int, Counter[str]]:
    """Ask and disturb ``trials`` times; return (applied, applied wrongly, rejected)."""
    rng = random.Random(seed)
    rejected: Counter[str] = Counter()
    applied = wrong = 0
    for trial in range(trials):
        wanted = ASKS[trial % len(ASKS)]
        disturbance = DISTURBANCES[(trial // len(ASKS)) % len(DISTURBANCES)]
        # The decision takes 0.1-0.3 s of worker time.
        timings = ScriptedConfig(load_s=0.0, ttft_s=rng.uniform(0.05, 0.15), token_s=0.002)
        backend = ScriptedBackend(timings, prompt_style="village", chooser=prefer(wanted))
        village = make_village(backend=backend)
        world = village.world
        marta = npc_named(village, "Marta")
        for _ in range(120):
            village.step(LEFT)
            if world.nearest_talker() == marta:
                break
        decider = village.decider
        assert decider is not None
        verdicts: list[list[str]] = []
        real_apply = decider._apply  # noqa: SLF001 - the harness watches from outside

        def watched(decision: Decision) -> None:
            verdicts.append(check_fits(village, decision))  # noqa: B023
            real_apply(decision)  # noqa: B023

        decider._apply = watched  # type: ignore[method-assign]  # noqa: SLF001
        if not validate:
            decider.reject_reason = lambda decision, tick: None  # type: ignore[method-assign]
        decider.ask(village.tick, marta, "chat", "please")
        # Ticks are paced at 60 Hz, as in play, so the decision lands some ticks later.
        at = rng.randrange(0, 30)
        next_tick = time.perf_counter()
        for tick in range(600):
            if tick == at and disturbance != "none":
                disturb(village, marta, disturbance)
            village.step(STAY)
            if decider.recent and tick > at:
                break
            next_tick += DT
            time.sleep(max(0.0, next_tick - time.perf_counter()))
        applied += len(verdicts)
        wrong += sum(1 for problems in verdicts if problems)
        rejected.update(decider.rejected)
        village.close()
    return applied, wrong, rejected


def test_no_decision_is_applied_after_its_target_was_taken(
    make_village: Callable[..., Session],
) -> None:
    applied, wrong, rejected = run_trials(make_village, TRIALS, seed=7)
    assert wrong == 0
    assert applied > 0
    assert sum(rejected.values()) + applied == TRIALS
    # Each way of taking the target away was caught by its own check at least once.
    assert rejected["villager down"] + rejected["disrupted"] > 0
    assert rejected["traveller gone"] > 0
    assert rejected["prop out of reach"] + rejected["prop gone"] > 0


def test_without_the_checks_the_same_harness_sees_wrong_applications(
    make_village: Callable[..., Session],
) -> None:
    applied, wrong, rejected = run_trials(make_village, 12, seed=7, validate=False)
    # Only the world itself refuses to start an action for someone lying on the ground.
    assert set(rejected) <= {"could not start"}
    assert applied == 12
    assert wrong > 0


def disturb(village: Session, npc_id: int, how: str) -> None:
    """Take the decision's target away, from outside the game's own logic."""
    world = village.world
    if how == "knock down":
        body = world._villager_by_id[npc_id].body  # noqa: SLF001
        body.angle = 1.6
        body.angular_velocity = 0.0
    elif how == "walk away":
        npc = world.npc(npc_id)
        assert npc is not None
        world.place_player(npc.x + 1500.0, npc.y)
    elif how == "move the apple":
        npc = world.npc(npc_id)
        assert npc is not None
        for prop in world.props:
            if prop.kind.name == "apple" and abs(prop.body.position.x - npc.x) < FETCH_RADIUS:
                prop.body.position = (npc.x + FETCH_RADIUS + 900.0, prop.body.position.y + 40)
                prop.body.velocity = (0.0, 0.0)
                world.space.reindex_shapes_for_body(prop.body)
