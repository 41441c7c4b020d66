"""Benchmark: what llama.cpp's abort callback costs the game's tick and the model.

The same real-model village run, three ways, interleaved and repeated:

- ``none``: no abort callback (what llama-cpp-python does by default);
- ``native``: the game's switch, the C library's ``strlen`` on a one-byte flag;
- ``python``: a Python callback reading the same flag, which takes the GIL on every call.

First, on its own, the model's single-token decode time under each mode (interleaved),
and how many times llama.cpp calls the callback per token. Then a 60 Hz loop of real
pymunk work (tools/bench/runtime_alone.py's physics) beside a worker decoding back to back, the
modes interleaved in short blocks: the tick cost with nothing else in the way.

    python tools/bench/abort_callback.py --repeats 2 --ticks 900 --out bench/abort.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _ctypes import CFuncPtr

    from llama_cpp import Llama

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

from ai import abort  # noqa: E402
from game.app import run  # noqa: E402
from game.cli import Options  # noqa: E402
from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

MODES = ("none", "native", "python")
_ORIGINAL_INSTALL = abort.AbortSwitch.install


def _install_for(mode: str) -> Callable[..., None]:
    """A stand-in for ``AbortSwitch.install`` that installs the callback as ``mode`` says."""

    def install(
        self: abort.AbortSwitch,
        llama_cpp: ModuleType,
        ctx: object,
        native: bool = True,  # noqa: ARG001
    ) -> None:
        if mode == "none":
            return
        _ORIGINAL_INSTALL(self, llama_cpp, ctx, native=mode == "native")

    return install


def one_run(mode: str, ticks: int, scenario: str) -> dict[str, Any]:
    """One paced headless run with the abort callback installed as ``mode`` says."""
    abort.AbortSwitch.install = _install_for(mode)  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        options = Options(
            headless=True,
            ticks=ticks,
            scenario=scenario,
            ai_mode="async",
            report=report,
            log_level="WARNING",
        )
        if run(options) != 0:
            raise SystemExit(f"run failed in mode {mode}")
        data = json.loads(report.read_text())
    ai = data["ai"]
    return {
        "mode": mode,
        "tick_ms": data["tick_ms"],
        "overruns": data["overruns"],
        "tokens": ai["tokens"],
        "tokens_per_s_p50": ai["tokens_per_s"]["p50"],
        "completed": ai["completed"],
    }


def _load_llm() -> Llama:
    import llama_cpp

    from ai.config import ModelConfig
    from ai.model import resolve_model_path

    return llama_cpp.Llama(
        model_path=str(resolve_model_path(ModelConfig())),
        n_ctx=2048,
        n_batch=256,
        n_threads=1,
        n_threads_batch=1,
        swa_full=True,
        verbose=False,
    )


def _set_mode(llm: Llama, mode: str, switch: abort.AbortSwitch, python_callback: CFuncPtr) -> None:
    import ctypes

    import llama_cpp

    if mode == "none":
        llama_cpp.llama_set_abort_callback(llm.ctx, llama_cpp.ggml_abort_callback(), None)
    elif mode == "native":
        _ORIGINAL_INSTALL(switch, llama_cpp, llm.ctx, native=True)
    else:
        llama_cpp.llama_set_abort_callback(
            llm.ctx, python_callback, ctypes.cast(switch._flag, ctypes.c_void_p)
        )


def tick_cost(rounds: int, block_s: float) -> dict[str, Any]:
    """A 60 Hz loop of real pymunk work beside a worker decoding back to back.

    The worker switches the callback mode between blocks (only it touches the model);
    modes are interleaved in ``block_s`` blocks, ``rounds`` times.
    """
    import statistics
    import threading
    import time

    import llama_cpp

    from tools.bench.runtime_alone import Physics

    llm = _load_llm()
    switch = abort.AbortSwitch()

    def aborted(data: object) -> bool:
        del data
        return switch.is_set

    python_callback = llama_cpp.ggml_abort_callback(aborted)
    wanted = ["none"]
    applied = threading.Event()
    done = threading.Event()
    prompt = llm.tokenize(b"Lines spoken by villagers in a small village.")

    def decode_forever() -> None:
        current = ""
        while not done.is_set():
            if wanted[0] != current:
                current = wanted[0]
                _set_mode(llm, current, switch, python_callback)
                applied.set()
            llm.reset()
            llm.eval(prompt)
            for i in range(24):
                llm.eval([prompt[1 + i % (len(prompt) - 1)]])

    worker = threading.Thread(target=decode_forever)
    worker.start()
    physics = Physics()
    ticks: dict[str, list[float]] = {mode: [] for mode in MODES}
    try:
        for _ in range(rounds):
            for mode in MODES:
                applied.clear()
                wanted[0] = mode
                applied.wait(10.0)
                end = time.perf_counter() + block_s
                next_tick = time.perf_counter()
                while time.perf_counter() < end:
                    begin = time.perf_counter()
                    physics.step()
                    ticks[mode].append((time.perf_counter() - begin) * 1000.0)
                    next_tick += 1.0 / 60.0
                    time.sleep(max(0.0, next_tick - time.perf_counter()))
    finally:
        done.set()
        worker.join()
        llm.close()

    def pct(values: list[float], q: float) -> float:
        return round(sorted(values)[min(len(values) - 1, int(q * len(values)))], 4)

    return {
        mode: {
            "ticks": len(values),
            "p50_ms": round(statistics.median(values), 4),
            "p99_ms": pct(values, 0.99),
            "max_ms": round(max(values), 4),
        }
        for mode, values in ticks.items()
    }


def decode_speed(rounds: int, tokens: int) -> dict[str, Any]:
    """ms per single-token decode under each mode, interleaved; Python callback calls/token."""
    import ctypes
    import time

    import llama_cpp

    llm = _load_llm()
    switch = abort.AbortSwitch()
    calls = [0]

    def counted(data: object) -> bool:
        del data
        calls[0] += 1
        return switch.is_set

    python_callback = llama_cpp.ggml_abort_callback(counted)
    del ctypes
    ms: dict[str, list[float]] = {mode: [] for mode in MODES}
    calls_per_token = 0.0
    prompt = llm.tokenize(b"Lines spoken by villagers in a small village.")
    for _ in range(rounds):
        for mode in MODES:
            _set_mode(llm, mode, switch, python_callback)
            llm.reset()
            llm.eval(prompt)
            calls[0] = 0
            begin = time.perf_counter()
            for i in range(tokens):
                llm.eval([prompt[1 + i % (len(prompt) - 1)]])
            ms[mode].append((time.perf_counter() - begin) * 1000.0 / tokens)
            if mode == "python":
                calls_per_token = calls[0] / tokens
    llm.close()
    return {
        "ms_per_token": {mode: [round(v, 3) for v in values] for mode, values in ms.items()},
        "median_ms_per_token": {
            mode: round(sorted(values)[len(values) // 2], 3) for mode, values in ms.items()
        },
        "python_callback_calls_per_token": calls_per_token,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--ticks", type=int, default=900)
    parser.add_argument("--scenario", default="village")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "abort.json")
    parser.add_argument("--decode-rounds", type=int, default=5)
    parser.add_argument("--tick-rounds", type=int, default=4)
    parser.add_argument("--block-s", type=float, default=5.0)
    args = parser.parse_args()
    load_start = load_average()
    decode = decode_speed(args.decode_rounds, 64)
    print(json.dumps(decode))
    ticks = tick_cost(args.tick_rounds, args.block_s)
    print(json.dumps(ticks))
    runs = []
    for repeat in range(args.repeats):
        for mode in MODES:
            result = one_run(mode, args.ticks, args.scenario)
            result["repeat"] = repeat
            runs.append(result)
            print(json.dumps(result))
    ratios = []
    for repeat in range(args.repeats):
        by_mode = {r["mode"]: r for r in runs if r["repeat"] == repeat}
        base = by_mode["none"]
        ratios.append(
            {
                mode: {
                    "tick_p50": round(by_mode[mode]["tick_ms"]["p50"] / base["tick_ms"]["p50"], 3),
                    "tick_p99": round(by_mode[mode]["tick_ms"]["p99"] / base["tick_ms"]["p99"], 3),
                    "tokens_per_s": round(
                        by_mode[mode]["tokens_per_s_p50"] / max(base["tokens_per_s_p50"], 1e-9), 3
                    ),
                }
                for mode in ("native", "python")
            }
        )
    result = {
        "machine": machine_header(load_start, model=load_settings(CONFIG_DIR).ai.model),
        "decode": decode,
        "tick_beside_decoding": ticks,
        "runs": runs,
        "ratios_vs_none": ratios,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(ratios, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
