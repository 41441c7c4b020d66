"""The corpus lines a village-style bark's prompt shows, and how they are chosen."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest

from ai import PromptSpec
from game.dialogue.corpus import (
    CorpusRecord,
    CorpusWorld,
    corpus_world,
    is_held_out,
    load_corpus,
    record_prompt,
    record_spec,
    training_line,
)
from game.dialogue.examples import (
    PROMPT_WORDS,
    ExampleBank,
    example_block,
    load_example_bank,
    record_moment,
    spec_words,
)
from game.dialogue.persona_prompt import Moment
from game.sim.cast import load_cast, parse_cast
from game.sim.events import Trigger
from game.sim.level import load_level


@pytest.fixture(scope="module")
def world() -> CorpusWorld:
    return corpus_world(load_cast(), load_level())


@pytest.fixture(scope="module")
def records() -> tuple[CorpusRecord, ...]:
    return load_corpus(load_cast())


@pytest.fixture(scope="module")
def bank(records: tuple[CorpusRecord, ...], world: CorpusWorld) -> ExampleBank:
    return ExampleBank(records, world)


def _barks(records: tuple[CorpusRecord, ...]) -> list[CorpusRecord]:
    return [r for r in records if r.trigger is not Trigger.CHAT]


def _spec(moment: Moment, situation: str) -> PromptSpec:
    return PromptSpec(context="", speaker=moment.speaker, situation=situation)


def test_no_held_out_line_and_no_line_of_the_same_situation_is_shown(
    bank: ExampleBank, records: tuple[CorpusRecord, ...], world: CorpusWorld
) -> None:
    def said(record: CorpusRecord) -> tuple[object, ...]:
        moment = record_moment(record, world)
        return (moment.speaker, moment.trigger, moment.key, training_line(record))

    trained = {said(r) for r in _barks(records) if not is_held_out(r)}
    shown = 0
    for record in _barks(records):
        moment = record_moment(record, world)
        for example in bank.choices(moment):
            shown += 1
            assert example.moment.key != moment.key
            assert example.moment.speaker == moment.speaker
            assert example.moment.trigger is moment.trigger
            moment_said = example.moment
            assert (
                moment_said.speaker,
                moment_said.trigger,
                moment_said.key,
                example.line,
            ) in trained
    assert shown > 3 * len(_barks(records))


def test_the_best_match_shares_the_listener_and_never_a_past_that_did_not_happen(
    bank: ExampleBank,
) -> None:
    moment = Moment("Marta the baker", Trigger.BUMPED, "Pip the child")
    choices = bank.choices(moment)
    assert choices
    assert choices[0].moment.listener == "Pip the child"
    # Nothing remembered here: no example may tell of a throw or an errand.
    for example in choices:
        assert example.moment.memory == ()
        assert example.moment.errand == ""
    remembered = Moment(
        "Marta the baker", Trigger.GREET, memory=("the traveller threw a crate at them",)
    )
    assert any(e.moment.memory == remembered.memory for e in bank.choices(remembered))


def test_examples_take_turns_and_are_never_the_same_line_twice(bank: ExampleBank) -> None:
    moment = Moment("Odo the farmer", Trigger.HIT, prop="apple")
    spec = _spec(moment, "hit by an apple")
    firsts = set()
    for turn in range(4):
        shown = bank.pick(moment, 2, turn, spec)
        assert len(shown) == 2
        assert shown[0].line != shown[1].line
        firsts.add(shown[0].line)
    assert len(firsts) == 4
    assert bank.pick(moment, 0, 0, spec) == ()


def test_a_prompt_with_its_examples_stays_short(
    bank: ExampleBank, records: tuple[CorpusRecord, ...], world: CorpusWorld
) -> None:
    rng = random.Random(3)
    for record in _barks(records):
        spec = record_spec(record, world)
        shown = bank.draw(record_moment(record, world), 2, rng, spec)
        assert spec_words(spec) + sum(len(e.text.split()) for e in shown) <= PROMPT_WORDS
        prompt = record_prompt(record, world, example_block(shown))
        assert prompt.startswith(example_block(shown))
    # A finished errand with a long title has room for one example at most.
    done = next(r for r in records if r.npc == "merchant" and r.trigger is Trigger.ERRAND_DONE)
    spec = record_spec(done, world)
    assert len(bank.pick(record_moment(done, world), 2, 0, spec)) < 2


def test_a_corpus_that_does_not_fit_the_cast_gives_one_warning(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    miller = {
        "id": "miller",
        "name": "Ada",
        "role": "miller",
        "persona": "A miller.",
        "color": [1, 2, 3],
        "home_x": 0,
        "work_x": 0,
        "lines": {t.value: ["Hello.", "Hi."] for t in Trigger},
    }
    cast = parse_cast({"villager": [miller]}, tmp_path / "cast.toml")
    with caplog.at_level(logging.WARNING):
        assert load_example_bank(cast, load_level()) is None
    assert len(caplog.records) == 1
    assert "corpus" in caplog.records[0].getMessage()
