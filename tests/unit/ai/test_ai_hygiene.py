"""Output hygiene: examples and properties."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai import HygieneConfig, clean_line, find_blocked, is_garbage, sanitize_player_text
from ai.hygiene import clean_partial

CONFIG = HygieneConfig(max_chars=60, max_sentences=2)
BAD_CATEGORIES = {"Cc", "Cf", "Cs", "Co"}

# Text that looks like model output: words, punctuation, brackets, quotes, labels.
model_like = st.lists(
    st.one_of(
        st.text(min_size=1, max_size=12),
        st.sampled_from(
            [
                "Bess:",
                "*waves*",
                "(laughs)",
                "[sighs]",
                '"',
                "\u201c",
                "'",
                "...",
                "!",
                "?",
                "\n",
                "\t",
                "\x00",
                "\u200b",
                " ",
                "Tom the miller:",
                "*",
                "(",
                "]",
                ".",
                "\u2026",
            ]
        ),
    ),
    max_size=30,
).map(" ".join)
any_text = st.one_of(st.text(max_size=300), model_like)
configs = st.builds(
    HygieneConfig,
    max_chars=st.integers(min_value=8, max_value=200),
    max_sentences=st.integers(min_value=1, max_value=4),
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Stop. I'll bring you one of your own.\"", "Stop. I'll bring you one of your own."),
        ("Bess: Careful there!", "Careful there!"),
        ("Bess the baker: Careful there!", "Careful there!"),
        ("*waves* Hello there. (laughs)", "Hello there."),
        ("[sighs] Fine.\nSecond line ignored.", "Fine."),
        ("  \n\n  Late start.  ", "Late start."),
        ("One. Two! Three? Four.", "One. Two!"),
        ('"Quoted line," she said.', "Quoted line, she said."),
        ("'Wrapped in single quotes.'", "Wrapped in single quotes."),
        ("I can't   stop   spacing.", "I can't stop spacing."),
        ("Well, -", "Well"),
        ("", ""),
    ],
)
def test_clean_line_examples(raw: str, expected: str) -> None:
    assert clean_line(raw, CONFIG) == expected


def test_clean_line_caps_at_word_boundary() -> None:
    raw = "This is a very long line that keeps going and going, well past any sensible bubble width"
    cleaned = clean_line(raw, CONFIG)
    assert len(cleaned) <= CONFIG.max_chars
    assert cleaned.endswith("\u2026")
    assert cleaned[:-1] == cleaned[:-1].rstrip(" ,;:-")
    assert raw.startswith(cleaned[:-1])
    assert raw[len(cleaned) - 1] == " "


@settings(max_examples=400, deadline=None)
@given(raw=any_text, config=configs)
def test_clean_line_properties(raw: str, config: HygieneConfig) -> None:
    cleaned = clean_line(raw, config)
    assert clean_line(cleaned, config) == cleaned
    assert len(cleaned) <= config.max_chars
    assert "\n" not in cleaned
    assert '"' not in cleaned
    assert "*" not in cleaned
    assert "\u201c" not in cleaned
    assert "\u201d" not in cleaned
    assert not any(unicodedata.category(ch) in BAD_CATEGORIES for ch in cleaned)
    assert cleaned == cleaned.strip()
    assert "  " not in cleaned


@settings(max_examples=300, deadline=None)
@given(raw=any_text, max_chars=st.integers(min_value=1, max_value=300))
def test_sanitize_player_text_properties(raw: str, max_chars: int) -> None:
    text = sanitize_player_text(raw, max_chars)
    assert sanitize_player_text(text, max_chars) == text
    assert len(text) <= max_chars
    assert '"' not in text
    assert "\n" not in text
    assert not any(unicodedata.category(ch) in BAD_CATEGORIES for ch in text)


@settings(max_examples=200, deadline=None)
@given(raw=any_text)
def test_partial_and_checks_never_raise(raw: str) -> None:
    partial = clean_partial(raw, 50)
    assert len(partial) <= 50
    assert '"' not in partial
    assert "\n" not in partial
    is_garbage(raw)
    find_blocked(raw, ("darn",))


def test_sanitize_player_text_examples() -> None:
    assert sanitize_player_text('Hi "Bess"\n\x07how are\tyou?', 100) == "Hi Bess how are you?"
    assert sanitize_player_text("caf\u00e9 \u263a", 100) == "caf\u00e9 \u263a"
    assert sanitize_player_text("one two three four", 9) == "one two"


@pytest.mark.parametrize(
    ("text", "garbage"),
    [
        ("@@@ ###", True),
        ("", True),
        ("...", True),
        ("a", True),
        ("Hi!", False),
        ("No.", False),
        ("ok ###### $$$$", True),
    ],
)
def test_is_garbage(text: str, garbage: bool) -> None:
    assert is_garbage(text) is garbage


def test_find_blocked_matches_whole_words_any_case() -> None:
    words = ("darn", "c++")
    assert find_blocked("Well DARN it", words) == "DARN"
    assert find_blocked("darnation is fine", words) is None
    assert find_blocked("I write c++ daily", words) == "c++"
    assert find_blocked("anything", ()) is None


def test_a_line_with_a_replacement_character_is_garbage() -> None:
    assert is_garbage("Morning! Good \ufffd bread here.")
    assert not is_garbage("Morning! Good bread here.")
