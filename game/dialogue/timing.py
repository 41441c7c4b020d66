"""How old each kind of line may be when it appears, by trigger."""

from __future__ import annotations

from dataclasses import dataclass

from game.sim.events import Trigger
from game.sim.ticks import ticks


@dataclass(frozen=True, slots=True)
class Timing:
    """How old each kind of line may be when it appears."""

    chat_ttl_s: float = 10.0
    reactive_ttl_s: float = 3.0
    ambient_ttl_s: float = 4.0
    prepared_ttl_s: float = 40.0
    """A prepared greeting waits this long for its villager to be met; it is dropped
    sooner if the villager is disrupted or what it was written from changes."""

    def ttl_ticks(self, trigger: Trigger, predictive: bool) -> int:
        """How old a line may be, in ticks, when it appears."""
        if predictive:
            seconds = self.prepared_ttl_s
        elif trigger is Trigger.CHAT:
            seconds = self.chat_ttl_s
        elif trigger is Trigger.AMBIENT:
            seconds = self.ambient_ttl_s
        else:
            seconds = self.reactive_ttl_s
        return ticks(seconds)
