"""Watch the garbage collector, whose full pauses can cost whole frames."""

from __future__ import annotations

import gc
import time
from typing import Any

from game.headless.report import GcPauses, GcReport


class GcWatch:
    """Records how long each collection took, by generation, through ``gc.callbacks``."""

    def __init__(self) -> None:
        self.pauses_ms: dict[int, list[float]] = {0: [], 1: [], 2: []}
        self._start = 0.0

    def __enter__(self) -> GcWatch:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.pauses_ms[int(info["generation"])].append(
                (time.perf_counter() - self._start) * 1e3
            )

    def summary(self) -> GcReport:
        """Count and longest pause for each generation."""
        gen0, gen1, gen2 = (
            GcPauses(len(p), round(max(p, default=0.0), 3)) for p in self.pauses_ms.values()
        )
        return GcReport(gen0, gen1, gen2)


def settle_heap() -> None:
    """Collect once and freeze what survived loading, so later full collections stay short."""
    gc.collect()
    gc.freeze()
