"""TextCache: one render per distinct label, bounded memory, and wrapping that fits."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from game.render.text import TextCache

WORDS = [
    "a",
    "the",
    "apple",
    "bread",
    "anvil",
    "Bess",
    "who",
    "threw",
    "crate",
    "mind",
    "dear",
    "village",
    "morning",
    "fresh",
    "well",
    "is",
    "it",
    "tomorrow,",
    "yes!",
]


def test_same_key_returns_the_same_surface() -> None:
    cache = TextCache(capacity=8)
    first = cache.render("Bess", 14, (255, 255, 255))
    assert cache.render("Bess", 14, (255, 255, 255)) is first
    assert cache.renders == 1
    assert cache.render("Bess", 14, (0, 0, 0)) is not first
    assert cache.render("Bess", 14, (255, 255, 255), bold=True) is not first
    assert cache.renders == 3


def test_cache_evicts_the_least_recently_used_beyond_capacity() -> None:
    cache = TextCache(capacity=3)
    a = cache.render("a", 14, (0, 0, 0))
    cache.render("b", 14, (0, 0, 0))
    cache.render("c", 14, (0, 0, 0))
    assert cache.render("a", 14, (0, 0, 0)) is a  # touch "a": "b" is now the oldest
    cache.render("d", 14, (0, 0, 0))
    assert len(cache) == 3
    assert cache.render("a", 14, (0, 0, 0)) is a
    renders = cache.renders
    cache.render("b", 14, (0, 0, 0))
    assert cache.renders == renders + 1  # "b" was evicted and had to be rendered again


def test_fonts_are_loaded_once_per_size_and_weight() -> None:
    cache = TextCache()
    assert cache.font(16) is cache.font(16)
    assert cache.font(16, bold=True) is not cache.font(16)


def test_missing_font_files_fall_back_to_the_default_font(tmp_path: Path) -> None:
    cache = TextCache(regular=tmp_path / "none.ttf", bold=tmp_path / "none-bold.ttf")
    assert cache.render("hello", 14, (0, 0, 0)).get_width() > 0
    assert cache.font(14, bold=True).bold


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=40),
    max_width=st.integers(min_value=90, max_value=400),
)
def test_wrapped_lines_never_exceed_the_width(words: list[str], max_width: int) -> None:
    cache = TextCache()
    text = " ".join(words)
    lines = cache.wrap(text, 16, max_width)
    assert all(cache.measure(line, 16)[0] <= max_width for line in lines)
    assert " ".join(lines).split() == words  # nothing lost, nothing reordered


def test_a_word_wider_than_the_line_is_broken_to_fit() -> None:
    cache = TextCache()
    lines = cache.wrap("Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaargh!", 16, 80)
    assert len(lines) > 1
    assert all(cache.measure(line, 16)[0] <= 80 for line in lines)
    assert "".join(lines) == "Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaargh!"


def test_wrap_keeps_newlines_and_is_cached() -> None:
    cache = TextCache()
    lines = cache.wrap("one\ntwo", 16, 300)
    assert lines == ("one", "two")
    assert cache.wrap("one\ntwo", 16, 300) is lines


def test_an_emoji_the_font_lacks_reads_as_its_name_never_a_box() -> None:
    cache = TextCache()
    assert cache.readable("I don't like \U0001fad6.") == "I don't like (teapot)."
    # A joined emoji (man + joiner + computer) is one group of names, the joiner dropped.
    assert cache.readable("\U0001f468\u200d\U0001f4bb") == "(man)(personal computer)"
    # What the font draws stays as it is: accents, hearts, arrows.
    assert cache.readable("Caf\u00e9 \u2665 \u2192") == "Caf\u00e9 \u2665 \u2192"
    assert cache.render("\U0001fad6", 14, (0, 0, 0)).get_width() == cache.measure("(teapot)", 14)[0]
