"""Immutable views of the world.

The world writes a ``WorldSnapshot`` once per tick; the renderer reads two of them and
blends by alpha. Static level geometry is sent once, as a ``LevelView``. Coordinates are
world units with y pointing up; the renderer flips them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Vec = tuple[float, float]
Color = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class StaticShapeView:
    """A piece of static collision geometry: a thick segment or a convex polygon."""

    kind: Literal["segment", "poly"]
    points: tuple[Vec, ...]
    radius: float
    material: str


@dataclass(frozen=True, slots=True)
class DecorView:
    """Scenery without collision (house walls, windows, the well's roof, signs)."""

    kind: str
    x: float
    y: float
    w: float
    h: float
    material: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class ZoneView:
    """A sensor zone an errand watches, such as the baker's basket."""

    id: str
    x: float
    y: float
    w: float
    h: float
    label: str
    #: A stack is built in it: the player stands on what fills it, up to its top.
    stacked: bool = False


@dataclass(frozen=True, slots=True)
class LevelView:
    """Everything about the level that never moves."""

    width: float
    height: float
    statics: tuple[StaticShapeView, ...]
    decor: tuple[DecorView, ...]
    zones: tuple[ZoneView, ...]


@dataclass(frozen=True, slots=True)
class PropView:
    """A dynamic prop: crate, barrel, ball or apple."""

    id: int
    kind: str
    x: float
    y: float
    angle: float
    shape: Literal["box", "circle"]
    w: float
    h: float
    material: str
    held: bool = False


@dataclass(frozen=True, slots=True)
class ActorView:
    """The player or a villager."""

    id: int
    name: str
    role: str
    x: float
    y: float
    angle: float
    w: float
    h: float
    facing: int
    state: str
    conscious: bool
    color: Color
    is_player: bool = False
    aside: bool = False
    """A villager stepping back (in depth) to let the player pass."""
    action: str = ""
    """The action a villager is carrying out (an ``ActionKind`` value), for its emote."""
    attitude: int = 0
    """How a villager feels about the traveller (-2 to +2), shown in the name tag's colour."""


@dataclass(frozen=True, slots=True)
class AimView:
    """The carried prop's predicted path: a charged throw, or a put-down when ``charge`` is 0."""

    points: tuple[Vec, ...]
    charge: float


@dataclass(frozen=True, slots=True)
class ErrandView:
    """An errand and its tally."""

    id: str
    giver_id: int
    title: str
    progress: int
    goal: int
    done: bool
    open: bool = True
    """False while there is nothing to do yet (the crate stack still stands)."""


@dataclass(frozen=True, slots=True)
class WorldSnapshot:
    """The moving part of the world at one tick."""

    tick: int
    player_id: int
    props: tuple[PropView, ...]
    actors: tuple[ActorView, ...]
    errands: tuple[ErrandView, ...]
    grab_target: int | None = None
    """The prop a grab would take now, highlighted on screen."""
    aim: AimView | None = None
