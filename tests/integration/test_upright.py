"""Villagers stay on their feet under long bot play: upright, never on someone's head,
never hanging in the air, unless knocked down.

Two runs, stepped back to back through the game's own session with the scripted model:
the errand bot over the whole level (basket, market roof, crate stack) for 5 minutes of
game time, and the crowd scenario (the village tour among 31 villagers) for 4 minutes.
That is 9 simulated minutes in all, about 50 s of wall time here; the issue asked for
10 minutes, which would take the test past a minute.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pymunk
import pytest

from game.app import build_village
from game.config.settings import load_settings
from game.core.session import Session
from game.input.bot import Bot
from game.sim.categories import CARRIED, HELD, NET, PROP, STATIC
from game.sim.npc_states import DOWN
from game.sim.player import PLAYER_H
from game.sim.ticks import HZ
from game.sim.villager import NPC_H, NPC_W, Villager
from game.sim.world import World

SCRIPTED = (
    'ai.model.backend="scripted"',
    "ai.scripted.load_s=0.0",
    "ai.scripted.ttft_s=0.0",
    "ai.scripted.token_s=0.001",
    "ai.scheduler.rate_limit_s=0.0",
)
SAMPLE_STRIDE = 4
MAX_TILT = math.radians(10.0)
ON_TOP_MARGIN = 8.0
"""A villager touching someone counts as on their top once their middle is this close to
a pair of stacked half-heights above the other's middle ..."""
ON_TOP_SAMPLES = 2
"""... and rests there once found so in two samples running (landing on a head and
getting down within four ticks is not resting on it)."""
HOVER_GAP = 4.0
HOVER_SPEED = 15.0
HOVER_SAMPLES = 4
"""Feet with nothing under them and hardly any vertical speed, for this many samples in a
row (16 ticks; a hop's apex passes in two or three), is hanging in the air."""
UNDERFOOT = pymunk.ShapeFilter(mask=STATIC | NET | PROP | HELD | CARRIED)
"""What a villager's feet may be held up by (not sensor zones)."""


@dataclass(slots=True)
class Findings:
    """What the samples found; each list names the villager, the tick and the figure."""

    samples: int = 0
    max_tilt: float = 0.0
    tilted: list[tuple[str, int, str, float]] = field(default_factory=list)
    on_top: list[tuple[str, int, str]] = field(default_factory=list)
    hovering: list[tuple[str, int, float]] = field(default_factory=list)
    _air: dict[int, int] = field(default_factory=dict)
    _up: dict[int, int] = field(default_factory=dict)


def _on_top_of(world: World, villager: Villager) -> str | None:
    """Whom the villager rests on (the player or another villager), if anyone."""
    player = world.player
    people: dict[pymunk.Shape, tuple[str, float, pymunk.Body]] = {
        player.shape: ("player", PLAYER_H, player.body)
    }
    people.update(
        {v.shape: (v.spec.name, NPC_H, v.body) for v in world.villagers if v is not villager}
    )
    load = player.carrying
    if load is not None:
        # What the player carries over their head is the top of the player.
        people[load.shape] = ("player's load", load.kind.h, load.body)
    found: list[str] = []

    def visit(arbiter: pymunk.Arbiter) -> None:
        a, b = arbiter.shapes
        other = b if a is villager.shape else a
        if other not in people:
            return
        name, height, body = people[other]
        rise = villager.y - body.position.y
        if rise > (NPC_H + height) / 2 - ON_TOP_MARGIN:
            found.append(name)

    villager.body.each_arbiter(visit)
    return found[0] if found else None


def _nothing_underfoot(world: World, villager: Villager) -> bool:
    feet = villager.y - NPC_H / 2
    half = NPC_W / 2
    box = pymunk.BB(villager.x - half, feet - HOVER_GAP, villager.x + half, feet + 2.0)
    return not world.space.bb_query(box, UNDERFOOT)


def _sample(world: World, findings: Findings) -> None:
    for v in world.villagers:
        if v.brain.state in DOWN:
            findings._air[v.id] = findings._up[v.id] = 0
            continue
        findings.samples += 1
        tilt = abs(v.angle)
        findings.max_tilt = max(findings.max_tilt, tilt)
        if tilt > MAX_TILT:
            findings.tilted.append((v.spec.name, world.tick, v.brain.state.value, tilt))
        under = _on_top_of(world, v)
        findings._up[v.id] = 0 if under is None else findings._up.get(v.id, 0) + 1
        if under is not None and findings._up[v.id] >= ON_TOP_SAMPLES:
            findings.on_top.append((v.spec.name, world.tick, under))
        if abs(v.vy) < HOVER_SPEED and _nothing_underfoot(world, v):
            findings._air[v.id] = findings._air.get(v.id, 0) + 1
            if findings._air[v.id] >= HOVER_SAMPLES:
                findings.hovering.append((v.spec.name, world.tick, v.y))
        else:
            findings._air[v.id] = 0


@pytest.fixture
def village() -> Iterator[Callable[..., Session]]:
    """Build villages the way the game does, on the scripted model; close them after."""
    built: list[Session] = []

    def build(*overrides: str) -> Session:
        session = build_village(load_settings(overrides=SCRIPTED + overrides))
        built.append(session)
        assert session.ai.wait_ready(5.0) == "ready"
        return session

    yield build
    for session in built:
        session.close()


def _play(session: Session, route: str, seed: int, minutes: float) -> Findings:
    world = session.world
    bot = Bot(route, seed=seed, level=world.level_view(), talk_radius=world.talk_radius)
    findings = Findings()
    for _ in range(round(minutes * 60 * HZ)):
        session.step(bot.intent(world.snapshot()))
        if world.tick % SAMPLE_STRIDE == 0:
            _sample(world, findings)
    return findings


def _check(findings: Findings) -> None:
    assert findings.samples > 0
    worst = sorted(findings.tilted, key=lambda f: -f[3])[:5]
    assert len(findings.tilted) == 0, (
        f"{len(findings.tilted)} of {findings.samples} samples tilted past 10 degrees, "
        f"max {math.degrees(findings.max_tilt):.1f}: {worst}"
    )
    assert not findings.on_top, findings.on_top[:10]
    assert not findings.hovering, findings.hovering[:10]


def test_villagers_stay_upright_under_the_errand_bot(village: Callable[..., Session]) -> None:
    session = village("game.world.seed=3")
    _check(_play(session, "errands", seed=3, minutes=5.0))


def test_villagers_stay_upright_in_the_crowd(village: Callable[..., Session]) -> None:
    session = village("game.world.seed=7", "game.world.extra_npcs=24")
    _check(_play(session, "crowd", seed=7, minutes=4.0))
