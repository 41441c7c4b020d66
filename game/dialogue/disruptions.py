"""When something last upset each villager: a hit, a fall, a stack toppling nearby.

A greeting prepared before such a moment no longer fits the villager's mood. The
dialogue records disruptions in its one pass over each tick's events, and the
validator reads them back when it checks a prepared line.
"""

from __future__ import annotations

from game.sim.events import GameEvent, NpcKnockedDown, PropHitNpc, StackToppled
from game.sim.world import World

# A topple further away than this goes unnoticed: beyond any villager's notice radius.
ONLOOKER_REACH = 500.0


class Disruptions:
    """The tick of each villager's latest disruption."""

    def __init__(self, world: World) -> None:
        self._world = world
        self._last: dict[int, int] = {}

    def handle_event(self, tick: int, event: GameEvent) -> None:
        """Record the villagers ``event`` disrupts, if it disrupts anyone."""
        if isinstance(event, PropHitNpc | NpcKnockedDown):
            self._last[event.npc_id] = tick
        elif isinstance(event, StackToppled):
            for npc_id in self._onlookers(event.prop_ids):
                self._last[npc_id] = tick

    def last(self, npc_id: int) -> int:
        """The tick of the villager's latest disruption, or -1 if there was none."""
        return self._last.get(npc_id, -1)

    def _onlookers(self, prop_ids: tuple[int, ...]) -> list[int]:
        """Villagers close enough to a toppled stack for it to change their mood."""
        where = self._world.entity_position(prop_ids[0]) if prop_ids else None
        if where is None:
            return []
        out = []
        for npc_id in self._world.npc_ids():
            npc = self._world.npc(npc_id)
            if npc is not None and abs(npc.x - where[0]) <= ONLOOKER_REACH:
                out.append(npc_id)
        return out
