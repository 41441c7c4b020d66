"""What the errand bot knows about the village, and how it reads the village off a snapshot.

The map is what a player who has looked around knows: where the basket is, that the
forge hood is a step up to the market hall roof, that the crate stack stands past the
town wall. The readers answer the bot's questions about one snapshot: where the player
is, which prop is nearest, where the crate column stands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from game.sim.player import PLAYER_W
from game.sim.snapshot import ActorView, LevelView, PropView, WorldSnapshot

COLUMN_SLACK = 10.0
SIDE_CLEARANCE = PLAYER_W / 2 + 20.0 + 6.0
"""A crate closer than this to where the player would stand puts that side out of use."""


@dataclass(frozen=True, slots=True)
class Step:
    """One climb: stand at ``stand_x``, jump, and once the feet clear ``clear_y`` walk to
    ``land_x``, to stand there on ground at ``land_y``."""

    stand_x: float
    clear_y: float
    land_x: float
    land_y: float


@dataclass(frozen=True, slots=True)
class VillageMap:
    """What the bot knows about the village."""

    basket_x: float
    stack_x: float
    stack_half_w: float
    stack_ground: float
    roof_climb: tuple[Step, ...]
    roof_y: float
    wall: Step

    @staticmethod
    def of(level: LevelView) -> VillageMap | None:
        """The map for a level with a basket and a stack zone, or None."""
        zones = {z.id: z for z in level.zones}
        basket, stack = zones.get("basket"), zones.get("stack_zone")
        if basket is None or stack is None:
            return None
        return VillageMap(
            basket_x=basket.x + basket.w / 2,
            stack_x=stack.x + stack.w / 2,
            stack_half_w=stack.w / 2,
            stack_ground=stack.y,
            # Up onto the forge hood from its right, then onto the market hall roof.
            roof_climb=(
                Step(2485.0, 104.0, 2418.0, 97.0),
                Step(2410.0, 172.0, 2330.0, 164.0),
            ),
            roof_y=164.0,
            wall=Step(3828.0, 140.0, 3900.0, stack.y),
        )

    def in_basket(self, prop: PropView) -> bool:
        """Whether ``prop`` lies in the basket."""
        return abs(prop.x - self.basket_x) < 32.0 and prop.y < 0.0

    def column(self, snap: WorldSnapshot) -> tuple[float, set[int]]:
        """Where the column stands (or will) and the ids of its crates, from the ground up.

        A crate already sitting square on the ground in the stack's spot is the base;
        of several, the one with the most stacked on it.
        """
        crates = sorted((p for p in snap.props if p.kind == "crate" and not p.held), key=_height)
        ground, centre, half = self.stack_ground, self.stack_x, self.stack_half_w
        best: tuple[int, float, float, set[int]] = (0, 0.0, centre, set())
        for base in crates:
            on_ground = abs(base.y - (ground + base.h / 2)) < 6.0
            if not on_ground or abs(base.x - centre) > half - base.w / 2 + 6.0:
                continue
            built, x, top = {base.id}, base.x, base.y
            for prop in crates:
                if abs(prop.x - x) < COLUMN_SLACK and abs(prop.y - (top + prop.h)) < 6.0:
                    built.add(prop.id)
                    x, top = prop.x, prop.y
            rank = (len(built), -abs(base.x - centre), base.x, built)
            if rank[:2] > best[:2]:
                best = rank
        return best[2], best[3]

    def free_side(self, snap: WorldSnapshot, column: float, reach: float, built: set[int]) -> int:
        """The side of the column to work from: the player's own, unless a crate is there."""
        mine = -1 if player_of(snap).x < column else 1

        def free(side: int) -> bool:
            spot = column + side * reach
            return not any(
                p.id not in built and not p.held and abs(p.x - spot) < SIDE_CLEARANCE and p.y < 90.0
                for p in snap.props
            )

        return mine if free(mine) or not free(-mine) else -mine


def player_of(snap: WorldSnapshot) -> ActorView:
    """The player's actor in ``snap``."""
    return next(a for a in snap.actors if a.is_player)


def nearest_reachable(snap: WorldSnapshot, wanted: Callable[[PropView], bool]) -> PropView | None:
    """The nearest wanted prop the player can reach from the ground (ties by id)."""
    me = player_of(snap)
    best: tuple[float, int, PropView] | None = None
    for prop in snap.props:
        if prop.held or not wanted(prop) or prop.y - me.y > 72.0 or me.y - prop.y > 60.0:
            continue
        d = abs(prop.x - me.x)
        if best is None or (d, prop.id) < best[:2]:
            best = (d, prop.id, prop)
    return None if best is None else best[2]


def roof_ball(snap: WorldSnapshot) -> int | None:
    """The highest ball (the one on the roof), or None when there is no ball."""
    balls = [p for p in snap.props if p.kind == "ball"]
    if not balls:
        return None
    return max(balls, key=lambda p: (p.y, -p.id)).id


def loose_crate(built: set[int]) -> Callable[[PropView], bool]:
    """Accepts a crate that is not part of the column."""
    return lambda p: p.kind == "crate" and p.id not in built


def _height(prop: PropView) -> float:
    return prop.y
