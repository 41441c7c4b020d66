"""What a model line is worth to the player, set against the worker's time it costs.

The one worker can write a few lines a second, and a village asks for more. So every
request gets a value before it is submitted::

    value = weight(trigger) * chance_shown / expected_cost_s

- ``weight``: how much the line matters. A chat reply most, then a reaction to
  something the player did, then greetings and errands, then the rest; ambient chatter
  least.
- ``chance_shown``: how likely the line is to be on screen in its moment. A villager
  off screen is seen by nobody. A prediction is as good as the player's heading, and
  worth less when the player would arrive after the line has expired. A line that
  cannot start before its moment has passed (the queue ahead of it is too long) has no
  chance at all.
- ``expected_cost_s``: the worker seconds it takes, as lines have been measured to take
  on this machine.

A request whose chance is below :data:`SHED_BELOW` is never submitted: the villager
says a template line at once (or nothing, for ambient chatter). The queue runs the
most valuable request first.
"""

from __future__ import annotations

from dataclasses import dataclass

from game.sim.events import Trigger

WEIGHTS: dict[Trigger, float] = {
    Trigger.CHAT: 8.0,
    Trigger.HIT: 4.0,
    Trigger.NEAR_MISS: 4.0,
    Trigger.BUMPED: 4.0,
    Trigger.GREET: 3.0,
    Trigger.ERRAND_OFFER: 3.0,
    Trigger.ERRAND_DONE: 3.0,
    Trigger.ERRAND_HINT: 3.0,
    Trigger.FAREWELL: 1.5,
    Trigger.TOPPLED: 1.0,
    Trigger.AMBIENT: 0.5,
}
"""How much a line for each trigger matters to the player."""

SHED_BELOW = 0.2
"""A request less likely than this to be shown gets a template (or silence) instead."""

_HEADING = 0.9
"""A prediction's chance when the player is heading for the villager."""
_DRIFTING = 0.35
"""... and when the player has stopped or turned but is still close."""
_REACTION = 0.9
"""A reaction is shown unless something disturbs the villager first."""
_TOO_LATE = 0.5
"""What is left of a prediction's chance when its line may not be ready in time. Shedding
those outright (0.15) left 0 to 11% of greetings to the model in the village, against
5 to 38% when they were tried (tools/bench/worker_time.py, two runs)."""
_FAREWELL = 0.1
"""A goodbye is said as the player walks off: by the time a model line is written (a
second or more) the player is out of range or the villager has turned back to their day,
and the line is dropped (measured: most model farewells were). So it is a template."""


@dataclass(frozen=True, slots=True)
class Sight:
    """Where a villager is, as the player sees it."""

    on_screen: bool
    distance: float
    """Horizontal distance from the player, in world units."""
    view_half_width: float
    """Half the view's width: farther than this is off screen."""


@dataclass(frozen=True, slots=True)
class Moment:
    """When the line is needed, and how long it may wait for the worker."""

    wait_s: float
    """Expected wait behind the queue ahead of it."""
    window_s: float
    """How long after now the line may still start and be shown in its moment."""
    eta_s: float | None = None
    """For a prediction: seconds until the player reaches the villager."""
    ttl_s: float | None = None
    """For a prediction: how long a prepared line stays fit to show."""
    heading: bool = True
    """For a prediction: whether the player is moving towards the villager."""
    cost_s: float = 0.0
    """The worker seconds the line takes: a prediction that cannot be ready by the time
    the player arrives would only be late."""


def chance_shown(trigger: Trigger, sight: Sight, moment: Moment) -> float:
    """How likely a line asked for now is to be on screen in its moment (0..1)."""
    if trigger is Trigger.CHAT:
        return 1.0  # the player is waiting for the answer, whatever the queue
    if not sight.on_screen:
        return 0.0
    if moment.wait_s > moment.window_s:
        return 0.0  # it would start after its moment has passed
    if trigger is Trigger.FAREWELL:
        return _FAREWELL
    if moment.eta_s is not None:
        chance = _HEADING if moment.heading else _DRIFTING
        ttl = moment.ttl_s
        if ttl is not None and moment.eta_s > ttl:
            chance *= ttl / moment.eta_s  # it may expire before the player arrives
        if moment.wait_s + moment.cost_s > moment.eta_s:
            # The player may be there before the line is: still worth a try (a greeting
            # often comes a moment after contact), behind the ones that will be ready.
            chance *= _TOO_LATE
        return chance
    if trigger is Trigger.AMBIENT:
        # Chatter far across the screen is easily missed; close by, it is read.
        nearness = 1.0 - min(1.0, sight.distance / max(1.0, sight.view_half_width))
        return 0.3 + 0.6 * nearness
    return _REACTION


@dataclass(slots=True)
class CostModel:
    """Worker seconds per line, as measured: an exponential average of the seconds each
    finished line took on the worker (its draws and its prompt included), so a slower
    machine or a longer prompt sheds sooner. It starts from a typical line of the packaged
    model on one thread."""

    line_s: float = 1.2
    smoothing: float = 0.2

    def cost_s(self, draws: int = 1) -> float:
        """Expected worker seconds for a line; ``draws`` scales it for a plan of several."""
        return self.line_s * max(1, draws)

    def observe(self, seconds: float) -> None:
        """Follow a finished line's measured worker seconds."""
        if seconds > 0.0:
            a = self.smoothing
            self.line_s = (1.0 - a) * self.line_s + a * seconds


def value(trigger: Trigger, chance: float, cost_s: float, eta_s: float | None = None) -> float:
    """The worth of a line per worker second; for a prediction (``eta_s``), by its
    :func:`urgency` too."""
    worth = WEIGHTS[trigger] * chance / max(0.01, cost_s)
    return worth if eta_s is None else worth * urgency(eta_s)


_SOONEST_S = 0.25
"""Below this, every prediction counts as needed now."""


def urgency(eta_s: float) -> float:
    """How much sooner a predicted line is needed: the value of a prediction is divided
    by the seconds until the player arrives, so the greetings the player will reach
    first are written first (earliest deadline first).

    By value alone, the villager walking up to greet in under a second came after one
    three seconds away: the near one was judged likely late and its chance halved, so
    it was late, while both could have been on time in the other order. Writing the
    nearest first risks little: a greeting still being written when its villager
    greets is stopped at that moment, so the worker loses at most the time until then.
    """
    return 1.0 / max(_SOONEST_S, eta_s)
