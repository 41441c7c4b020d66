"""Names shared by the renderer tests and their fixtures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from game.sim.snapshot import WorldSnapshot

SCREEN = (1280, 720)
PLAYER_ID = 1
BESS_ID = 10

ShapeKind = Literal["box", "circle"]
WorldFactory = Callable[..., WorldSnapshot]
