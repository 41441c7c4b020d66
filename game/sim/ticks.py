"""The simulation's one rate. The world always steps 60 times a second.

pymunk's solver, the villagers' timers and the level's jumps are tuned for this step, so
it is a constant rather than a setting. Everything that counts ticks converts seconds
through :func:`ticks`, so durations in config stay in seconds.
"""

from __future__ import annotations

HZ = 60
DT = 1.0 / HZ


def ticks(seconds: float) -> int:
    """How many ticks last ``seconds``."""
    return round(seconds * HZ)
