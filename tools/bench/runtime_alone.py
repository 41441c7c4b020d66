"""Benchmark: does the AI worker disturb a 60 Hz game loop?

Runs a fake main loop (about 2 ms per tick: a pymunk space of 300 bodies stepped and
read back, plus pure Python) with the AI idle and with the worker generating back to
back on the real model, in the same run. Idle and busy alternate in short blocks so
that machine noise (virtual CPUs, neighbours) hits both alike; a third "control" block
keeps the other core busy in C with the GIL released, which shows the slowdown the
machine itself causes.
The same prompts then go through plain llama-cpp-python for a tokens/s
baseline. Each ``sys.setswitchinterval`` value given is a separate run; the
first one is the headline. Writes everything as JSON.

    python tools/bench/runtime_alone.py --seconds 20 --out bench/bench_ai.json
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import statistics
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Imported before the timed model load, so the load time leaves the import out.
import llama_cpp  # noqa: E402, F401
import pymunk  # noqa: E402

from ai import (  # noqa: E402
    AiConfig,
    AiRuntime,
    GenerationConfig,
    LineCompleted,
    LineRequest,
    LlamaBackend,
    Priority,
    PromptSpec,
    RuntimeConfig,
    SchedulerConfig,
)
from ai.metrics import Percentiles, summarize  # noqa: E402
from ai.prompt import build_completion_prompt  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402
from tools.peers.plain_runtime import completion_stream, load_llama  # noqa: E402

TICK_S = 1.0 / 60.0
WORK_S = 0.002
PHYSICS_BODIES = 300

# Long, identical shared context: the KV cache keeps it between requests.
CONTEXT = (
    "Lines spoken by characters in a fantasy village game. Each line is short, "
    "in character, and reacts to what just happened.\n"
    'Farmer (it starts raining): "Good for the turnips, bad for my knees."\n'
    'Guard (a stranger arrives at night): "State your business, traveller."\n'
    'Miller (the wheel stops turning): "Blast this river, low again!"\n'
    'Baker (a child steals a bun): "Oi! Come back here, you little thief!"\n'
    'Innkeeper (a bard starts singing): "Not that song again, I beg you."\n'
)
SPEAKERS = ("Blacksmith", "Baker", "Guard", "Farmer", "Miller", "Innkeeper")
SITUATIONS = (
    "a crate falls next to him",
    "a dog steals his bread",
    "the forge fire goes out",
    "the player waves",
    "it starts to snow",
    "a cart loses a wheel",
    "the bell rings at midnight",
    "a goose chases the mayor",
)


class _Fallback:
    def fallback_line(self, request: LineRequest) -> str:
        return "..."


def prompt_spec(i: int) -> PromptSpec:
    """The i-th benchmark prompt: a shared few-shot context, then a speaker and situation."""
    return PromptSpec(
        context=CONTEXT,
        speaker=SPEAKERS[i % len(SPEAKERS)],
        situation=SITUATIONS[(i // len(SPEAKERS)) % len(SITUATIONS)],
    )


def _request(i: int, priority: Priority = Priority.REACTIVE) -> LineRequest:
    return LineRequest(
        npc_id=i % 50,
        priority=priority,
        signature=f"bench-{i}",
        prompt=prompt_spec(i),
        snapshot=i,
        deadline_s=5.0,
        timeout_s=10.0,
    )


class Physics:
    """A pymunk space with a few hundred bodies, read body by body like a game reads it.

    Every pymunk call releases the GIL and takes it back, which is what exposes the
    worker's Python time to the loop; a pure-Python tick never lets go of the GIL.
    """

    def __init__(self, bodies: int = PHYSICS_BODIES) -> None:
        self.space = pymunk.Space()
        self.space.gravity = (0.0, -900.0)
        floor = pymunk.Segment(self.space.static_body, (-50, 0), (1050, 0), 2.0)
        walls = [
            pymunk.Segment(self.space.static_body, (x, 0), (x, 2000), 2.0) for x in (-50, 1050)
        ]
        self.space.add(floor, *walls)
        self.bodies = []
        for i in range(bodies):
            body = pymunk.Body(1.0, pymunk.moment_for_circle(1.0, 0, 6))
            body.position = (10 + (i * 37) % 980, 20 + (i // 25) * 14)
            self.space.add(body, pymunk.Circle(body, 6))
            self.bodies.append(body)
        self.ticks = 0

    def step(self) -> float:
        """One tick: stir every second, step, and read every body back."""
        self.ticks += 1
        if self.ticks % 60 == 0:
            for i, body in enumerate(self.bodies):
                body.apply_impulse_at_local_point((((i * 7) % 13 - 6) * 40.0, 300.0))
        self.space.step(TICK_S)
        return sum(body.position.y for body in self.bodies)


def _calibrate_work(physics: Physics) -> int:
    """Loop count that, with one physics step, takes about WORK_S on this machine."""
    n = 20_000
    samples, steps = [], []
    for _ in range(7):
        begin = time.perf_counter()
        _work(n)
        samples.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        physics.step()
        steps.append(time.perf_counter() - begin)
    left = max(WORK_S * 0.25, WORK_S - statistics.median(steps))
    return max(1, int(n * left / statistics.median(samples)))


def _work(n: int) -> int:
    # Stand-in for a game tick's pure-Python work; holds the GIL throughout.
    total = 0
    for i in range(n):
        total += (i * 7) % 13
    return total


def _ms(p: Percentiles) -> dict[str, float]:
    return {**p.as_dict(1e3, 4), "count": p.count}


class _Loop:
    """A fixed 60 Hz loop whose tick and wake-up figures accumulate across blocks."""

    def __init__(self, runtime: AiRuntime, work_n: int, physics: Physics) -> None:
        self.runtime = runtime
        self.work_n = work_n
        self.physics = physics
        self.ticks: dict[str, list[float]] = {}
        self.late: dict[str, list[float]] = {}
        self.completed: list[LineCompleted] = []
        self.submitted = 0

    def run(self, label: str, seconds: float, busy: bool) -> None:
        """Run ``seconds`` of ticks, recording under ``label``."""
        runtime = self.runtime
        ticks = self.ticks.setdefault(label, [])
        late = self.late.setdefault(label, [])
        next_tick = time.perf_counter()
        end = next_tick + seconds
        tick = 0
        to_cancel = None
        while next_tick < end:
            begin = time.perf_counter()
            late.append(max(0.0, begin - next_tick))
            self.physics.step()
            _work(self.work_n)
            if busy:
                if to_cancel is not None:
                    runtime.cancel(to_cancel)
                    to_cancel = None
                # Keep one request waiting so the worker never idles.
                if runtime.queue_depth == 0:
                    runtime.submit(_request(self.submitted))
                    self.submitted += 1
                if tick % 60 == 30:
                    to_cancel = runtime.submit(_request(100_000 + self.submitted, Priority.AMBIENT))
                    self.submitted += 1
            for event in runtime.poll():
                if isinstance(event, LineCompleted):
                    self.completed.append(event)
            ticks.append(time.perf_counter() - begin)
            tick += 1
            next_tick += TICK_S
            delay = next_tick - time.perf_counter()
            if delay > 0:
                time.sleep(delay)

    def settle(self) -> None:
        """Let the worker go idle so the next block starts clean (not recorded)."""
        while self.runtime.in_flight or self.runtime.queue_depth:
            for event in self.runtime.poll():
                if isinstance(event, LineCompleted):
                    self.completed.append(event)
            time.sleep(0.002)


class _NativeBurner:
    """Control: a thread that keeps the other core busy in C with the GIL released.

    It shows how much of any slowdown comes from the machine (shared caches,
    virtual CPUs) rather than from Python-level contention.
    """

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._burn, daemon=True)

    def _burn(self) -> None:
        data = b"x" * (8 << 20)
        while not self._stop.is_set():
            hashlib.sha256(data).digest()  # releases the GIL for large buffers

    def __enter__(self) -> _NativeBurner:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _runtime_phase(config: AiConfig) -> tuple[AiRuntime, float]:
    runtime = AiRuntime(config, LlamaBackend(config), _Fallback())
    begin = time.perf_counter()
    runtime.start()
    while runtime.load_progress().state == "loading":
        time.sleep(0.01)
    progress = runtime.load_progress()
    if progress.state != "ready":
        raise SystemExit(f"model failed to load: {progress.error}")
    load_s = time.perf_counter() - begin
    # Fill the KV cache with the shared prefix once, as a game would at load.
    runtime.wait(runtime.submit(_request(-1)), timeout_s=10.0)
    return runtime, load_s


def _decode_rate(lines: list[LineCompleted]) -> float:
    tokens = sum(max(0, line.stats.tokens - 1) for line in lines)
    seconds = sum(
        (line.stats.tokens - 1) / line.stats.tokens_per_s
        for line in lines
        if line.stats.tokens > 1 and line.stats.tokens_per_s > 0
    )
    return tokens / seconds if seconds else 0.0


def _plain_llama(config: AiConfig, model_path: str, count: int) -> dict[str, Any]:
    """The same prompts through llama-cpp-python directly, on this thread."""
    gen = config.generation
    llm = load_llama(replace(config.model, model_path=model_path))
    prompt_tokens = len(llm.tokenize(build_completion_prompt(prompt_spec(0), "").encode()))
    prefix_tokens = len(llm.tokenize(CONTEXT.encode()))
    tokens = 0
    decode_s = 0.0
    ttfts: list[float] = []
    for i in range(count + 1):
        begin = time.perf_counter()
        first = None
        n = 0
        for chunk in completion_stream(llm, build_completion_prompt(prompt_spec(i), ""), gen, i):
            if chunk["choices"][0]["text"]:
                n += 1
                if first is None:
                    first = time.perf_counter()
        end = time.perf_counter()
        if i == 0 or first is None:
            continue  # the first call fills the KV cache with the shared prefix
        ttfts.append(first - begin)
        if n > 1:
            tokens += n - 1
            decode_s += end - first
    llm.close()
    return {
        "tokens_per_s": tokens / decode_s if decode_s else 0.0,
        "ttft_ms": _ms(summarize(ttfts)),
        "requests": count,
        "prompt_tokens": prompt_tokens,
        "shared_prefix_tokens": prefix_tokens,
    }


def _condition(
    config: AiConfig,
    interval: float,
    seconds: float,
    block_s: float,
    work_n: int,
    physics: Physics,
) -> tuple[dict[str, Any], float]:
    """Interleaved idle / busy / control blocks at one switch interval."""
    # The runtime applies its configured switch interval on start.
    config = replace(config, runtime=RuntimeConfig(switch_interval_s=interval))
    runtime, load_s = _runtime_phase(config)
    gc.collect()
    gc.freeze()
    loop = _Loop(runtime, work_n, physics)
    blocks = max(1, round(seconds / 2 / block_s))
    for _ in range(blocks):
        loop.run("idle", block_s, busy=False)
        loop.run("busy", block_s, busy=True)
        loop.settle()
        with _NativeBurner():
            loop.run("control", block_s, busy=False)
    metrics = runtime.metrics()
    runtime.shutdown()
    gc.unfreeze()
    lines = loop.completed
    idle_p99 = summarize(loop.ticks["idle"]).p99
    busy_p99 = summarize(loop.ticks["busy"]).p99
    control_p99 = summarize(loop.ticks["control"]).p99
    result = {
        "switch_interval_s": interval,
        "tick_ms": {label: _ms(summarize(values)) for label, values in loop.ticks.items()},
        "tick_p99_ratio": {
            "busy_over_idle": round(busy_p99 / idle_p99, 3),
            "control_over_idle": round(control_p99 / idle_p99, 3),
            # What the AI costs beyond what any busy second core costs here.
            "busy_over_control": round(busy_p99 / control_p99, 3),
        },
        "wake_late_ms": {label: _ms(summarize(values)) for label, values in loop.late.items()},
        "api_call_ms": {
            "all": _ms(metrics.api_call_s),
            "submit": _ms(metrics.submit_call_s),
            "poll": _ms(metrics.poll_call_s),
            "cancel": _ms(metrics.cancel_call_s),
        },
        "ttft_ms": _ms(summarize(line.stats.ttft_s for line in lines)),
        "queue_wait_ms": _ms(summarize(line.stats.queue_wait_s for line in lines)),
        "tokens_per_s": round(_decode_rate(lines), 2),
        "lines_completed": len(lines),
        "cancelled": metrics.cancelled,
        "fallbacks": dict(metrics.fallbacks),
        "sample_lines": [line.text for line in lines[:5]],
    }
    return result, load_s


def main() -> int:
    """Run the benchmark and write the JSON report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="idle + busy time per run")
    parser.add_argument("--block-seconds", type=float, default=1.0, help="interleaving block")
    parser.add_argument("--out", default="bench/bench_ai.json")
    parser.add_argument(
        "--switch-intervals",
        default="0.001,0.005",
        help="sys.setswitchinterval values to run, comma separated; the first is the headline",
    )
    parser.add_argument("--threads", type=int, default=1, help="llama n_threads(_batch)")
    args = parser.parse_args()
    load_start = load_average()

    base = AiConfig()
    config = replace(
        base,
        model=replace(base.model, n_threads=args.threads, n_threads_batch=args.threads),
        scheduler=SchedulerConfig(rate_limit_s=0.0),
        generation=GenerationConfig(),
    )
    default_interval = sys.getswitchinterval()
    physics = Physics()
    work_n = _calibrate_work(physics)
    runs = []
    load_s = 0.0
    for text in filter(None, args.switch_intervals.split(",")):
        result, load_s = _condition(
            config, float(text), args.seconds, args.block_seconds, work_n, physics
        )
        runs.append(result)

    from ai.model import resolve_model_path

    path = str(resolve_model_path(config.model))
    head = runs[0]
    plain = _plain_llama(config, path, count=max(10, min(40, head["lines_completed"])))
    tps_ratio = head["tokens_per_s"] / plain["tokens_per_s"] if plain["tokens_per_s"] else 0.0
    ratio = head["tick_p99_ratio"]["busy_over_idle"]
    api_p99 = head["api_call_ms"]["all"]["p99"]
    report = {
        "machine": machine_header(load_start, model=config.model),
        "settings": {
            "seconds_idle_and_busy_per_run": args.seconds,
            "block_seconds": args.block_seconds,
            "tick_hz": 60,
            "work_ms_per_tick": WORK_S * 1e3,
            "physics_bodies_per_tick": PHYSICS_BODIES,
            "n_threads": args.threads,
            "n_threads_batch": args.threads,
            "headline_switch_interval_s": head["switch_interval_s"],
            "python_default_switch_interval_s": default_interval,
            "gc_frozen_after_load": True,
            "model_path": path,
            "model_load_s": round(load_s, 3),
        },
        "prompt": {
            "prompt_tokens": plain["prompt_tokens"],
            "shared_prefix_tokens": plain["shared_prefix_tokens"],
        },
        "tick_ms": head["tick_ms"],
        "tick_p99_ratio": head["tick_p99_ratio"],
        "wake_late_ms": head["wake_late_ms"],
        "api_call_ms": head["api_call_ms"],
        "ttft_ms_runtime_cached_prefix": head["ttft_ms"],
        "ttft_ms_plain_cached_prefix": plain["ttft_ms"],
        "tokens_per_s": {
            "runtime": head["tokens_per_s"],
            "plain_llama_cpp": round(plain["tokens_per_s"], 2),
            "ratio": round(tps_ratio, 3),
        },
        "busy": {
            key: head[key] for key in ("lines_completed", "cancelled", "fallbacks", "queue_wait_ms")
        },
        "sample_lines": head["sample_lines"],
        "switch_interval_runs": runs,
        "targets": {
            "tick_p99_busy_over_idle_le_1.15": ratio <= 1.15,
            "api_call_p99_le_0.2ms": api_p99 <= 0.2,
            "tokens_per_s_ratio_ge_0.9": tps_ratio >= 0.9,
            "ttft_p50_le_100ms": head["ttft_ms"]["p50"] <= 100.0,
        },
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
