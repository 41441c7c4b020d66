"""Stop-string filtering over arbitrarily split token streams."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ai.streaming import StopFilter

STOPS = ('"', "\n", "END")


def _run(pieces: list[str], stops: tuple[str, ...]) -> str:
    stop_filter = StopFilter(stops)
    out = []
    for piece in pieces:
        out.append(stop_filter.feed(piece))
        if stop_filter.stopped:
            break
    out.append(stop_filter.flush())
    return "".join(out)


def _expected(text: str, stops: tuple[str, ...]) -> str:
    cuts = [text.find(stop) for stop in stops if stop in text]
    return text[: min(cuts)] if cuts else text


@given(st.lists(st.text(alphabet='ab"EN D\n', max_size=6), max_size=20))
def test_output_is_text_before_first_stop(pieces: list[str]) -> None:
    assert _run(pieces, STOPS) == _expected("".join(pieces), STOPS)


def test_split_stop_string_is_held_back_then_dropped() -> None:
    stop_filter = StopFilter(("END",))
    assert stop_filter.feed("Go now E") == "Go now "
    assert stop_filter.feed("N") == ""
    assert stop_filter.feed("D more") == ""
    assert stop_filter.stopped


def test_false_alarm_is_released() -> None:
    stop_filter = StopFilter(("END",))
    assert stop_filter.feed("the E") == "the "
    assert stop_filter.feed("ND") == ""
    stop_filter = StopFilter(("END",))
    assert stop_filter.feed("E") == ""
    assert stop_filter.feed("gg") == "Egg"
