"""Hints: a villager tells a traveller stuck under a fetch errand's prop how to get it.

The roof ball is easy to find and hard to reach: players threw things at it and jumped
about below it for a long time. Once the traveller has spent ``HINT_AFTER_TICKS`` near
the prop, below it, while it is still up out of reach and the errand is open, a villager
calls out the way up (their ``errand_hint`` lines). The errand's giver says it if they can
(they know where their ball is); otherwise the nearest villager who can see the
traveller. It is said once per stuck spell: the spell ends when the traveller has been
away from the prop for ``SPELL_ENDS_TICKS``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from game.sim.errands import ErrandBoard
from game.sim.events import GameEvent
from game.sim.player import PLAYER_H, Player
from game.sim.props import Prop
from game.sim.ticks import ticks
from game.sim.villager import Villager

HINT_AFTER_TICKS = ticks(18.0)
"""How long the traveller has been stuck near the prop before someone tells them how."""
SPELL_ENDS_TICKS = ticks(4.0)
"""How long away from the prop ends a stuck spell (a jump or a step back does not)."""
NEAR_X = 260.0
"""How far to either side of the prop (world units) counts as near it."""
BELOW = 40.0
"""Feet this far under the prop's middle: not up there with it."""
UP_HIGH = 100.0
"""The prop's middle this far over the street: still up out of reach."""
CALL_RANGE = 480.0
"""How far (in x) a villager calls the hint across to the traveller."""


@dataclass(slots=True)
class _Spell:
    """One errand's stuck spell: ticks near the prop, ticks since, and whether hinted."""

    near: int = 0
    away: int = 0
    hinted: bool = False


class ErrandHints:
    """Watches for a traveller stuck under a fetch errand's prop and has a villager hint."""

    def __init__(
        self,
        errands: ErrandBoard,
        tagged: Mapping[str, Prop],
        villagers: Sequence[Villager],
        ground_y: Callable[[float], float],
    ) -> None:
        self._errands = errands
        self._tagged = tagged
        self._villagers = villagers
        self._by_id = {v.id: v for v in villagers}
        self._ground_y = ground_y
        self._spells: dict[str, _Spell] = {}

    def check(self, tick: int, player: Player) -> list[GameEvent]:
        """Count this tick towards each open fetch errand's spell; the hint's events, if due."""
        events: list[GameEvent] = []
        for errand in self._errands.errands:
            prop = self._tagged.get(errand.spec.prop_tag)
            if errand.spec.kind != "fetch" or errand.done or not errand.open or prop is None:
                continue
            spell = self._spells.setdefault(errand.spec.id, _Spell())
            if self._stuck_under(prop, player):
                spell.near, spell.away = spell.near + 1, 0
            else:
                spell.away += 1
                if spell.away >= SPELL_ENDS_TICKS:
                    spell.near, spell.hinted = 0, False
            if spell.hinted or spell.near < HINT_AFTER_TICKS:
                continue
            speaker = self._speaker(errand.giver_id, player.body.position.x)
            if speaker is not None:
                said = speaker.brain.give_hint(tick, (prop.id,))
                spell.hinted = bool(said)
                events.extend(said)
        return events

    def _stuck_under(self, prop: Prop, player: Player) -> bool:
        x, y = prop.body.position
        px, py = player.body.position
        return (
            not prop.held
            and y - self._ground_y(x) > UP_HIGH
            and abs(px - x) <= NEAR_X
            and py - PLAYER_H / 2 < y - BELOW
        )

    def _speaker(self, giver_id: int, px: float) -> Villager | None:
        """The giver, if in call range and able to talk; else the nearest who sees the
        traveller (ties by id)."""
        giver = self._by_id.get(giver_id)
        if giver is not None and giver.brain.can_hint and abs(giver.x - px) <= CALL_RANGE:
            return giver
        seeing = [
            (abs(v.x - px), v.id, v)
            for v in self._villagers
            if v.sees_player and v.brain.can_hint and abs(v.x - px) <= CALL_RANGE
        ]
        return min(seeing, key=lambda s: s[:2])[2] if seeing else None
