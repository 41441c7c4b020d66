"""Extra villagers and props made from the seed, for crowd and scale runs."""

from __future__ import annotations

import dataclasses
import logging
import random

from game.sim.cast import Cast, NpcSpec
from game.sim.level import Level, PropSpec

logger = logging.getLogger(__name__)

EXTRA_KINDS = ("apple", "apple", "crate", "barrel", "ball")
MARGIN = 60.0


def extra_villagers(
    cast: Cast, count: int, rng: random.Random, level: Level
) -> list[tuple[str, NpcSpec]]:
    """``count`` villagers as (persona id, spec): cast personas under numbered names."""
    out: list[tuple[str, NpcSpec]] = []
    base = cast.npcs
    lo, hi = MARGIN, street_end(level)
    for i in range(count):
        spec = base[i % len(base)]
        number = i // len(base) + 2
        home = rng.uniform(lo, hi)
        work = min(max(home + rng.uniform(-500.0, 500.0), lo), hi)
        extra = dataclasses.replace(
            spec, id=f"{spec.id}#{number}", name=f"{spec.name} {number}", home_x=home, work_x=work
        )
        out.append((spec.id, extra))
    return out


def extra_props(count: int, rng: random.Random, level: Level) -> list[PropSpec]:
    """``count`` props at random spots along the street; the world finds each a free height."""
    lo, hi = MARGIN, street_end(level)
    return [PropSpec(rng.choice(EXTRA_KINDS), rng.uniform(lo, hi), 0.0) for _ in range(count)]


def street_end(level: Level) -> float:
    """Rightmost x a generated villager or prop may use (short of any town wall)."""
    walls = [
        min(p[0] for p in s.points) for s in level.statics if "wall" in s.label and s.kind == "poly"
    ]
    return min([level.width - MARGIN, *[w - MARGIN for w in walls]])
