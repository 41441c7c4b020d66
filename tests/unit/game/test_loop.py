"""The fixed-step loop, driven by a fake clock."""

from __future__ import annotations

import pytest

from game.core.loop import FixedStepLoop


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_loop(clock: FakeClock, **kwargs: float) -> tuple[FixedStepLoop, list[int]]:
    loop = FixedStepLoop(clock, **kwargs)  # type: ignore[arg-type]
    ticks: list[int] = []
    loop.advance(ticks.append)  # starts the clock
    return loop, ticks


def test_first_advance_only_starts_the_clock() -> None:
    clock = FakeClock()
    loop = FixedStepLoop(clock)
    ticks: list[int] = []
    result = loop.advance(ticks.append)
    assert result.steps == 0
    assert ticks == []


def test_steps_match_elapsed_time_and_carry_the_remainder() -> None:
    clock = FakeClock()
    loop, ticks = make_loop(clock)
    clock.now += 2.5 / 60
    result = loop.advance(ticks.append)
    assert result.steps == 2
    assert ticks == [0, 1]
    assert result.alpha == pytest.approx(0.5)
    clock.now += 0.5 / 60
    result = loop.advance(ticks.append)
    assert result.steps == 1
    assert ticks == [0, 1, 2]
    assert result.alpha == pytest.approx(0.0, abs=1e-9)


def test_many_short_frames_accumulate_into_exact_ticks() -> None:
    clock = FakeClock()
    loop, ticks = make_loop(clock)
    for _ in range(600):
        clock.now += 1 / 240
        loop.advance(ticks.append)
    assert len(ticks) in (149, 150)  # float rounding may leave the last tick owed
    assert ticks == list(range(len(ticks)))


def test_frame_time_is_clamped() -> None:
    clock = FakeClock()
    loop, ticks = make_loop(clock, max_steps_per_frame=100)
    clock.now += 5.0  # a debugger pause
    result = loop.advance(ticks.append)
    assert result.frame_dt == pytest.approx(0.25)
    assert result.steps == 15
    assert result.dropped_s == pytest.approx(4.75)


def test_step_cap_drops_the_backlog_instead_of_spiralling() -> None:
    clock = FakeClock()
    loop, ticks = make_loop(clock, max_steps_per_frame=3)
    clock.now += 0.2
    result = loop.advance(ticks.append)
    assert result.steps == 3
    assert loop.accumulator < loop.dt
    assert 0.0 <= result.alpha < 1.0
    clock.now += 1 / 60
    assert loop.advance(ticks.append).steps == 1


def test_reset_forgets_the_gap() -> None:
    clock = FakeClock()
    loop, ticks = make_loop(clock)
    loop.reset()
    clock.now += 10.0
    assert loop.advance(ticks.append).steps == 0
    clock.now += 1.5 / 60
    assert loop.advance(ticks.append).steps == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hz": 0}, "hz"),
        ({"max_frame_s": 0.0}, "max_frame_s"),
        ({"max_steps_per_frame": 0}, "max_steps"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FixedStepLoop(FakeClock(), **kwargs)  # type: ignore[arg-type]
