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
class Fact:
    """Something a villager can tell the player; ``about`` are the words that call for it.

    ``topic`` is what a villager remembers the player asked about ("the forge").
    """

    about: tuple[str, ...]
    text: str
    topic: str = ""


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
    openers: Mapping[Trigger, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False, compare=False
    )
    facts: tuple[Fact, ...] = ()
    cold_lines: Mapping[Trigger, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False, compare=False
    )
    """Greetings and farewells for when the villager is wary of the traveller."""
    refusals: tuple[str, ...] = ()
    """What the villager says, in their own voice, to player text the content filter refuses."""
    recall: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False, compare=False
    )
    """Answers to "do you remember me?", by the kind of fact recalled (``RECALL_KINDS``)."""
    recall_openers: tuple[str, ...] = ()
    """First words of a model's answer to "do you remember me?" when they remember something."""
    stranger_openers: tuple[str, ...] = ()
    """First words of that answer when they remember nothing of the traveller."""

    @property
    def templates(self) -> Mapping[Trigger, tuple[str, ...]]:
        """The template lines by trigger (the same mapping as ``lines``)."""
        return self.lines

    def lines_for(self, trigger: Trigger) -> tuple[str, ...]:
        """The template lines for ``trigger`` (never empty for a loaded cast)."""
        return self.lines.get(trigger, ())


@dataclass(frozen=True, slots=True)
class Cast:
    """All villagers, in file order, and the facts everyone in the village knows."""

    npcs: tuple[NpcSpec, ...]
    facts: tuple[Fact, ...] = ()


def load_cast(name: str | Path = DEFAULT_CAST) -> Cast:
    """Load and validate the cast file; raise AssetError naming the file, villager and key."""
    path = asset_path(name)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise AssetError(f"{path}: cannot read cast file: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise AssetError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError:
        raise AssetError(f"{path}: not a cast file: tables or lists nested too deeply") from None
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
                openers=_openers(r, table, where),
                facts=_facts(r, table.get("facts", []), f"{where}.facts"),
                cold_lines=_cold_lines(r, table, where),
                refusals=_refusals(r, table, where),
                recall=_recall(r, table, where),
                recall_openers=_recall_openers(r, table, where, "openers"),
                stranger_openers=_recall_openers(r, table, where, "stranger_openers"),
            )
        )
    return Cast(tuple(specs), _facts(r, raw.get("fact", []), "fact"))


def _openers(
    r: Reader, table: Mapping[str, object], where: str
) -> Mapping[Trigger, tuple[str, ...]]:
    """Optional first words for model lines, by trigger."""
    openers = r.table(table.get("openers", {}), f"{where}.openers")
    known = {t.value for t in Trigger}
    out: dict[Trigger, tuple[str, ...]] = {}
    for key, value in openers.items():
        place = f"{where}.openers.{key}"
        if key not in known:
            raise r.fail(place, f"unknown trigger (known: {', '.join(sorted(known))})")
        words = r.items(value, place)
        for j, opener in enumerate(words):
            if not isinstance(opener, str) or not opener.strip() or '"' in opener:
                raise r.fail(
                    f"{place}[{j}]", f"expected a few words without quotes, got {opener!r}"
                )
        out[Trigger(key)] = tuple(o.strip() for o in words)
    return MappingProxyType(out)


def _facts(r: Reader, value: object, where: str) -> tuple[Fact, ...]:
    """Optional facts: tables with ``text`` and a list of ``about`` words."""
    out: list[Fact] = []
    for i, entry in enumerate(r.items(value, where)):
        place = f"{where}[{i}]"
        table = r.table(entry, place)
        about = r.items(r.get(table, "about", place), f"{place}.about")
        if not about or not all(isinstance(w, str) and w.strip() for w in about):
            raise r.fail(f"{place}.about", "expected a non-empty list of words")
        words = tuple(w.strip().lower() for w in about)
        topic = r.text(table, "topic", place, default="").strip()
        out.append(Fact(words, r.text(table, "text", place), topic))
    return tuple(out)


def _refusals(r: Reader, table: Mapping[str, object], where: str) -> tuple[str, ...]:
    """Optional refusals; when given, at least two, so the same words do not repeat."""
    if "refusals" not in table:
        return ()
    place = f"{where}.refusals"
    values = r.items(table["refusals"], place)
    if len(values) < MIN_LINES_PER_TRIGGER:
        raise r.fail(place, f"needs at least {MIN_LINES_PER_TRIGGER} lines, got {len(values)}")
    for j, line in enumerate(values):
        if not isinstance(line, str) or not line.strip() or "{" in line:
            raise r.fail(f"{place}[{j}]", f"expected a plain non-empty line, got {line!r}")
    return tuple(line.strip() for line in values)


RECALL_KINDS = ("errand", "threw", "asked", "bumped", "stranger")
"""What a villager recalls of the traveller, most telling first: an errand done for them,
something thrown at them, a question asked, a bump; "stranger" when nothing."""
_RECALL_OPENERS = ("openers", "stranger_openers")
# The one placeholder each kind of recall line may use besides {name} and {player}.
_RECALL_SLOTS = {"threw": "{thing}", "asked": "{topic}"}


def _recall(r: Reader, table: Mapping[str, object], where: str) -> Mapping[str, tuple[str, ...]]:
    """Optional answers to "do you remember me?"; when given, every kind needs its set."""
    if "recall" not in table:
        return MappingProxyType({})
    place = f"{where}.recall"
    raw = r.table(table["recall"], place)
    for key in raw:
        if key not in (*RECALL_KINDS, *_RECALL_OPENERS):
            raise r.fail(f"{place}.{key}", f"unknown kind (known: {', '.join(RECALL_KINDS)})")
    out: dict[str, tuple[str, ...]] = {}
    for kind in RECALL_KINDS:
        key = f"{place}.{kind}"
        values = r.items(r.get(raw, kind, place), key)
        if len(values) < MIN_LINES_PER_TRIGGER:
            raise r.fail(key, f"needs at least {MIN_LINES_PER_TRIGGER} lines, got {len(values)}")
        for j, line in enumerate(values):
            if not isinstance(line, str) or not line.strip():
                raise r.fail(f"{key}[{j}]", f"expected a non-empty string, got {line!r}")
            stray = [s for k, s in _RECALL_SLOTS.items() if k != kind and s in line]
            if stray:
                raise r.fail(f"{key}[{j}]", f"{stray[0]} belongs in {kind!r} lines only")
        out[kind] = tuple(values)
    return MappingProxyType(out)


def _recall_openers(
    r: Reader, table: Mapping[str, object], where: str, key: str
) -> tuple[str, ...]:
    """Optional first words of the model's answer to "do you remember me?"."""
    raw = table.get("recall", {})
    if not isinstance(raw, Mapping) or key not in raw:
        return ()
    place = f"{where}.recall.{key}"
    values = r.items(raw[key], place)
    for j, opener in enumerate(values):
        if not isinstance(opener, str) or not opener.strip() or '"' in opener or "{" in opener:
            raise r.fail(f"{place}[{j}]", f"expected a few words without quotes, got {opener!r}")
    return tuple(o.strip() for o in values)


COLD_TRIGGERS = (Trigger.GREET, Trigger.FAREWELL)
"""The triggers a wary villager has lines of their own for."""


def _lines(r: Reader, table: Mapping[str, object], where: str) -> Mapping[Trigger, tuple[str, ...]]:
    return _line_table(r, r.get(table, "lines", where), f"{where}.lines", tuple(Trigger))


def _cold_lines(
    r: Reader, table: Mapping[str, object], where: str
) -> Mapping[Trigger, tuple[str, ...]]:
    """Optional lines for a wary villager; when given, every cold trigger needs its set."""
    if "cold_lines" not in table:
        return MappingProxyType({})
    return _line_table(r, table["cold_lines"], f"{where}.cold_lines", COLD_TRIGGERS)


def _line_table(
    r: Reader, raw: object, where: str, triggers: tuple[Trigger, ...]
) -> Mapping[Trigger, tuple[str, ...]]:
    lines_table = r.table(raw, where)
    known = {t.value for t in triggers}
    for key in lines_table:
        if key not in known:
            raise r.fail(f"{where}.{key}", f"unknown trigger (known: {', '.join(sorted(known))})")
    out: dict[Trigger, tuple[str, ...]] = {}
    for trigger in triggers:
        key = f"{where}.{trigger.value}"
        values = r.items(r.get(lines_table, trigger.value, where), key)
        if len(values) < MIN_LINES_PER_TRIGGER:
            raise r.fail(key, f"needs at least {MIN_LINES_PER_TRIGGER} lines, got {len(values)}")
        for j, line in enumerate(values):
            if not isinstance(line, str) or not line.strip():
                raise r.fail(f"{key}[{j}]", f"expected a non-empty string, got {line!r}")
        if len(set(values)) != len(values):
            raise r.fail(key, "lines repeat; each line should be distinct")
        out[trigger] = tuple(values)
    return MappingProxyType(out)
