"""The headless report: what one run did, as frozen dataclasses, and its one JSON form.

Benchmarks, CI and tools read the JSON that ``--report`` writes. Each part is built by
the object that measured it (the session, the dialogue, the model's line source, the
decider, the autosave, the GC watch) and the headless run puts them together. Field
names are the JSON keys; :func:`report_json` is the only serialiser and
:func:`load_report` reads a written report back. ``version`` goes up whenever a key is
renamed or removed, or its meaning changes.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

REPORT_VERSION = 1

# How a field whose value is a part, or None, is written (see ``report_json``).
_INLINE = {"json": "inline"}
"""The part's fields go straight into the enclosing object; nothing when None."""
_OMIT_IF_NONE = {"json": "omit_if_none"}
"""No key at all when None."""
_EMPTY_IF_NONE = {"json": "empty_if_none"}
"""``{}`` when None."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Quantiles:
    """p50/p95/p99 and the maximum of some samples (milliseconds, unless named otherwise)."""

    p50: float
    p95: float
    p99: float
    max: float


@dataclass(frozen=True, slots=True)
class TickQuantiles:
    """p50/p95 and the maximum of a count of ticks."""

    p50: float
    p95: float
    max: float


@dataclass(frozen=True, slots=True)
class RateQuantiles:
    """p50/p95 of a rate (tokens per second)."""

    p50: float
    p95: float


@dataclass(frozen=True, slots=True)
class LinesReport:
    """Lines asked for and shown, by trigger and by origin, and how many are remembered."""

    asked: Mapping[str, int]
    shown: Mapping[str, int]
    remembered: int
    shown_by_trigger: Mapping[str, Mapping[str, int]]
    """Lines shown for each trigger, by origin ("model", "prepared", "template", ...)."""
    model_share: Mapping[str, float]
    """The share of each trigger's shown lines that the model wrote."""


@dataclass(frozen=True, slots=True)
class LineLatency:
    """How soon lines appeared after they were asked for, and the AI's cost per tick."""

    encounters: int
    encounters_shown: int
    encounter_latency_ticks: TickQuantiles
    greetings_within_1_tick: int
    line_latency_ticks: TickQuantiles
    main_thread_ai_ms: Quantiles


@dataclass(frozen=True, slots=True)
class PredictionReport:
    """Greetings prepared ahead: how many were asked for, and how each one ended."""

    issued: int
    used: int
    expired: int
    cancelled: int
    stale: int
    failed: int
    late: int
    in_flight: int
    ready: int
    ahead: int = 0
    """Of ``issued``, asked for while the worker was idle, ahead of any approach."""
    raised: int = 0
    """Of ``ahead``, raised to a prediction's priority when the player headed their way."""
    kept: int = 0
    """Predictions withdrawn while being written, left to finish for a later approach."""
    farewells: Mapping[str, int] = field(default_factory=dict)
    """Farewells written as the villager greeted: issued, and how they ended."""
    templates: Mapping[str, int] = field(default_factory=dict)
    """Greetings shown as a template line, by why no model line was ready: the request
    was late, failed or stale (cancelled, expired), the approach was shed, or none was
    asked ("unasked")."""


@dataclass(frozen=True, slots=True)
class TierReport:
    """One tier of the model runtime (the local model, or a server)."""

    state: str
    requests: int
    completed: int
    failed: Mapping[str, int]
    hedges_won: int
    hedges_lost: int
    breaker_opened: int
    ttft_from_submit_ms: Quantiles
    tokens_per_s: RateQuantiles


@dataclass(frozen=True, slots=True)
class WorkerReport:
    """Where the worker's time went: seconds by how each request's line ended, the
    share that went to lines on screen, and the asks judged not worth the model's time.

    ``late`` counts model lines that missed their moment (a greeting's request still in
    flight when the villager greeted, a reaction past its time), by trigger; each was
    answered by a template line in its moment instead.
    """

    admission: str
    seconds: Mapping[str, float]
    shown_share: float
    decisions_s: float
    shed: Mapping[str, int]
    late: Mapping[str, int]


@dataclass(frozen=True, slots=True)
class ModelReport:
    """The model's line source: the runtime's counts and latencies, and the game's checks."""

    mode: str
    requests: Mapping[str, int]
    submitted: int
    merged: int
    completed: int
    cancelled: int
    preempted: int
    timed_out: int
    failed: Mapping[str, int]
    dropped: Mapping[str, int]
    fallbacks: Mapping[str, int]
    queue_depth: int
    in_flight: int
    max_queue_depth: int
    tokens: int
    ttft_ms: Quantiles
    queue_wait_ms: Quantiles
    total_ms: Quantiles
    tokens_per_s: RateQuantiles
    api_call_ms: Quantiles
    stale_dropped: Mapping[str, int]
    predictive: PredictionReport
    tiers: Mapping[str, TierReport]
    lines_by_tier: Mapping[str, int]
    template_while_loading: int
    load: str
    worker: WorkerReport


@dataclass(frozen=True, slots=True)
class QueueLeft:
    """What was still queued or running in the model's worker."""

    queue_depth: int
    in_flight: int


@dataclass(frozen=True, slots=True)
class AiReport:
    """The report's ``ai`` section: the model's figures (None without a model) beside the
    latency the game saw, and what was left once the model had shut down."""

    model: ModelReport | None = field(metadata=_INLINE)
    latency: LineLatency = field(metadata=_INLINE)
    after_shutdown: QueueLeft | None = field(default=None, metadata=_OMIT_IF_NONE)


@dataclass(frozen=True, slots=True)
class DecisionsReport:
    """Decisions made, applied and rejected by reason, and how long the model took."""

    made: Mapping[str, int]
    applied: Mapping[str, int]
    applied_total: int
    rejected: Mapping[str, int]
    fell_back_to_rules: Mapping[str, int]
    actions_ended: Mapping[str, int]
    latency_ms: Quantiles


@dataclass(frozen=True, slots=True)
class GcPauses:
    """Collections of one generation: how many, and the longest pause."""

    count: int
    max_ms: float


@dataclass(frozen=True, slots=True)
class SettingsReport:
    """Edits to the config files during the run: applied, and refused (bad files)."""

    reloads: int
    refused: int


@dataclass(frozen=True, slots=True)
class GcReport:
    """The garbage collector's pauses during the run, by generation."""

    gen0: GcPauses
    gen1: GcPauses
    gen2: GcPauses


@dataclass(frozen=True, slots=True)
class SaveReport:
    """The autosave: saves written, how long capturing and writing took, the last error."""

    saves: int
    capture_ms: Quantiles
    write_ms: Quantiles
    error: str | None


@dataclass(frozen=True, slots=True)
class StartupReport:
    """Milliseconds from launch to the loaded model and to the first tick."""

    model_ready_ms: float
    first_tick_ms: float


@dataclass(frozen=True, slots=True)
class SamplesReport:
    """Raw samples (``--samples``): every recent tick and AI cost, every greeting's wait."""

    tick_ms: tuple[float, ...]
    ai_ms: tuple[float, ...]
    greet_latency_ticks: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class HeadlessReport:
    """Everything one headless run reports. ``decisions`` is None without a decider;
    ``save``, ``startup`` and ``samples`` are there only with ``--save``, a known launch
    time and ``--samples``, and ``settings`` only when the config files were watched."""

    version: int = REPORT_VERSION
    scenario: str
    seed: int
    ai_mode: str
    ticks: int
    interrupted: bool
    dt: float
    wall_s: float
    paced: bool
    tick_ms: Quantiles
    overruns: int
    events: Mapping[str, int]
    npc_transitions: int
    errands_done: int
    npcs: int
    props: int
    lines: LinesReport
    ai: AiReport
    decisions: DecisionsReport | None = field(metadata=_EMPTY_IF_NONE)
    gc: GcReport
    world_hash: str
    save: SaveReport | None = field(default=None, metadata=_OMIT_IF_NONE)
    startup: StartupReport | None = field(default=None, metadata=_OMIT_IF_NONE)
    samples: SamplesReport | None = field(default=None, metadata=_OMIT_IF_NONE)
    settings: SettingsReport | None = field(default=None, metadata=_OMIT_IF_NONE)


def report_json(part: Any) -> dict[str, Any]:
    """``part`` (the report, or any part of it) as the JSON object it is written as.

    Keys are the field names, in field order.
    """
    out: dict[str, Any] = {}
    for f in dataclasses.fields(part):
        value = getattr(part, f.name)
        how = f.metadata.get("json")
        if value is None and how == "omit_if_none":
            continue
        if how == "inline":
            if value is not None:
                out.update(report_json(value))
        elif value is None and how == "empty_if_none":
            out[f.name] = {}
        else:
            out[f.name] = _json_value(value)
    return out


def _json_value(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return report_json(value)
    if isinstance(value, Mapping):
        return {key: _json_value(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_json_value(item) for item in value]
    return value


def write_report(report: HeadlessReport, path: Path) -> None:
    """Write ``report`` as indented JSON, creating the folder. Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report_json(report), indent=2) + "\n")


def load_report(path: Path) -> HeadlessReport:
    """Read a report that ``--report`` wrote. Raises OSError, or ValueError for JSON that
    is not a report of this version."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or data.get("version") != REPORT_VERSION:
        found = data.get("version") if isinstance(data, dict) else None
        raise ValueError(f"{path}: not a version {REPORT_VERSION} report (version {found!r})")
    return _from_json(HeadlessReport, data, "report")


def _from_json(cls: type[T], data: Any, where: str) -> T:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object, found {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        hint, how = hints[f.name], f.metadata.get("json")
        if how == "inline":
            part = _part_type(hint)
            first = dataclasses.fields(part)[0].name
            values[f.name] = _from_json(part, data, where) if first in data else None
        elif f.name not in data:
            if how not in ("omit_if_none", "empty_if_none"):
                raise ValueError(f"{where}: missing key {f.name!r}")
            values[f.name] = None
        elif how == "empty_if_none" and data[f.name] == {}:
            values[f.name] = None
        else:
            values[f.name] = _value(hint, data[f.name], f"{where}.{f.name}")
    return cls(**values)


def _part_type(hint: Any) -> type[Any]:
    """The dataclass in ``Part`` or ``Part | None``."""
    for arg in typing.get_args(hint) or (hint,):
        if dataclasses.is_dataclass(arg):
            return typing.cast(type[Any], arg)
    raise TypeError(f"{hint!r} names no report part")


def _value(hint: Any, value: Any, where: str) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        (inner,) = (arg for arg in args if arg is not type(None))
        return _value(inner, value, where)
    if dataclasses.is_dataclass(hint):
        return _from_json(typing.cast(type[Any], hint), value, where)
    if origin is Mapping:
        if not isinstance(value, dict):
            raise ValueError(f"{where}: expected an object, found {type(value).__name__}")
        return {key: _value(args[1], item, f"{where}.{key}") for key, item in value.items()}
    if origin is tuple:
        if not isinstance(value, list):
            raise ValueError(f"{where}: expected a list, found {type(value).__name__}")
        return tuple(_value(args[0], item, f"{where}[]") for item in value)
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return value
    if isinstance(value, hint) and not (hint is int and isinstance(value, bool)):
        return value
    raise ValueError(f"{where}: expected {hint.__name__}, found {type(value).__name__}")
