"""The village corpus: it loads, it covers the village, its errors name a line, and the
dialogue evaluation's own situations and questions never appear in it."""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from pathlib import Path

import pytest

from game.assets import AssetError
from game.dialogue.corpus import (
    CorpusRecord,
    corpus_world,
    game_asks,
    is_held_out,
    load_corpus,
    record_prompt,
    split,
    training_line,
)
from game.dialogue.recall import is_recall_question
from game.dialogue.templates import TEMPLATE_ONLY
from game.sim.cast import Cast, load_cast
from game.sim.events import Trigger
from game.sim.level import load_level

EVAL = Path(__file__).resolve().parents[3] / "tools" / "eval" / "data" / "dialogue"


@pytest.fixture(scope="module")
def cast() -> Cast:
    return load_cast()


@pytest.fixture(scope="module")
def records(cast: Cast) -> tuple[CorpusRecord, ...]:
    return load_corpus(cast)


def _norm(text: str) -> str:
    return " ".join(text.lower().strip(" ?!.").split())


def test_every_villager_has_every_trigger_and_hundreds_of_lines(
    cast: Cast, records: tuple[CorpusRecord, ...]
) -> None:
    assert 1500 <= len(records) <= 3000
    per_npc = Counter(r.npc for r in records)
    for spec in cast.npcs:
        assert per_npc[spec.id] >= 250, spec.id
        triggers = {r.trigger for r in records if r.npc == spec.id}
        # A template-only line (the ball's hint) is never the model's to write.
        wanted = set(Trigger) - TEMPLATE_ONLY
        assert triggers == wanted, (spec.id, wanted - triggers)


def test_lines_are_unique_and_never_a_template(
    cast: Cast, records: tuple[CorpusRecord, ...]
) -> None:
    lines = Counter(r.line for r in records)
    assert [line for line, n in lines.items() if n > 1] == []
    templates = {line for spec in cast.npcs for group in spec.lines.values() for line in group}
    assert [r.line for r in records if r.line in templates] == []


def test_no_evaluation_question_is_in_the_corpus(records: tuple[CorpusRecord, ...]) -> None:
    questions = tomllib.loads((EVAL / "chat.toml").read_text())["question"]
    asked = {(q["npc"], _norm(q["ask"])) for q in questions}
    assert [r.question for r in records if (r.npc, _norm(r.question)) in asked] == []


def test_no_evaluation_situation_is_in_the_corpus(records: tuple[CorpusRecord, ...]) -> None:
    situations = json.loads((EVAL / "situations.json").read_text())["situations"]
    # The evaluation's situations carry no memory, attitude or errand state.
    held = {(s["npc"], s["trigger"], s["listener"], s["subject"]) for s in situations}
    leaked = [
        r.source
        for r in records
        if r.trigger is not Trigger.CHAT
        and not (r.memory or r.attitude or r.errand)
        and (r.npc, r.trigger.value, r.listener, r.prop) in held
    ]
    assert leaked == []


def test_the_held_out_split_is_stable_and_covers_barks_and_chats(
    records: tuple[CorpusRecord, ...],
) -> None:
    train, held = split(records)
    assert len(train) + len(held) == len(records)
    assert 0.05 * len(records) < len(held) < 0.16 * len(records)
    assert {r.trigger for r in held} >= {Trigger.CHAT, Trigger.GREET, Trigger.HIT}
    # A held-out situation is held out whole: no training record shares it.
    assert not {r.situation_key for r in held} & {r.situation_key for r in train}
    assert [is_held_out(r) for r in held] == [True] * len(held)


def test_a_record_becomes_the_games_own_compact_prompt(cast: Cast) -> None:
    world = corpus_world(cast, load_level())
    bark = CorpusRecord(
        "t",
        "baker",
        Trigger.HIT,
        "Ow!",
        prop="crate",
        errand="asked",
        memory=("the traveller bumped into them",),
        attitude="wary",
    )
    assert record_prompt(bark, world) == (
        "Note: Marta feels wary towards the traveller.\n"
        "Note: Marta has asked the traveller for help; it is not done yet.\n"
        "Note: Marta remembers: the traveller bumped into them.\n"
        'Marta the baker (hit by a crate): "'
    )
    fact = "Marta is the baker; her bakery is at the west end of the market street."
    chat = CorpusRecord(
        "t",
        "guard",
        Trigger.CHAT,
        "West end.",
        question="where's the bakery?",
        knows=(fact,),
        history=(("Player", "Hello."), ("Sela", "Citizen.")),
    )
    assert record_prompt(chat, world) == (
        f"Note: Sela knows: {fact}\n"
        'Player: "Hello."\n'
        'Sela: "Citizen."\n'
        'Player: "where\'s the bakery?"\n'
        'Sela the guard (replying to the traveller): "'
    )


def test_every_prompt_is_short(cast: Cast, records: tuple[CorpusRecord, ...]) -> None:
    world = corpus_world(cast, load_level())
    longest_bark = max(
        len(record_prompt(r, world).split()) for r in records if r.trigger is not Trigger.CHAT
    )
    # About 1.4 tokens a word for this text: a bark's prompt stays well under 100 tokens.
    assert longest_bark <= 55


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("{not json", "line 2: not JSON"),
        ('{"npc": "ghost"}', "line 2: npc: unknown villager 'ghost'"),
        (
            '{"npc": "baker", "trigger": "hit", "listener": "traveller", "prop": "anvil", '
            '"errand": "", "memory": [], "attitude": "", "line": "Ow!"}',
            "line 2: prop: unknown 'anvil'",
        ),
        (
            '{"npc": "baker", "trigger": "chat", "question": "q", "knows": ["made up"], '
            '"memory": [], "attitude": "", "history": [], "line": "Hm."}',
            "line 2: knows: not a fact of the cast",
        ),
        (
            '{"npc": "baker", "trigger": "greet", "listener": "traveller", "prop": "", '
            '"errand": "", "memory": [], "attitude": "", "line": "say \\"hi\\""}',
            "line 2: line: 1 to 120 characters, no double quotes",
        ),
    ],
)
def test_a_bad_record_names_its_file_and_line(
    cast: Cast, tmp_path: Path, line: str, error: str
) -> None:
    good = (
        '{"npc": "baker", "trigger": "greet", "listener": "farmer", "prop": "", '
        '"errand": "", "memory": [], "attitude": "", "line": "Morning, Odo."}'
    )
    (tmp_path / "baker.jsonl").write_text(good + "\n" + line + "\n")
    with pytest.raises(AssetError, match="baker.jsonl " + error.replace("(", r"\(")):
        load_corpus(cast, tmp_path)


def test_an_empty_folder_is_an_error(cast: Cast, tmp_path: Path) -> None:
    with pytest.raises(AssetError, match="no corpus files"):
        load_corpus(cast, tmp_path)


def test_a_recall_record_becomes_the_games_recall_prompt(
    cast: Cast, records: tuple[CorpusRecord, ...]
) -> None:
    world = corpus_world(cast, load_level())
    record = CorpusRecord(
        "t",
        "farmer",
        Trigger.CHAT,
        "You asked about the weather, friend.",
        memory=("the traveller bumped into them", "the traveller asked them about the weather"),
        question="remember me?",
    )
    # As the game asks it: in its canonical words, every memory, the most telling first.
    assert record_prompt(record, world) == (
        "Note: Odo remembers: the traveller asked them about the weather.\n"
        "Note: Odo remembers: the traveller bumped into them.\n"
        'Player: "Do you remember me?"\n'
        'Odo the farmer (replying to the traveller): "'
    )
    names = [w for spec in cast.npcs for w in (spec.name, spec.role)]
    asked = Counter(r.npc for r in records if is_recall_question(r.question, names))
    assert all(asked[spec.id] >= 4 for spec in cast.npcs), asked


def _bark(line: str, memory: tuple[str, ...] = (), trigger: Trigger = Trigger.HIT) -> CorpusRecord:
    return CorpusRecord("t:1", "baker", trigger, line, prop="crate", memory=memory)


def test_training_takes_only_the_prompts_the_game_sends() -> None:
    asked = "the traveller asked them about the oven"
    assert game_asks(_bark("Ow!", ()))
    assert game_asks(_bark("Ow!", (asked,)))
    # Two memories, a bump, or an earlier throw in a reaction: never in a bark's prompt.
    assert not game_asks(_bark("Ow!", ("the traveller helped with their errand", asked)))
    assert not game_asks(_bark("Ow!", ("the traveller bumped into them",)))
    assert not game_asks(_bark("Ow!", ("the traveller threw a ball at them",)))
    assert game_asks(_bark("Hello.", ("the traveller threw a ball at them",), Trigger.GREET))


def test_a_barks_target_ends_where_the_game_stops_it() -> None:
    assert training_line(_bark("Ow! A crate, dear. Mind the bread.")) == "Ow! A crate, dear."
    assert training_line(_bark("Ow! Oof!")) == "Ow! Oof!"
    chat = CorpusRecord(
        "t:2", "baker", Trigger.CHAT, "Two coppers. Best rye.", question="how much?"
    )
    assert training_line(chat) == "Two coppers. Best rye."


def test_bare_moments_are_in_the_corpus_except_the_evaluations(
    cast: Cast, records: tuple[CorpusRecord, ...]
) -> None:
    """Most moments in play are bare; the corpus has them for all but the two villagers
    of each moment the evaluation keeps."""
    bare = Counter(
        (r.npc, r.trigger.value, r.prop)
        for r in records
        if r.trigger is not Trigger.CHAT
        and r.listener == "traveller"
        and not (r.memory or r.attitude or r.errand)
    )
    situations = json.loads((EVAL / "situations.json").read_text())["situations"]
    held = {
        (s["npc"], s["trigger"], s["subject"]) for s in situations if s["listener"] == "traveller"
    }
    assert len(held) == 30
    npcs = sorted(spec.id for spec in cast.npcs)
    moments = {(t, p) for _, t, p in held}
    for npc in npcs:
        for trigger, prop in moments:
            if (npc, trigger, prop) not in held:
                assert bare[(npc, trigger, prop)] >= 7, (npc, trigger, prop)
