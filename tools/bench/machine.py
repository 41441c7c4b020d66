"""The header every bench JSON carries: the machine, the code and the load its figures saw.

Take the load average when the run starts and build the header when it ends:

    start = load_average()
    ...  # the measured run
    document = {"machine": machine_header(start, model=settings.ai.model), ...}

JSON written before this header kept the load average under keys of its own
(``loadavg_before``, ``settings.loadavg``, ``load_average_at_start``, ...);
:func:`recorded_load` reads those as well as the header's.
"""

from __future__ import annotations

import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ai import ModelConfig

HEADER_VERSION = 1
ROOT = Path(__file__).resolve().parents[2]

LoadAverage = tuple[float, ...]
"""The 1, 5 and 15-minute load average, or fewer figures where fewer were recorded."""

# Where a bench JSON keeps the load at the start and at the end of its run: the header
# first, then the keys of JSON written before it ("" where only the end was recorded).
_LOAD_KEYS = (
    ("machine.load_average_start", "machine.load_average_end"),
    ("loadavg_before", "loadavg_after"),
    ("load_average_at_start", "load_average_at_end"),
    ("loadavg_at_start", "loadavg_at_end"),
    ("", "settings.loadavg"),
    ("", "load_average"),
)
# Older JSON that kept only the 1-minute figure, start and end in one list.
_ONE_MINUTE_KEY = "loadavg_1min"


@dataclass(frozen=True, slots=True)
class MachineHeader:
    """What a benchmark's figures were measured on, and the load before and after."""

    cpu: str
    cores: int
    platform: str
    python: str
    llama_cpp_python: str
    model_sha256: str
    commit: str
    load_average_start: LoadAverage
    load_average_end: LoadAverage

    def to_json(self) -> dict[str, object]:
        """The header as a bench JSON holds it, under ``"machine"``."""
        return {
            "version": HEADER_VERSION,
            "cpu": self.cpu,
            "cores": self.cores,
            "platform": self.platform,
            "python": self.python,
            "llama_cpp_python": self.llama_cpp_python,
            "model_sha256": self.model_sha256,
            "commit": self.commit,
            "load_average_start": list(self.load_average_start),
            "load_average_end": list(self.load_average_end),
        }


def load_average() -> LoadAverage:
    """The machine's load average now, rounded to two decimals; empty where there is none."""
    try:
        return tuple(round(x, 2) for x in os.getloadavg())
    except OSError:
        return ()


def machine_header(
    load_at_start: Sequence[float],
    *,
    model: ModelConfig | None,
    load_at_end: Sequence[float] | None = None,
) -> dict[str, object]:
    """The header for a run that began at ``load_at_start``, as JSON.

    ``model`` is the model configuration the run used (None for a run without one). The
    load at the end is taken now unless the caller took it already, before its own
    cleanup; either way before the model file is hashed.
    """
    end = load_average() if load_at_end is None else tuple(load_at_end)
    return MachineHeader(
        cpu=_cpu(),
        cores=os.cpu_count() or 0,
        platform=platform.platform(),
        python=platform.python_version(),
        llama_cpp_python=_version("llama_cpp_python"),
        model_sha256=model_sha256(model),
        commit=_commit(),
        load_average_start=tuple(load_at_start),
        load_average_end=end,
    ).to_json()


def model_sha256(model: ModelConfig | None) -> str:
    """The sha256 of the model file ``model`` names, or "" when there is none to read."""
    if model is None or model.backend != "llama":
        return ""
    try:
        from ai import ModelLoadError
        from ai.model import resolve_model_path, verified_sha256
    except ImportError:  # an older ai/ (bench/busy.py --ai-from) without these
        return ""
    try:
        return verified_sha256(model, resolve_model_path(model))
    except (ModelLoadError, ImportError, OSError):
        return ""


def recorded_load(document: Mapping[str, object]) -> tuple[LoadAverage, LoadAverage]:
    """The load average at the start and at the end of the run a bench JSON records.

    Reads the header's keys and the older ones; a figure that was not recorded comes
    back empty.
    """
    start: LoadAverage = ()
    end: LoadAverage = ()
    for start_key, end_key in _LOAD_KEYS:
        start = start or _figures(document, start_key)
        end = end or _figures(document, end_key)
    one_minute = _figures(document, _ONE_MINUTE_KEY)
    if len(one_minute) == 2:
        start, end = start or one_minute[:1], end or one_minute[1:]
    return start, end


def _figures(document: Mapping[str, object], key: str) -> LoadAverage:
    value: object = document
    for part in key.split(".") if key else ():
        value = value.get(part) if isinstance(value, Mapping) else None
    if not key or not isinstance(value, list | tuple):
        return ()
    try:
        return tuple(float(x) for x in value)
    except (TypeError, ValueError):
        return ()


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""
