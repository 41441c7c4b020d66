"""The decision policy, its options and prompt, the rules' keyword reading, and the data.

The policy table follows ``assets/dialogue/decisions/README.md``: what the traveller
meant picks the action and the villager's attitude (-2 cross .. +2) decides whether
they oblige. The labelled situations (training corpus and evaluation set) must load
against the shipped cast and level, and the corpus generator must be reproducible.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ai.prompt import build_completion_prompt
from game.assets import ASSETS_DIR
from game.decisions.policy import (
    CARRY_ON,
    FOLLOW,
    RUN_AWAY,
    TURN_AWAY,
    Option,
    absent_options,
    decide,
    fetch_option,
    kind_words,
    options_for,
    place_name,
    put_option,
    resolve,
)
from game.decisions.prompt import (
    action_continuations,
    answer,
    decision_spec,
    listed,
    mood_continuations,
    parse_mood,
)
from game.decisions.rules import guess_intent
from game.decisions.situations import SituationWorld, load_situations
from game.sim.attitude import attitude_word, clamp_attitude
from game.sim.cast import load_cast
from game.sim.level import load_level
from game.sim.orders import ActionKind
from tools.train import make_decision_corpus

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ASSETS_DIR / "dialogue" / "decisions" / "corpus.jsonl"
EVAL = ROOT / "tools" / "eval" / "data" / "decisions.jsonl"

OPTIONS = options_for(
    ("apple", "ball"),
    ("well", "baker's basket"),
    (("guard", "Sela the guard"), ("elder", "Old Wen the elder")),
)
ATTITUDES = (-2, -1, 0, 1)
TURN, RUN, ON = "turn away", "run away", "carry on"
FETCH, PUT = "fetch the apple", "put the apple in the basket"
COME, WAY, CALL = "follow the traveller", "show the way to the well", "call Sela the guard"
# intent, target -> the action at attitudes -2, -1, 0, 1, and the mood at every one.
POLICY = [
    ("insult", "", (TURN, TURN, TURN, TURN), "offended"),
    ("threat", "", (RUN, RUN, RUN, RUN), "offended"),
    ("apology", "", (ON, ON, ON, ON), "pleased"),
    ("thanks", "", (ON, ON, ON, ON), "pleased"),
    ("fetch", "apple", (TURN, TURN, FETCH, FETCH), "unmoved"),
    ("put", "apple", (TURN, TURN, PUT, PUT), "unmoved"),
    ("follow", "", (TURN, TURN, COME, COME), "unmoved"),
    ("show_way", "well", (TURN, WAY, WAY, WAY), "unmoved"),
    ("call", "guard", (TURN, CALL, CALL, CALL), "unmoved"),
    ("other", "", (ON, ON, ON, ON), "unmoved"),
    (None, "", (ON, ON, ON, ON), "unmoved"),
]


@pytest.mark.parametrize(("intent", "target", "actions", "mood"), POLICY)
def test_policy_table(intent: str | None, target: str, actions: tuple[str, ...], mood: str) -> None:
    got = [decide(intent, target, a, OPTIONS) for a in ATTITUDES]  # type: ignore[arg-type]
    assert [option.text for option, _ in got] == list(actions)
    assert {m for _, m in got} == {mood}


@pytest.mark.parametrize(
    ("intent", "target"),
    [("fetch", "crate"), ("put", "ball"), ("show_way", "forge"), ("call", "merchant")],
)
@pytest.mark.parametrize("attitude", [-2, 0, 2])
def test_an_ask_for_what_is_not_on_offer_carries_on(
    intent: str, target: str, attitude: int
) -> None:
    assert decide(intent, target, attitude, OPTIONS) == (CARRY_ON, "unmoved")  # type: ignore[arg-type]


def test_kind_words_make_an_ask_pleased_but_not_an_insult() -> None:
    assert decide("fetch", "apple", 0, OPTIONS, kind_words=True) == (
        fetch_option("apple"),
        "pleased",
    )
    assert decide("fetch", "apple", -1, OPTIONS, kind_words=True) == (TURN_AWAY, "pleased")
    assert decide("insult", "", 2, OPTIONS, kind_words=True) == (TURN_AWAY, "offended")
    assert kind_words("Thanks, could you bring it?")
    assert kind_words("sorry, where is the well")
    assert not kind_words("bring me the ball")


@pytest.mark.parametrize("attitude", [-2, 0, 2])
def test_events_ignore_the_ask(attitude: int) -> None:
    assert decide("fetch", "apple", attitude, OPTIONS, "hit_again") == (RUN_AWAY, "offended")
    assert decide("insult", "", attitude, OPTIONS, "errand_done") == (CARRY_ON, "pleased")


def test_options_come_in_prompt_order() -> None:
    assert [o.text for o in OPTIONS] == [
        "follow the traveller",
        "fetch the apple",
        "fetch the ball",
        "put the apple in the basket",
        "show the way to the well",
        "show the way to the baker's basket",
        "call Sela the guard",
        "call Old Wen the elder",
        "turn away",
        "run away",
        "carry on",
    ]
    assert [o.target for o in OPTIONS[1:8]] == [
        "apple",
        "ball",
        "apple",
        "well",
        "baker's basket",
        "guard",
        "elder",
    ]
    assert OPTIONS[6] == Option(ActionKind.CALL, "call Sela the guard", "guard")
    # Props come in the fixed fetchable order, whatever order they were found in.
    texts = [o.text for o in options_for(("crate", "apple"), (), ())]
    assert texts == [
        "follow the traveller",
        "fetch the apple",
        "fetch the crate",
        "turn away",
        "run away",
        "carry on",
    ]


@pytest.mark.parametrize(
    ("props", "places", "offered"),
    [
        (("apple",), ("baker's basket",), True),
        (("apple",), ("well",), False),
        (("ball",), ("baker's basket",), False),
        ((), ("baker's basket",), False),
    ],
)
def test_put_needs_both_an_apple_and_the_basket(
    props: tuple[str, ...], places: tuple[str, ...], offered: bool
) -> None:
    assert (put_option("apple") in options_for(props, places, ())) is offered


def test_decision_prompt_text() -> None:
    memories = (
        "the traveller waved",
        "the traveller bumped into them",
        "the traveller threw a crate at them",
    )
    options = options_for(("apple",), ("well", "bakery"), (("guard", "Sela the guard"),))
    spec = decision_spec(
        "Marta", "Marta the baker", -1, memories, options, "chat", "bring me an apple?"
    )
    assert build_completion_prompt(spec, spec.player_text) == (
        "Note: Marta feels wary towards the traveller.\n"
        "Note: Marta remembers: the traveller bumped into them.\n"
        "Note: Marta remembers: the traveller threw a crate at them.\n"
        "Note: Marta could: follow the traveller, fetch the apple, show the way, call someone,"
        " turn away, run away, carry on.\n"
        'Player: "bring me an apple?"\n'
        'Marta the baker (decides what to do): "'
    )
    # An event has no player line, and a neutral villager no feeling note.
    hit = decision_spec("Marta", "Marta the baker", 0, (), options, "hit_again", "ignored")
    assert hit.player_text == ""
    assert hit.situation == "hit by the traveller again, decides what to do"
    assert [n for n in hit.notes if "feels" in n] == []


def test_listed_collapses_places_and_calls() -> None:
    assert listed(OPTIONS) == [
        "follow the traveller",
        "fetch the apple",
        "fetch the ball",
        "put the apple in the basket",
        "show the way",
        "call someone",
        "turn away",
        "run away",
        "carry on",
    ]


def test_continuations_answer_and_parse_mood() -> None:
    assert action_continuations((FOLLOW, CARRY_ON)) == ("follow the traveller;", "carry on;")
    assert mood_continuations() == (' pleased"', ' unmoved"', ' offended"')
    assert answer(TURN_AWAY, "offended") == 'turn away; offended"'
    assert [parse_mood(t) for t in mood_continuations()] == ["pleased", "unmoved", "offended"]
    assert parse_mood("unmoved") == "unmoved"
    assert parse_mood(' angry"') is None
    assert parse_mood("") is None


def test_attitude_scale() -> None:
    assert [clamp_attitude(a) for a in (-5, -2, 0, 2, 9)] == [-2, -2, 0, 2, 2]
    assert [attitude_word(a) for a in (-2, -1, 0, 1, 2)] == [
        "cross",
        "wary",
        "",
        "friendly",
        "friendly",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("could you bring me an apple", ("fetch", "apple")),
        ("grab the ball for me", ("fetch", "ball")),
        ("put the apple in the basket", ("put", "apple")),
        ("follow me", ("follow", "")),
        ("where is the well?", ("show_way", "well")),
        ("call the guard", ("call", "guard")),
        ("you idiot", ("insult", "")),
        ("i will hurt you", ("threat", "")),
        ("sorry about that", ("apology", "")),
        ("thanks a lot", ("thanks", "")),
        ("nice weather today", ("other", "")),
        ("  ", (None, "")),
    ],
)
def test_rules_guess_intent(text: str, expected: tuple[str | None, str]) -> None:
    assert guess_intent(text, OPTIONS) == expected


def test_place_name() -> None:
    assert place_name("Baker's  Basket") == "baker's basket"


@pytest.mark.parametrize("path", [CORPUS, EVAL], ids=["corpus", "eval"])
def test_situation_files_load_and_label_an_option(path: Path) -> None:
    cast = load_cast()
    places = [place_name(d.label) for d in load_level().decor if d.label]
    situations = load_situations(path, cast, places)
    assert len(situations) > 100
    world = SituationWorld.of(cast)
    for situation in situations:
        assert situation.action in {o.text for o in world.options(situation)}, situation.id
        assert world.answer(situation) == f'{situation.action}; {situation.mood}"'


def test_a_bad_record_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    record = {
        "npc": "baker",
        "event": "chat",
        "text": "hi",
        "intent": "fetch",
        "action": "fetch the apple",
        "mood": "unmoved",
    }
    path.write_text("\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.jsonl:2: action 'fetch the apple'"):
        load_situations(path, load_cast(), [])


def test_decision_corpus_is_reproducible() -> None:
    first = make_decision_corpus.build(7)
    assert first == make_decision_corpus.build(7)
    assert first != make_decision_corpus.build(8)
    # The shipped corpus is what the generator writes with its default seed.
    shipped = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert make_decision_corpus.build(20261201) == shipped


def test_absent_options_are_the_known_asks_not_possible_now() -> None:
    possible = options_for(("apple",), ("well",), (("guard", "Sela the guard"),))
    known_places = ("well", "forge")
    known_villagers = (("guard", "Sela the guard"), ("elder", "Old Wen the elder"))
    absent = absent_options(possible, known_places, known_villagers)
    assert [o.text for o in absent] == [
        "fetch the ball",
        "fetch the crate",
        "show the way to the forge",
        "call Old Wen the elder",
    ]
    assert not set(absent) & set(possible)
    assert resolve(absent[0], possible) == CARRY_ON
    assert resolve(possible[1], possible) is possible[1]
