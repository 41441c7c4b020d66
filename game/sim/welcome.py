"""The welcome: at the start of a new game the villager nearest the traveller comes over.

Left alone, the traveller's first greeting waited for a villager's round to pass by (50 to
61 s standing at the spawn). So on a new game's first tick the nearest villager within
``WELCOME_RADIUS`` leaves their round to walk up and greet (``NpcBrain.welcome``); they go
back to it once they have greeted, once the traveller has walked off, or after
``WELCOME_TICKS``. A continued game has no welcome: everyone is where the save left them.

The welcome is the first line the player hears, so the host may hold it (``World.welcome_held``)
while the villagers' voices load, for at most ``WELCOME_HOLD_TICKS``: the villager sets off
once they can greet in their own words, not in a template line a moment before.
"""

from __future__ import annotations

from collections.abc import Sequence

from game.sim.ticks import ticks
from game.sim.villager import Villager

WELCOME_RADIUS = 400.0
"""How far from the traveller's spawn a villager may be and still come over to greet."""
WELCOME_HOLD_TICKS = ticks(4.0)
"""The longest the welcome waits for the host: a slow machine still gets one."""
WELCOME_TICKS = ticks(20.0)
"""How long the villager keeps trying to reach a traveller who stays about but out of reach
(up on a roof, say)."""


def welcomer(villagers: Sequence[Villager], player_x: float, talk_radius: float) -> Villager | None:
    """The villager who comes over: the nearest one within ``WELCOME_RADIUS`` (ties by id).

    None when nobody is near, or when the nearest is already in talking range (they greet
    on their own).
    """
    near = [
        (abs(v.x - player_x), v.id, v)
        for v in villagers
        if v.brain.can_talk and abs(v.x - player_x) <= WELCOME_RADIUS
    ]
    if not near:
        return None
    distance, _, nearest = min(near, key=lambda n: n[:2])
    return None if distance <= talk_radius else nearest
