"""The level: static geometry, scenery, zones, props, the crate stack and errands.

Loaded from JSON under ``assets/levels/``. Coordinates are world units with y up. Every
rectangle (decor, zones) is given by its bottom-left corner ``(x, y)`` and its size.
"""

from __future__ import annotations

import bisect
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from game.assets import AssetError, asset_path
from game.sim.props import PROP_KINDS
from game.sim.schema import Reader
from game.sim.snapshot import DecorView, LevelView, StaticShapeView, Vec, ZoneView

logger = logging.getLogger(__name__)

DEFAULT_LEVEL = "levels/village.json"
ERRAND_KINDS = ("deliver", "restack", "fetch")
# Sensible maxima: a typo in a count must end in a message, not in minutes of set-up and
# gigabytes of bodies. The bundled village has 67 props and a stack of 4.
MAX_GROUP_COUNT = 500
MAX_LEVEL_PROPS = 2000
MAX_STACK_COUNT = 40
MAX_ERRAND_GOAL = 1000
MAX_LIST_ITEMS = 5000


@dataclass(frozen=True, slots=True)
class StaticSpec:
    """A static collision shape: a thick segment or a convex polygon."""

    kind: Literal["segment", "poly"]
    points: tuple[Vec, ...]
    radius: float
    material: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class ZoneSpec:
    """A rectangular sensor zone; ``(x, y)`` is its bottom-left corner."""

    id: str
    x: float
    y: float
    w: float
    h: float
    label: str

    def contains(self, px: float, py: float) -> bool:
        """Whether point (px, py) is inside the zone."""
        return self.x <= px <= self.x + self.w and self.y <= py <= self.y + self.h


@dataclass(frozen=True, slots=True)
class PropSpec:
    """One prop to place at the start; ``tag`` names props the rules care about."""

    kind: str
    x: float
    y: float
    tag: str = ""


@dataclass(frozen=True, slots=True)
class StackSpec:
    """A column of props standing on the ground at ``x`` that can be knocked over."""

    id: str
    kind: str
    x: float
    count: int
    zone: str


@dataclass(frozen=True, slots=True)
class ErrandSpec:
    """An errand a villager (by cast id) gives; judged by physics, never by text."""

    id: str
    kind: str
    giver: str
    title: str
    goal: int
    zone: str = ""
    prop_kind: str = ""
    prop_tag: str = ""
    radius: float = 70.0


@dataclass(frozen=True, slots=True)
class Level:
    """A loaded level. ``ground`` is a polyline with strictly increasing x."""

    name: str
    width: float
    height: float
    gravity: Vec
    ground: tuple[Vec, ...]
    ground_radius: float
    ground_material: str
    statics: tuple[StaticSpec, ...]
    decor: tuple[DecorView, ...]
    zones: tuple[ZoneSpec, ...]
    props: tuple[PropSpec, ...]
    stacks: tuple[StackSpec, ...]
    errands: tuple[ErrandSpec, ...]
    player_spawn: Vec

    def ground_y(self, x: float) -> float:
        """Height of the ground's surface under ``x``."""
        xs = [p[0] for p in self.ground]
        i = bisect.bisect_right(xs, x)
        if i <= 0:
            return self.ground[0][1] + self.ground_radius
        if i >= len(self.ground):
            return self.ground[-1][1] + self.ground_radius
        (x0, y0), (x1, y1) = self.ground[i - 1], self.ground[i]
        t = (x - x0) / (x1 - x0)
        return y0 + (y1 - y0) * t + self.ground_radius

    def zone(self, zone_id: str) -> ZoneSpec:
        """The zone called ``zone_id``; KeyError if there is none."""
        for zone in self.zones:
            if zone.id == zone_id:
                return zone
        raise KeyError(zone_id)

    def all_statics(self) -> tuple[StaticSpec, ...]:
        """Ground segments, the two boundary walls, then the listed static shapes."""
        ground = tuple(
            StaticSpec("segment", (a, b), self.ground_radius, self.ground_material, "ground")
            for a, b in zip(self.ground, self.ground[1:], strict=False)
        )
        left = self.ground[0][1]
        right = self.ground[-1][1]
        walls = (
            StaticSpec("segment", ((0.0, left), (0.0, self.height)), 8.0, "stone", "edge"),
            StaticSpec(
                "segment", ((self.width, right), (self.width, self.height)), 8.0, "stone", "edge"
            ),
        )
        return ground + walls + self.statics

    def view(self) -> LevelView:
        """The immutable view the renderer draws once."""
        statics = tuple(
            StaticShapeView(s.kind, s.points, s.radius, s.material) for s in self.all_statics()
        )
        stacked = {stack.zone for stack in self.stacks}
        zones = tuple(
            ZoneView(z.id, z.x, z.y, z.w, z.h, z.label, z.id in stacked) for z in self.zones
        )
        return LevelView(self.width, self.height, statics, self.decor, zones)


def load_level(name: str | Path = DEFAULT_LEVEL) -> Level:
    """Load and validate a level file; raise AssetError naming the file and the problem."""
    path = asset_path(name)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise AssetError(f"{path}: cannot read level file: {exc}") from None
    except json.JSONDecodeError as exc:
        raise AssetError(f"{path}: not valid JSON: {exc}") from None
    except RecursionError:
        raise AssetError(f"{path}: not a level: lists or tables nested too deeply") from None
    level = parse_level(raw, path)
    logger.info(
        "loaded level %s: %d props, %d zones", level.name, len(level.props), len(level.zones)
    )
    return level


def parse_level(raw: object, path: Path) -> Level:
    """Validate parsed level data; ``path`` is only used in error messages."""
    r = Reader(path)
    data = r.table(raw, "")
    width = r.number(data, "width", "level")
    height = r.number(data, "height", "level")
    if width <= 0 or height <= 0:
        raise r.fail("level", "width and height must be positive")
    gravity = r.point(r.get(data, "gravity", "level"), "gravity")

    ground_data = r.table(r.get(data, "ground", "level"), "ground")
    ground = r.points(r.get(ground_data, "points", "ground"), "ground.points", 2)
    for i in range(1, len(ground)):
        if ground[i][0] <= ground[i - 1][0]:
            raise r.fail(f"ground.points[{i}]", "x must increase strictly along the ground")

    statics = tuple(_static(r, s, f"statics[{i}]") for i, s in enumerate(_list(r, data, "statics")))
    decor = tuple(_decor(r, d, f"decor[{i}]") for i, d in enumerate(_list(r, data, "decor")))
    zones = tuple(_zone(r, z, f"zones[{i}]") for i, z in enumerate(_list(r, data, "zones")))
    zone_ids = [z.id for z in zones]
    if len(set(zone_ids)) != len(zone_ids):
        raise r.fail("zones", "zone ids must be unique")

    props: list[PropSpec] = []
    for i, group in enumerate(_list(r, data, "props")):
        props.extend(_prop_group(r, group, f"props[{i}]"))
        if len(props) > MAX_LEVEL_PROPS:
            raise r.fail("props", f"more than {MAX_LEVEL_PROPS} props in the level")
    stacks = tuple(
        _stack(r, s, f"stacks[{i}]", zone_ids) for i, s in enumerate(_list(r, data, "stacks"))
    )
    errands = tuple(
        _errand(r, e, f"errands[{i}]", zone_ids) for i, e in enumerate(_list(r, data, "errands"))
    )
    spawns = r.table(r.get(data, "spawns", "level"), "spawns")
    player_spawn = r.point(r.get(spawns, "player", "spawns"), "spawns.player")
    _check_inside(r, width, height, "spawns.player", *player_spawn)
    for i, prop in enumerate(props):
        _check_inside(r, width, height, f"props (generated prop {i})", prop.x, prop.y)
    # Zones may reach below the ground line; only their horizontal extent must be inside.
    for i, zone in enumerate(zones):
        _check_inside(r, width, height, f"zones[{i}]", zone.x, 0.0)
        _check_inside(r, width, height, f"zones[{i}]", zone.x + zone.w, 0.0)
    for i, stack in enumerate(stacks):
        _check_inside(r, width, height, f"stacks[{i}]", stack.x, 0.0)

    return Level(
        name=r.text(data, "name", "level"),
        width=width,
        height=height,
        gravity=gravity,
        ground=ground,
        ground_radius=r.number(ground_data, "radius", "ground", default=4.0),
        ground_material=r.text(ground_data, "material", "ground", default="grass"),
        statics=statics,
        decor=decor,
        zones=zones,
        props=tuple(props),
        stacks=stacks,
        errands=errands,
        player_spawn=player_spawn,
    )


def _list(r: Reader, data: Mapping[str, Any], key: str) -> list[Any]:
    items = r.items(data.get(key, []), key)
    if len(items) > MAX_LIST_ITEMS:
        raise r.fail(key, f"more than {MAX_LIST_ITEMS} entries")
    return items


def _check_inside(r: Reader, width: float, height: float, where: str, x: float, y: float) -> None:
    if not (0.0 <= x <= width and 0.0 <= y <= height):
        raise r.fail(
            where, f"position ({x:g}, {y:g}) is outside the level (0..{width:g}, 0..{height:g})"
        )


def _static(r: Reader, raw: object, where: str) -> StaticSpec:
    d = r.table(raw, where)
    kind = r.text(d, "kind", where)
    if kind == "segment":
        points = r.points(r.get(d, "points", where), f"{where}.points", 2)
        if len(points) != 2:
            raise r.fail(f"{where}.points", "a segment has exactly 2 points")
        return StaticSpec(
            "segment",
            points,
            r.number(d, "radius", where, 3.0),
            r.text(d, "material", where, "wood"),
            r.text(d, "label", where, "-"),
        )
    if kind == "poly":
        points = r.points(r.get(d, "points", where), f"{where}.points", 3)
        return StaticSpec(
            "poly",
            points,
            r.number(d, "radius", where, 0.0),
            r.text(d, "material", where, "wood"),
            r.text(d, "label", where, "-"),
        )
    raise r.fail(f"{where}.kind", f"unknown static kind {kind!r} (expected 'segment' or 'poly')")


def _decor(r: Reader, raw: object, where: str) -> DecorView:
    d = r.table(raw, where)
    return DecorView(
        kind=r.text(d, "kind", where),
        x=r.number(d, "x", where),
        y=r.number(d, "y", where),
        w=r.number(d, "w", where),
        h=r.number(d, "h", where),
        material=r.text(d, "material", where, "plaster"),
        label=str(d.get("label", "")),
    )


def _zone(r: Reader, raw: object, where: str) -> ZoneSpec:
    d = r.table(raw, where)
    w, h = r.number(d, "w", where), r.number(d, "h", where)
    if w <= 0 or h <= 0:
        raise r.fail(where, "zone width and height must be positive")
    return ZoneSpec(
        id=r.text(d, "id", where),
        x=r.number(d, "x", where),
        y=r.number(d, "y", where),
        w=w,
        h=h,
        label=r.text(d, "label", where, "zone"),
    )


def _prop_group(r: Reader, raw: object, where: str) -> list[PropSpec]:
    d = r.table(raw, where)
    kind = r.text(d, "kind", where)
    if kind not in PROP_KINDS:
        raise r.fail(
            f"{where}.kind", f"unknown prop kind {kind!r} (known: {', '.join(PROP_KINDS)})"
        )
    x, y = r.number(d, "x", where), r.number(d, "y", where)
    count = r.integer(d, "count", where, default=1)
    if count > MAX_GROUP_COUNT:
        raise r.fail(f"{where}.count", f"at most {MAX_GROUP_COUNT} props per group, got {count}")
    dx, dy = r.number(d, "dx", where, 0.0), r.number(d, "dy", where, 0.0)
    tag = str(d.get("tag", ""))
    return [PropSpec(kind, x + i * dx, y + i * dy, tag) for i in range(count)]


def _stack(r: Reader, raw: object, where: str, zone_ids: list[str]) -> StackSpec:
    d = r.table(raw, where)
    kind = r.text(d, "kind", where)
    if kind not in PROP_KINDS:
        raise r.fail(f"{where}.kind", f"unknown prop kind {kind!r}")
    zone = r.text(d, "zone", where)
    if zone not in zone_ids:
        raise r.fail(f"{where}.zone", f"no zone called {zone!r}")
    count = r.integer(d, "count", where)
    if not 2 <= count <= MAX_STACK_COUNT:
        raise r.fail(f"{where}.count", f"a stack needs 2..{MAX_STACK_COUNT} props, got {count}")
    return StackSpec(r.text(d, "id", where), kind, r.number(d, "x", where), count, zone)


def _errand(r: Reader, raw: object, where: str, zone_ids: list[str]) -> ErrandSpec:
    d = r.table(raw, where)
    kind = r.text(d, "kind", where)
    if kind not in ERRAND_KINDS:
        raise r.fail(
            f"{where}.kind", f"unknown errand kind {kind!r} (known: {', '.join(ERRAND_KINDS)})"
        )
    zone = str(d.get("zone", ""))
    if kind in ("deliver", "restack") and zone not in zone_ids:
        raise r.fail(f"{where}.zone", f"no zone called {zone!r}")
    prop_tag = str(d.get("prop_tag", ""))
    if kind == "fetch" and not prop_tag:
        raise r.fail(where, "a fetch errand needs a 'prop_tag'")
    goal = r.integer(d, "goal", where)
    if not 1 <= goal <= MAX_ERRAND_GOAL:
        raise r.fail(f"{where}.goal", f"goal must be in 1..{MAX_ERRAND_GOAL}, got {goal}")
    prop_kind = str(d.get("prop_kind", ""))
    if prop_kind and prop_kind not in PROP_KINDS:
        raise r.fail(
            f"{where}.prop_kind",
            f"unknown prop kind {prop_kind!r} (known: {', '.join(PROP_KINDS)})",
        )
    return ErrandSpec(
        id=r.text(d, "id", where),
        kind=kind,
        giver=r.text(d, "giver", where),
        title=r.text(d, "title", where),
        goal=goal,
        zone=zone,
        prop_kind=prop_kind,
        prop_tag=prop_tag,
        radius=r.number(d, "radius", where, 70.0),
    )
