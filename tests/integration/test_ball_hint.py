"""The ball errand's hint: a traveller stuck under the roof ball is told the way up, once.

On the level as it was, nobody said anything however long the player jumped about below
the ball; the way up (the forge hood from its right, then the roof) was found by luck.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from game.app import build_village
from game.config.settings import load_settings
from game.core.session import Session
from game.sim.cast import load_cast
from game.sim.events import SpeechWanted, Trigger
from game.sim.level import load_level
from game.sim.player import PlayerIntent
from game.sim.ticks import HZ
from game.sim.world import PLAYER_ID, World

UNDER_BALL_X = 2260.0
"""Under the market hall roof, a little off the ball (x 2300)."""
AWAY_X = 1500.0
QUIET_S = 15
"""Nobody hints this soon: the player may be about to get it."""
HINT_BY_S = 20
"""... and someone has by now."""
HINT = "errand_hint"


def _stuck(tick: int) -> PlayerIntent:
    """What a stuck player does under the ball: jumps now and then, shuffles about."""
    return PlayerIntent(move=(1, 0, -1, 0)[(tick // 45) % 4], jump=tick % 50 == 0)


def _hints(world: World, ticks: int, intent: Iterator[PlayerIntent]) -> list[SpeechWanted]:
    said = []
    for _ in range(ticks):
        for event in world.step(next(intent)):
            if isinstance(event, SpeechWanted) and event.trigger == HINT:
                said.append(event)
    return said


def _stuck_player(world: World) -> Iterator[PlayerIntent]:
    while True:
        yield _stuck(world.tick)


def _walk_to(world: World, x: float) -> Iterator[PlayerIntent]:
    while True:
        dx = x - world.player.body.position.x
        yield PlayerIntent(move=0 if abs(dx) < 20 else (1 if dx > 0 else -1))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_player_stuck_under_the_ball_is_told_the_way_up_once(seed: int) -> None:
    world = World(load_level(), load_cast(), seed)
    world.place_player(UNDER_BALL_X, 40.0)
    stuck = _stuck_player(world)
    assert _hints(world, QUIET_S * HZ, stuck) == []
    said = _hints(world, (HINT_BY_S - QUIET_S) * HZ, stuck)
    assert len(said) == 1
    assert said[0].listener_id == PLAYER_ID
    ball = next(p for p in world.props if p.tag == "roof_ball")
    assert said[0].refs == (ball.id,)
    # Still stuck half a minute on: not said again in the same spell.
    assert _hints(world, 30 * HZ, stuck) == []


def test_a_new_stuck_spell_after_walking_off_gets_the_hint_again() -> None:
    world = World(load_level(), load_cast(), 1)
    world.place_player(UNDER_BALL_X, 40.0)
    stuck = _stuck_player(world)
    assert len(_hints(world, HINT_BY_S * HZ, stuck)) == 1
    assert _hints(world, 12 * HZ, _walk_to(world, AWAY_X)) == []
    assert _hints(world, 12 * HZ, _walk_to(world, UNDER_BALL_X)) == []
    assert len(_hints(world, HINT_BY_S * HZ, stuck)) == 1


def test_no_hint_once_the_ball_is_down() -> None:
    world = World(load_level(), load_cast(), 1)
    ball = next(p for p in world.props if p.tag == "roof_ball")
    ball.body.position = (UNDER_BALL_X + 60.0, 30.0)
    world.place_player(UNDER_BALL_X, 40.0)
    assert _hints(world, (HINT_BY_S + 5) * HZ, _stuck_player(world)) == []


def _hint_lines(world: World, npc_id: int) -> tuple[str, ...]:
    spec = world.npc_spec(npc_id)
    return spec.lines_for(Trigger(HINT)) if spec is not None else ()


def test_the_hint_bubble_is_the_speakers_own_errand_hint_line() -> None:
    village: Session = build_village(load_settings(overrides=('game.dialogue.ai_mode="off"',)))
    try:
        world = village.world
        world.place_player(UNDER_BALL_X, 40.0)
        said: list[tuple[int, str]] = []
        for _ in range(HINT_BY_S * HZ):
            village.step(_stuck(world.tick))
            said += [(b.speaker_id, b.text) for b in village.dialogue.bubbles(village.tick)]
        hints = {(npc_id, text) for npc_id, text in said if text in _hint_lines(world, npc_id)}
        assert len(hints) == 1
        ((_, text),) = hints
        assert "forge hood" in text
    finally:
        village.close()
