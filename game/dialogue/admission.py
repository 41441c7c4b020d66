"""Which asks get the model's time, and where the worker's time went.

``Admission`` judges each ask before it becomes a request (see :mod:`worth`): a line
nobody will see in its moment is answered at once from the templates (or not at all,
for ambient chatter), and every admitted request carries its value, which orders the
worker's queue. ``WorkerTime`` follows each request from the moment the worker starts
it to how its line ended, so the report can say what share of the worker's seconds
went to lines the player saw.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from ai import LineRequest, LineRuntime
from game.dialogue.worth import SHED_BELOW, CostModel, Moment, Sight, chance_shown, value
from game.headless.report import WorkerReport
from game.sim.events import Trigger
from game.sim.world import World

#: How each request's worker time ended. "shown": its line reached a bubble; "late": it
#: came after its moment; "cancelled": the game withdrew it (the player turned away);
#: "expired": a prepared line nobody needed; "rejected": the world had moved on;
#: "failed": the model gave no usable line (or ran out of time); "preempted": a run that
#: more urgent work stopped, before the request started again from scratch.
OUTCOMES = ("shown", "late", "cancelled", "expired", "rejected", "failed", "preempted")
PLAYER_REACTIONS = frozenset({Trigger.HIT, Trigger.NEAR_MISS, Trigger.BUMPED})
"""What the player did to a villager: its answer is always the model's to write."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an ask is worth: its chance of being shown, and its value per worker second."""

    chance: float
    value: float

    @property
    def admitted(self) -> bool:
        """Whether the ask is worth the model's time."""
        return self.chance >= SHED_BELOW


class Admission:
    """Judges asks against the player's view and the worker's queue."""

    def __init__(
        self,
        world: World,
        view_half_width: float,
        runtime: LineRuntime,
    ) -> None:
        self._world = world
        self._half = view_half_width
        self._runtime = runtime
        self.cost = CostModel()
        self.shed: Counter[str] = Counter()

    def sight(self, npc_id: int) -> Sight:
        """Where the villager is against the view, which follows the player."""
        status = self._world.npc(npc_id)
        player = self._world.player_status()
        distance = abs(status.x - player.x) if status is not None else float("inf")
        return Sight(distance <= self._half, distance, self._half)

    def in_view(self, dx: float) -> bool:
        """Whether a villager ``dx`` from the player along x is in the view."""
        return abs(dx) <= self._half

    def wait_s(self) -> float:
        """The expected wait behind what is queued and running now."""
        runtime = self._runtime  # not metrics(): that computes percentiles
        return (runtime.queue_depth + 0.5 * runtime.in_flight) * self.cost.cost_s()

    def judge(
        self,
        npc_id: int,
        trigger: Trigger,
        window_s: float,
        eta_s: float | None = None,
        ttl_s: float | None = None,
        heading: bool = True,
    ) -> Verdict:
        """The verdict on a line for ``npc_id`` about to be asked for (cheap: no prompt
        need be built first)."""
        cost = self.cost.cost_s()
        moment = Moment(self.wait_s(), window_s, eta_s, ttl_s, heading, cost)
        chance = chance_shown(trigger, self.sight(npc_id), moment)
        return Verdict(chance, value(trigger, chance, cost, eta_s))

    def admit(self, request: LineRequest, trigger: Trigger, to_player: bool) -> LineRequest | None:
        """``request`` with its value, or None when its line is unlikely to be seen in its
        moment (counted as shed). A chat reply and a reaction to the player (``to_player``)
        are always admitted."""
        verdict = self.judge(request.npc_id, trigger, window_s=request.deadline_s)
        never_shed = trigger is Trigger.CHAT or (to_player and trigger in PLAYER_REACTIONS)
        if not verdict.admitted and not never_shed:
            self.count_shed(trigger)
            return None
        return replace(request, value=verdict.value)

    def cost_s(self, request: LineRequest) -> float:
        """The worker seconds a request is expected to take: a line, as measured."""
        del request  # every line costs about the same; the measured average says how much
        return self.cost.cost_s()

    def count_shed(self, trigger: Trigger) -> None:
        """An ask answered without the model because its line would not be seen in time."""
        self.shed[trigger.value] += 1


class WorkerTime:
    """The worker's seconds per request, from its start to its end, by how it ended.

    A request is timed by the game's clock from the tick its start is seen to the tick
    its end is seen: a tick's error against lines of a second or so.
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._started: dict[int, float] = {}
        self._ran: dict[int, float] = {}
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.decisions_s = 0.0

    def started(self, handle_id: int, preempted_s: float = 0.0) -> None:
        """The worker began this request, or began it again after ``preempted_s`` seconds of
        a run that a preemption stopped: those are booked as "preempted", and the request
        is timed afresh, so the work that ran in between is not counted twice."""
        if preempted_s > 0.0 and handle_id in self._started:
            self.seconds["preempted"] += preempted_s
            self._started[handle_id] = self._clock()
            return
        self._started.setdefault(handle_id, self._clock())

    def running(self, handle_id: int) -> bool:
        """Whether the worker has begun this request and it has not ended."""
        return handle_id in self._started

    def ended(self, handle_id: int) -> float:
        """The request's work is over (its line may not be settled yet): its seconds."""
        start = self._started.pop(handle_id, None)
        seconds = 0.0 if start is None else self._clock() - start
        if seconds:
            self._ran[handle_id] = seconds
        return seconds

    def settle(self, handle_id: int, outcome: str) -> None:
        """Book a request's seconds under how its line ended (once; later calls do nothing)."""
        seconds = self._ran.pop(handle_id, None)
        if seconds is None and handle_id in self._started:
            seconds = self.ended(handle_id)
            self._ran.pop(handle_id, None)
        if seconds:
            self.seconds[outcome] += seconds

    def settle_decision(self, handle_id: int) -> None:
        """A closed choice's seconds: a villager's decision, not a line."""
        self.ended(handle_id)
        self.decisions_s += self._ran.pop(handle_id, 0.0)

    def shown_share(self) -> float:
        """The share of the worker's line seconds that went to lines the player saw."""
        total = sum(self.seconds.values())
        return self.seconds["shown"] / total if total else 0.0


def worker_report(
    admission: Admission | None, worker_time: WorkerTime, late: Mapping[str, int]
) -> WorkerReport:
    """The report's ``ai.worker``: where the worker's time went, what was shed or late."""
    return WorkerReport(
        admission="value" if admission is not None else "queue",
        seconds={k: round(worker_time.seconds[k], 3) for k in OUTCOMES},
        shown_share=round(worker_time.shown_share(), 4),
        decisions_s=round(worker_time.decisions_s, 3),
        shed=dict(admission.shed) if admission is not None else {},
        late={k: v for k, v in late.items() if v},
    )
