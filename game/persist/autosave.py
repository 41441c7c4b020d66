"""Saving the running game: build a small snapshot in the tick, write it off the tick.

Every ``interval_s`` of play (and once more on quit) the tick copies what villagers
remember and the world's lasting state (:func:`~game.sim.continuity.capture_world`:
errands, props, villagers, stacks, the player) into a :class:`SaveState` of plain data,
which the :class:`~game.persist.saver.Saver` thread writes in one SQLite transaction.
"""

from __future__ import annotations

import logging
import time

from game.core.stats import ms_quantiles
from game.dialogue.memory import Memories
from game.headless.report import SaveReport
from game.persist.saver import Saver
from game.persist.store import SaveState
from game.sim import continuity
from game.sim.world import World

logger = logging.getLogger(__name__)


def villager_keys(world: World) -> dict[int, str]:
    """A stable key per villager: its cast id, numbered when generated ones repeat it."""
    return continuity.villager_keys(world.villagers)


def capture(
    world: World,
    memories: Memories,
    keys: dict[int, str],
    recorder: continuity.WorldRecorder | None = None,
) -> SaveState:
    """The state to save now (on the main thread: it reads pymunk bodies).

    ``recorder`` is the world's, kept between saves so they cost less; without one the
    world is read afresh.
    """
    records = memories.records()
    recorder = recorder or continuity.WorldRecorder(world)
    return SaveState(
        memories={keys[npc_id]: record for npc_id, record in records.items() if npc_id in keys},
        world=recorder.capture(),
        tick=world.tick,
    )


def restore(world: World, memories: Memories, state: SaveState) -> int:
    """Put a saved state back into a freshly built world; return the lines remembered."""
    by_key = {key: npc_id for npc_id, key in villager_keys(world).items()}
    for key, record in state.memories.items():
        npc_id = by_key.get(key)
        if npc_id is not None:
            memory = memories.of(npc_id)
            memory.restore_record(record)
            world.set_attitude(npc_id, memory.attitude)
    continuity.restore_world(world, state.world)
    return memories.lines_remembered()


class Autosave:
    """Hands a snapshot to the saver every ``interval_ticks`` ticks; times the hand-over."""

    def __init__(self, world: World, memories: Memories, saver: Saver, interval_ticks: int) -> None:
        self._world = world
        self._memories = memories
        self._saver = saver
        self._keys = villager_keys(world)
        self._recorder = continuity.WorldRecorder(world)
        self._interval = max(1, interval_ticks)
        self._last = world.tick
        self.capture_ms: list[float] = []

    def after_tick(self, tick: int) -> None:
        """Called at the end of every tick; saves when the interval has passed."""
        if tick - self._last >= self._interval:
            self.save()

    def save(self) -> None:
        """Capture now and queue the write."""
        begin = time.perf_counter()
        self._saver.submit(capture(self._world, self._memories, self._keys, self._recorder))
        self._last = self._world.tick
        self.capture_ms.append((time.perf_counter() - begin) * 1000.0)

    def close(self) -> None:
        """Save once more and wait for the writer to finish."""
        self.save()
        self._saver.close()

    def report(self) -> SaveReport:
        """Save figures for the headless report."""
        return SaveReport(
            saves=self._saver.saves,
            capture_ms=ms_quantiles(self.capture_ms),
            write_ms=ms_quantiles(self._saver.write_ms),
            error=self._saver.error,
        )
