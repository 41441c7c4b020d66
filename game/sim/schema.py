"""Reading typed values out of parsed JSON or TOML data.

Every failure raises ``AssetError`` naming the file and the exact place in it, so a
broken level or cast file tells the player what to fix instead of crashing later.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from game.assets import AssetError

logger = logging.getLogger(__name__)


class Reader:
    """Typed access to one parsed data file, with error messages that say where."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> AssetError:
        """Build the AssetError for ``problem`` at ``where`` in this file."""
        place = f" at {where}" if where else ""
        return AssetError(f"{self.path}{place}: {problem}")

    def table(self, value: object, where: str) -> Mapping[str, Any]:
        """``value`` as a table (dict) or an error."""
        if not isinstance(value, Mapping):
            raise self.fail(where, f"expected a table, got {type(value).__name__}")
        return value

    def items(self, value: object, where: str) -> list[Any]:
        """``value`` as a list or an error."""
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, got {type(value).__name__}")
        return value

    def get(self, data: Mapping[str, Any], key: str, where: str) -> Any:
        """The value under ``key`` or a 'missing key' error."""
        if key not in data:
            raise self.fail(where, f"missing key '{key}'")
        return data[key]

    def number(
        self, data: Mapping[str, Any], key: str, where: str, default: float | None = None
    ) -> float:
        """A finite number under ``key`` (or ``default`` when given and the key is absent)."""
        if key not in data and default is not None:
            return default
        value = self.get(data, key, where)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(f"{where}.{key}", f"expected a number, got {value!r}")
        if not math.isfinite(value):
            raise self.fail(f"{where}.{key}", f"expected a finite number, got {value!r}")
        return float(value)

    def integer(
        self, data: Mapping[str, Any], key: str, where: str, default: int | None = None
    ) -> int:
        """A non-negative integer under ``key``."""
        if key not in data and default is not None:
            return default
        value = self.get(data, key, where)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.fail(f"{where}.{key}", f"expected a non-negative integer, got {value!r}")
        return value

    def text(
        self, data: Mapping[str, Any], key: str, where: str, default: str | None = None
    ) -> str:
        """A non-empty string under ``key``."""
        if key not in data and default is not None:
            return default
        value = self.get(data, key, where)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{where}.{key}", f"expected a non-empty string, got {value!r}")
        return value

    def point(self, value: object, where: str) -> tuple[float, float]:
        """A pair of finite numbers."""
        if (
            not isinstance(value, list | tuple)
            or len(value) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
            or not all(math.isfinite(v) for v in value)
        ):
            raise self.fail(where, f"expected a point [x, y], got {value!r}")
        return (float(value[0]), float(value[1]))

    def points(self, value: object, where: str, minimum: int) -> tuple[tuple[float, float], ...]:
        """A list of at least ``minimum`` points."""
        raw = self.items(value, where)
        if len(raw) < minimum:
            raise self.fail(where, f"expected at least {minimum} points, got {len(raw)}")
        return tuple(self.point(p, f"{where}[{i}]") for i, p in enumerate(raw))

    def color(self, data: Mapping[str, Any], key: str, where: str) -> tuple[int, int, int]:
        """An RGB triple of integers 0..255."""
        value = self.get(data, key, where)
        if (
            not isinstance(value, list)
            or len(value) != 3
            or not all(
                isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in value
            )
        ):
            raise self.fail(f"{where}.{key}", f"expected [r, g, b] with 0..255, got {value!r}")
        return (value[0], value[1], value[2])
