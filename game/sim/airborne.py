"""Props in flight: noticing when something thrown or knocked flying comes to rest.

Only props known to be moving are watched every tick; the rest are sampled a slice at a
time, so hundreds of resting props cost almost nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from game.sim.props import Prop

logger = logging.getLogger(__name__)

LAUNCH_SPEED = 350.0
"""A resting prop found moving faster than this is treated as knocked flying."""
NEAR_MISS_SPEED = 600.0
"""Only a flight that reached this speed can be a near miss (a gentle drop is not)."""
REST_SPEED = 25.0
REST_TICKS = 6
MAX_FLIGHT_TICKS = 900
SAMPLE_STRIDE = 8


class FlightTracker:
    """Which props are airborne, and which of them just landed."""

    def __init__(self) -> None:
        self._flying: dict[int, Prop] = {}

    def __len__(self) -> int:
        return len(self._flying)

    def launch(self, prop: Prop, tick: int) -> None:
        """Start watching ``prop`` (just released by the player)."""
        prop.airborne_since = tick
        prop.rest_ticks = 0
        self._flying[prop.id] = prop

    def sample(self, props: Sequence[Prop], tick: int) -> None:
        """Check one slice of all props for ones that started flying on their own."""
        for prop in props[tick % SAMPLE_STRIDE :: SAMPLE_STRIDE]:
            if prop.held or prop.id in self._flying:
                continue
            if prop.body.velocity.length > LAUNCH_SPEED:
                prop.thrown_by_player = False
                prop.hit_npc = False
                prop.peak_speed = 0.0
                self.launch(prop, tick)

    def landed(self, tick: int) -> list[Prop]:
        """Props that came to rest this tick (no longer watched afterwards).

        A landed prop keeps ``hit_npc``, ``thrown_by_player`` and ``peak_speed`` until the
        caller has judged it; the next launch resets them.
        """
        out: list[Prop] = []
        for prop_id, prop in list(self._flying.items()):
            if prop.held:
                del self._flying[prop_id]
                continue
            speed = prop.body.velocity.length
            prop.peak_speed = max(prop.peak_speed, speed)
            prop.rest_ticks = prop.rest_ticks + 1 if speed < REST_SPEED else 0
            if prop.rest_ticks >= REST_TICKS or tick - prop.airborne_since > MAX_FLIGHT_TICKS:
                del self._flying[prop_id]
                prop.airborne_since = -1
                out.append(prop)
        return out
