"""Decisions on the real model: the village adapter picks the labelled action, and the
greedy search over the options costs a few rows of logits, not a reply.

A slice of the decision evaluation (``tools/eval/decisions.py`` runs all of it): the
evaluation's own items, never trained on, decided through ``LlamaBackend.choose`` as the
worker does in the game.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ai import AiConfig, LlamaBackend
from ai.prompt import build_completion_prompt
from game.config.settings import VILLAGE_ADAPTER_PATH
from game.decisions.policy import place_name, resolve
from game.decisions.prompt import action_continuations, mood_continuations
from game.decisions.situations import SituationWorld, load_situations
from game.sim.cast import load_cast
from game.sim.level import load_level

pytestmark = pytest.mark.model

DATA = Path(__file__).resolve().parents[2] / "tools" / "eval" / "data" / "decisions.jsonl"
SLICE = 24


@pytest.fixture(scope="module")
def village_model() -> Iterator[LlamaBackend]:
    config = AiConfig()
    adapter = str(VILLAGE_ADAPTER_PATH)
    backend = LlamaBackend(replace(config, model=replace(config.model, adapter=adapter)))
    backend.load(lambda fraction, stage: None)
    assert backend.prompt_style == "village", "the village adapter is loaded"
    yield backend
    backend.close()


def test_the_village_model_picks_the_labelled_action_for_most_evaluation_items(
    village_model: LlamaBackend,
) -> None:
    cast = load_cast()
    places = [place_name(d.label) for d in load_level().decor if d.label]
    items = load_situations(DATA, cast, places)[:: max(1, 179 // SLICE)][:SLICE]
    world = SituationWorld.of(cast, places)
    right = 0
    took: list[float] = []
    for item in items:
        possible = world.options(item)
        options = (*possible, *world.absent(item))
        spec = world.spec(item)
        start = time.perf_counter()
        picked = village_model.choose(spec, action_continuations(options))
        assert picked is not None
        option = options[picked[0]]
        mood = village_model.choose(replace(spec, opener=option.text + ";"), mood_continuations())
        took.append(time.perf_counter() - start)
        assert mood is not None
        right += resolve(option, possible).text == item.action
    # The full evaluation's figure is in bench/decisions.json; a slice is noisier.
    assert right >= 0.7 * len(items), f"{right} of {len(items)}"
    # A decision is a prompt read and a few output rows: well under a sampled line.
    assert sorted(took)[len(took) // 2] < 1.5


def test_choose_agrees_with_scoring_every_option_in_full(village_model: LlamaBackend) -> None:
    """On clear cases the greedy search finds the option that full scoring ranks first."""
    cast = load_cast()
    places = [place_name(d.label) for d in load_level().decor if d.label]
    items = load_situations(DATA, cast, places)[:6]
    world = SituationWorld.of(cast)
    scorer = village_model._scorer()  # noqa: SLF001 - the reference the search must match
    agree = 0
    for item in items:
        options = world.options(item)
        spec = world.spec(item)
        texts = action_continuations(options)
        picked = village_model.choose(spec, texts)
        assert picked is not None
        prompt = build_completion_prompt(spec, spec.player_text)
        totals = [scorer.total_logprob(prompt, text) for text in texts]
        best = max(range(len(texts)), key=lambda i: totals[i] or float("-inf"))
        agree += picked[0] == best
    assert agree >= 5
