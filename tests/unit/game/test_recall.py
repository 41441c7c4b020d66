""" "Do you remember me?" is answered from what the villager remembers of the traveller.

The question is known in its many phrasings (and not in "remember to buy bread"); its
prompt carries every remembered fact, the most telling first; an answer that names
none of them gives way to the villager's template answer from the same memory; and all
of it holds in a game continued from a save. Villages run on a scripted backend.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ai import GenerationConfig, Priority, PromptSpec, ScriptedBackend
from ai.requests import make_plan
from ai.scripted_backend import ScriptedReply, default_line
from ai.selection import faults
from game.core.session import Session
from game.dialogue.line_plan import LineAskParts, LinePlanner, load_trigger_words
from game.dialogue.line_source import LineReady
from game.dialogue.memory import Memory
from game.dialogue.persona_prompt import Persona
from game.dialogue.recall import RECALL_QUESTION, fact_kind, is_recall_question
from game.persist.autosave import capture, restore, villager_keys
from game.persist.store import SaveStore
from game.sim.cast import load_cast
from game.sim.events import Trigger
from game.sim.player import PLAYER_H
from tests.unit.game.conftest import (
    CHAT,
    FAST_TIMINGS,
    STAY,
    Tap,
    npc_named,
    open_chat,
    source_of,
    walk,
)

ERRAND = "the traveller helped with their errand"
BREAD = "the traveller asked them about bread"
CRATE = "the traveller threw a crate at them"
BUMP = "the traveller bumped into them"
NAMES = ("Marta", "baker", "Old Wen", "elder")
EVAL_CASES = "tools/eval/data/dialogue/recall.json"


@pytest.mark.parametrize(
    "text",
    [
        "do you remember me?",
        "Do you remember me?",
        "remember me?",
        "have we met?",
        "Have we met before?",
        "do you know who I am?",
        "you know me?",
        "what do you remember about me?",
        "Marta, do you remember me?",
        "hey Old Wen, remember me?",
        "Don't you recognise me?",
        "have you forgotten me?",
        "you still remember me, right?",
        "Do you know me at all?",
        "  DO YOU REMEMBER ME  ",
    ],
)
def test_the_question_is_known_in_its_phrasings(text: str) -> None:
    assert is_recall_question(text, NAMES)


@pytest.mark.parametrize(
    "text",
    [
        "remember to buy bread",
        "I remember the old days",
        "do you remember when the market hall was built?",
        "do you know where the forge is?",
        "who are you?",
        "let me know",
        "what do you know about Odo?",
        # More than the question: the rest must be read as any chat is (and filtered).
        "remember me, you useless lump?",
        "do you remember me? give me your bread",
        "",
    ],
)
def test_other_questions_are_not_it(text: str) -> None:
    assert not is_recall_question(text, NAMES)


def test_four_questions_do_not_push_an_errand_out_of_memory() -> None:
    memory = Memory()
    memory.add_fact(ERRAND)
    memory.add_fact(BUMP)
    for topic in ("bread", "the pies", "the bakery", "Odo"):
        memory.add_fact(f"the traveller asked them about {topic}")
    assert ERRAND in memory.facts
    assert BUMP not in memory.facts
    assert memory.facts[-1] == "the traveller asked them about Odo"


# -- in a village ----------------------------------------------------------------------


class Answers:
    """A scripted backend's script: ``reply`` to chat prompts; other prompts get the default."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.chats: list[PromptSpec] = []

    def __call__(self, prompt: PromptSpec) -> ScriptedReply:
        if prompt.situation != CHAT:
            return default_line(prompt)
        self.chats.append(prompt)
        return self.reply


def _village(
    make_village: Callable[..., Session], reply: str, *overrides: str
) -> tuple[Session, Answers]:
    answers = Answers(reply)
    backend = ScriptedBackend(FAST_TIMINGS, answers, prompt_style="village")
    return make_village("game.dialogue.greet_ahead=false", *overrides, backend=backend), answers


def _stand_by(village: Session, npc: int) -> None:
    """Put the player beside the villager, at rest, for a few ticks (greetings over)."""
    world = village.world
    position = world.entity_position(npc)
    assert position is not None
    x = position[0] + 50.0
    world.place_player(x, world.level.ground_y(x) + PLAYER_H / 2 + 1.0)
    for _ in range(5):
        village.step(STAY)


def _ask(village: Session, npc: int, text: str, tap: Tap) -> LineReady:
    _stand_by(village, npc)
    open_chat(village, npc, text)
    walk(village, STAY, 30, until=lambda: bool(_answers(tap, npc)))
    (ready,) = _answers(tap, npc)
    return ready


def _answers(tap: Tap, npc: int) -> list[LineReady]:
    return [r for _, r in tap.ready(npc) if r.ask.trigger is Trigger.CHAT]


def _remember(village: Session, npc: int, *facts: str) -> None:
    memory = village.dialogue.memories.of(npc)
    for fact in facts:
        memory.add_fact(fact)


def _recall_lines(cast_id: str, kind: str) -> tuple[str, ...]:
    spec = next(s for s in load_cast().npcs if s.id == cast_id)
    return spec.recall[kind]


def test_the_prompt_holds_every_memory_most_telling_first_and_no_fact_of_old_days(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Her answer goes on from the first of her openers, "I do, child. You".
    village, answers = _village(make_village, "threw a crate at me.")
    tap = Tap(source_of(village), monkeypatch)
    wen = npc_named(village, "Old Wen")
    _remember(village, wen, BUMP, CRATE, "the traveller asked them about Pip")
    walk(village, STAY, 5)

    ready = _ask(village, wen, "do you remember me?", tap)

    (prompt,) = answers.chats
    remembered = [n for n in prompt.notes if "remembers:" in n]
    assert remembered == [
        f"Old Wen remembers: {CRATE}.",
        "Old Wen remembers: the traveller asked them about Pip.",
        f"Old Wen remembers: {BUMP}.",
    ]
    # Her fact "I remember when the market hall was built" does not answer it.
    assert not any("knows:" in n for n in prompt.notes)
    assert prompt.player_text == RECALL_QUESTION
    assert prompt.opener == "I do, child. You"
    assert (ready.origin, ready.text) == ("model", "I do, child. You threw a crate at me.")
    # Asked about the traveller, not about a topic she would then remember.
    assert not any("old days" in f for f in village.dialogue.memories.of(wen).facts)


def test_an_answer_that_names_nothing_remembered_gives_way_to_the_template(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    village, answers = _village(make_village, "Warm ovens and cold nights, dear.")
    tap = Tap(source_of(village), monkeypatch)
    marta = npc_named(village, "Marta")
    _remember(village, marta, BREAD, ERRAND)
    walk(village, STAY, 5)

    ready = _ask(village, marta, "Have we met?", tap)

    assert answers.chats  # the model was asked, and its answers were not shown
    assert ready.origin == "fallback"
    assert ready.text in _recall_lines("baker", "errand")
    assert [text for _, text in tap.partials(marta)] == [""]  # only "thinking"
    assert village.dialogue.board.text_of(marta) == ready.text

    # Any other question is asked in the player's words, and its reply types in.
    answers.reply = "Two coppers a loaf, dear."
    walk(village, STAY, 200)  # the bubble's time
    open_chat(village, marta, "remember to save me some bread")
    walk(village, STAY, 30, until=lambda: len(_answers(tap, marta)) == 2)
    assert _answers(tap, marta)[1].text == "Two coppers a loaf, dear."
    assert answers.chats[-1].player_text == "remember to save me some bread"
    assert "Two" in [text for _, text in tap.partials(marta)]  # typed in word by word


def test_with_nothing_remembered_a_made_up_memory_gives_way_to_a_stranger_answer(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    village, _ = _village(make_village, "Of course! You brought me the apples, dear.")
    tap = Tap(source_of(village), monkeypatch)
    marta = npc_named(village, "Marta")
    walk(village, STAY, 5)

    ready = _ask(village, marta, "do you know who I am?", tap)

    assert ready.origin == "fallback"
    assert ready.text in _recall_lines("baker", "stranger")


def test_a_continued_game_answers_from_the_memories_it_saved(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first, _ = _village(make_village, "Hm.")
    pip = npc_named(first, "Pip")
    _remember(first, pip, BUMP, ERRAND)
    state = capture(first.world, first.dialogue.memories, villager_keys(first.world))
    store = SaveStore(tmp_path / "save.sqlite3")
    try:
        store.write(state)
    finally:
        store.close()
    store = SaveStore(tmp_path / "save.sqlite3")
    try:
        loaded = store.load()
    finally:
        store.close()
    assert loaded is not None

    # The model's answer names nothing remembered, so the template must find the errand.
    village, answers = _village(make_village, "Wanna see a frog?")
    restore(village.world, village.dialogue.memories, loaded)
    tap = Tap(source_of(village), monkeypatch)
    pip = npc_named(village, "Pip")
    walk(village, STAY, 5)

    ready = _ask(village, pip, "you know me?", tap)

    assert [n for n in answers.chats[0].notes if "remembers:" in n] == [
        f"Pip remembers: {ERRAND}.",
        f"Pip remembers: {BUMP}.",
    ]
    assert ready.origin == "fallback"
    assert ready.text in _recall_lines("child", "errand")


def _chat_with_the_model_off(village: Session, npc: int, *texts: str) -> list[str | None]:
    """Stand by ``npc``, open a chat, say each of ``texts``; what the villager said to each."""
    _stand_by(village, npc)
    assert village.world.set_talking(npc, True)
    village.step(STAY)
    me = village.world.player_status().id
    said = []
    for text in texts:
        village.dialogue.say(village.tick, npc, me, text)
        village.dialogue.update(village.tick)
        said.append(village.dialogue.board.text_of(npc))
    return said


def test_with_the_model_off_the_template_answers_from_memory(
    make_village: Callable[..., Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    village = make_village('game.dialogue.ai_mode="off"', wait=False)
    sela = npc_named(village, "Sela")
    _remember(village, sela, BUMP, "the traveller threw an apple at them")
    (said,) = _chat_with_the_model_off(village, sela, "Do you remember me?")
    options = _recall_lines("guard", "threw")
    assert said in {line.replace("{thing}", "an apple") for line in options}


def test_a_chat_with_no_model_line_answers_from_the_villagers_own_fact(
    make_village: Callable[..., Session],
) -> None:
    village = make_village('game.dialogue.ai_mode="off"', wait=False)
    wen = npc_named(village, "Old Wen")
    asked, small_talk = _chat_with_the_model_off(
        village, wen, "How long have you lived in Millbrook?", "Nice weather."
    )
    assert asked == (
        "I have lived in Millbrook for eighty years; I remember when the market hall was built."
    )
    # Small talk matches no fact: the villager's own chat lines answer it.
    assert "eighty" not in (small_talk or "")


# -- the check on the model's answer ------------------------------------------------------


@pytest.fixture(scope="module")
def planner() -> LinePlanner:
    cast = load_cast()
    personas = {
        i: Persona(
            s.name,
            s.role,
            s.persona,
            s.lines,
            s.openers,
            s.facts,
            s.recall_openers,
            s.stranger_openers,
        )
        for i, s in enumerate(cast.npcs, start=1)
    }
    planner = LinePlanner("", personas, load_trigger_words(), GenerationConfig(), cast.facts)
    planner.use_style("village")
    return planner


def _faults(
    planner: LinePlanner, facts: tuple[str, ...], answer: str, errand: str = ""
) -> tuple[str, ...]:
    memory = Memory()
    for fact in facts:
        memory.add_fact(fact)
    # Marta (1), who gives the apples errand.
    ask = LineAskParts(
        1, Trigger.CHAT, Priority.PLAYER_CHAT, player_text="remember me?", errand=errand
    )
    _, plan = planner.build(ask, memory)
    return faults(answer, make_plan(plan).criteria)


APPLES = "Fill the baker's basket with 5 apples"


@pytest.mark.parametrize(
    ("facts", "answer", "passes"),
    [
        ((ERRAND, BREAD), "You're the one who brought me the apples!", True),
        ((ERRAND, BREAD), "You asked me about bread, dear.", True),
        ((ERRAND, BREAD), "I remember the oven was hot that morning, dear.", False),
        ((CRATE,), "Oh, you threw a crate at me!", True),
        ((CRATE,), "I did, I was young then, and the square was full of geese.", False),
        ((BUMP,), "You bumped into me, dear.", True),
        ((), "Can't say I do, dear.", True),
        ((), "I remember you. I've watched the whole village since, and never failed.", False),
        ((), "Of course! You brought me the apples, dear.", False),
        ((), "I'm not a stranger, dear, I'm the baker.", False),
    ],
)
def test_the_answer_must_name_a_memory_or_say_it_has_none(
    planner: LinePlanner, facts: tuple[str, ...], answer: str, passes: bool
) -> None:
    assert (_faults(planner, facts, answer, APPLES) == ()) is passes


def test_the_answer_must_not_say_the_villager_did_what_the_traveller_did(
    planner: LinePlanner,
) -> None:
    pies = "the traveller asked them about the pies"
    found = _faults(planner, (pies,), "I asked about the pies.")
    assert "role_swap" in found


def test_the_evaluations_questions_are_all_the_question_and_its_memories_real() -> None:
    cases = json.loads((Path(__file__).resolve().parents[3] / EVAL_CASES).read_text())
    cast = load_cast()
    names = {s.name for s in cast.npcs}
    addresses = [w for s in cast.npcs for w in (s.name, s.role)]
    assert len(cases) >= 10
    for case in cases:
        assert case["npc"] in names
        assert is_recall_question(case["q"], addresses), case["q"]
        assert all(fact_kind(f) for f in case["facts"]), case["facts"]
    assert any(not c["facts"] for c in cases)
    assert any(c["facts"] for c in cases)
