"""No stuck spots: the player, walking and jumping across the whole village, always gets on."""

from __future__ import annotations

import json
from pathlib import Path

from game.sim.cast import load_cast
from game.sim.level import load_level, parse_level
from game.sim.world import World
from tools.eval.stuck_sweep import sweep, traverse


def test_walking_and_jumping_across_the_village_never_gets_stuck() -> None:
    spots = sweep(load_level(), load_cast(), seed=1)
    assert spots == []


def test_the_sweep_finds_a_player_wedged_between_two_roofs() -> None:
    # Take the gutter out from between the merchant's and the guardhouse roofs: a player
    # who slides down into the gap rests on both corners and can neither walk nor jump.
    path = Path(__file__).resolve().parents[2] / "assets" / "levels" / "village.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["statics"] = [
        s for s in raw["statics"] if not (s["label"] == "roof gutter" and s["points"][0][0] > 3500)
    ]
    level = parse_level(raw, path)
    spots = traverse(World(level, load_cast(), 1), -1)
    assert [s for s in spots if 3600 < s.x < 3650]
