"""Predict encounters from physics: who will reach whom, and when.

At each update, for every villager, the time until the player enters the villager's
talk radius is solved from positions and velocities. A prediction counts only once it
has held for a few updates in a row, so a player who is jittering or jumping about does
not trigger requests; it is withdrawn once it has failed for a few updates in a row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from game.sim.status import Motion


def time_to_contact(
    rel_x: float, rel_y: float, rel_vx: float, rel_vy: float, radius: float
) -> float | None:
    """Seconds until a point at ``rel`` moving at ``rel_v`` comes within ``radius`` of 0.

    Returns 0 when already inside, and None when the paths never meet. Solves
    ``|rel + rel_v t| = radius`` for the earliest ``t >= 0``.
    """
    c = rel_x * rel_x + rel_y * rel_y - radius * radius
    if c <= 0.0:
        return 0.0
    a = rel_vx * rel_vx + rel_vy * rel_vy
    b = 2.0 * (rel_x * rel_vx + rel_y * rel_vy)
    if a < 1e-9 or b >= 0.0:
        return None  # not moving, or moving apart
    disc = b * b - 4.0 * a * c
    if disc < 0.0:
        return None  # passes by outside the radius
    return (-b - math.sqrt(disc)) / (2.0 * a)


@dataclass(frozen=True, slots=True)
class PredictionChange:
    """A prediction for a villager started (``started``) or was withdrawn (not started)."""

    npc_id: int
    started: bool
    eta_s: float


class EncounterPredictor:
    """Keeps a confident set of villagers the player is about to meet.

    Only horizontal motion counts: everyone stands on the ground in a side view, and a
    jump would otherwise look like veering away and back.
    """

    def __init__(
        self,
        talk_radius: float,
        horizon_s: float = 1.5,
        min_speed: float = 40.0,
        confirm_updates: int = 4,
        withdraw_updates: int = 8,
    ) -> None:
        self.talk_radius = talk_radius
        self.horizon_s = horizon_s
        self.min_speed = min_speed
        self.confirm_updates = confirm_updates
        self.withdraw_updates = withdraw_updates
        self._hits: dict[int, int] = {}
        self._misses: dict[int, int] = {}
        self.active: dict[int, float] = {}

    def eta(self, player: Motion, npc: Motion) -> float | None:
        """Seconds until the player reaches the villager's talk radius, if heading there."""
        rel_vx = player.vx - npc.vx
        if abs(rel_vx) < self.min_speed:
            return 0.0 if abs(player.x - npc.x) <= self.talk_radius else None
        return time_to_contact(player.x - npc.x, 0.0, rel_vx, 0.0, self.talk_radius)

    def _lingering(self, player: Motion, npc: Motion) -> bool:
        # Stopping just short of a villager is not veering away: keep the prediction.
        slow = abs(player.vx - npc.vx) < self.min_speed
        return slow and abs(player.x - npc.x) <= 2.0 * self.talk_radius

    def update(self, player: Motion, npcs: Sequence[Motion]) -> list[PredictionChange]:
        """Feed one tick of motion; return the predictions that started or ended."""
        changes: list[PredictionChange] = []
        for npc in npcs:
            eta = self.eta(player, npc)
            coming = eta is not None and 0.0 < eta <= self.horizon_s
            if coming:
                assert eta is not None
                self._misses[npc.id] = 0
                hits = self._hits.get(npc.id, 0) + 1
                self._hits[npc.id] = hits
                if npc.id in self.active:
                    self.active[npc.id] = eta
                elif hits >= self.confirm_updates:
                    self.active[npc.id] = eta
                    changes.append(PredictionChange(npc.id, True, eta))
            else:
                self._hits[npc.id] = 0
                if npc.id in self.active and eta != 0.0 and not self._lingering(player, npc):
                    misses = self._misses.get(npc.id, 0) + 1
                    self._misses[npc.id] = misses
                    if misses >= self.withdraw_updates:
                        del self.active[npc.id]
                        changes.append(PredictionChange(npc.id, False, -1.0))
        return changes

    def forget(self, npc_id: int) -> None:
        """Drop a villager's prediction once the encounter happened."""
        self.active.pop(npc_id, None)
        self._hits.pop(npc_id, None)
        self._misses.pop(npc_id, None)
