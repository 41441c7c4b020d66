"""The cast: villagers' personas, spots in the village and template lines.

Loaded from TOML under ``assets/npcs/``. Template lines are the fallback when no model
line is ready; each trigger has several so the same words do not repeat.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from game.assets import AssetError, asset_path
from game.sim.events import Trigger
from game.sim.schema import Reader
from game.sim.snapshot import Color

logger = logging.getLogger(__name__)

DEFAULT_CAST = "npcs/villagers.toml"
MIN_LINES_PER_TRIGGER = 2


@dataclass(frozen=True, slots=True)
class NpcSpec:
    """One villager as written in the cast file.

    ``id`` is the cast key (``"baker"``), not the world's integer entity id. Lines may
    contain ``{player}`` and ``{name}`` placeholders.
    """

    id: str
    name: str
    role: str
    persona: str
    color: Color
    home_x: float
    work_x: float
    lines: Mapping[Trigger, tuple[str, ...]] = field(hash=False, compare=False)

    @property
    def templates(self) -> Mapping[Trigger, tuple[str, ...]]:
        """The template lines by trigger (the same mapping as ``lines``)."""
        return self.lines

    def lines_for(self, trigger: Trigger) -> tuple[str, ...]:
        """The template lines for ``trigger`` (never empty for a loaded cast)."""
        return self.lines.get(trigger, ())


@dataclass(frozen=True, slots=True)
class Cast:
    """All villagers, in file order."""

    npcs: tuple[NpcSpec, ...]


def load_cast(name: str | Path = DEFAULT_CAST) -> Cast:
    """Load and validate the cast file; raise AssetError naming the file, villager and key."""
    path = asset_path(name)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise AssetError(f"{path}: cannot read cast file: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise AssetError(f"{path}: not valid TOML: {exc}") from exc
    cast = parse_cast(raw, path)
    logger.info("loaded cast: %d villagers", len(cast.npcs))
    return cast


def parse_cast(raw: Mapping[str, object], path: Path) -> Cast:
    """Validate parsed cast data; ``path`` is only used in error messages."""
    r = Reader(path)
    entries = r.items(r.get(raw, "villager", ""), "villager")
    if not entries:
        raise r.fail("villager", "the cast has no villagers")
    specs: list[NpcSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        table = r.table(entry, f"villager[{i}]")
        spec_id = r.text(table, "id", f"villager[{i}]")
        where = f"villager '{spec_id}'"
        if spec_id in seen:
            raise r.fail(where, "duplicate villager id")
        seen.add(spec_id)
        specs.append(
            NpcSpec(
                id=spec_id,
                name=r.text(table, "name", where),
                role=r.text(table, "role", where),
                persona=r.text(table, "persona", where),
                color=r.color(table, "color", where),
                home_x=r.number(table, "home_x", where),
                work_x=r.number(table, "work_x", where),
                lines=_lines(r, table, where),
            )
        )
    return Cast(tuple(specs))


def _lines(r: Reader, table: Mapping[str, object], where: str) -> Mapping[Trigger, tuple[str, ...]]:
    lines_table = r.table(r.get(table, "lines", where), f"{where}.lines")
    known = {t.value for t in Trigger}
    for key in lines_table:
        if key not in known:
            raise r.fail(
                f"{where}.lines.{key}", f"unknown trigger (known: {', '.join(sorted(known))})"
            )
    out: dict[Trigger, tuple[str, ...]] = {}
    for trigger in Trigger:
        key = f"{where}.lines.{trigger.value}"
        values = r.items(r.get(lines_table, trigger.value, f"{where}.lines"), key)
        if len(values) < MIN_LINES_PER_TRIGGER:
            raise r.fail(key, f"needs at least {MIN_LINES_PER_TRIGGER} lines, got {len(values)}")
        for j, line in enumerate(values):
            if not isinstance(line, str) or not line.strip():
                raise r.fail(f"{key}[{j}]", f"expected a non-empty string, got {line!r}")
        if len(set(values)) != len(values):
            raise r.fail(key, "lines repeat; each line should be distinct")
        out[trigger] = tuple(values)
    return MappingProxyType(out)
