"""Benchmark: the real village at 60 Hz beside a model that generates back to back.

One process steps the village (AI off, so the world's own work stays the same, the
scripted bot playing) at a paced 60 Hz, while a generator beside it keeps the model busy
the whole time. Modes run in interleaved blocks, so machine noise hits them alike:

- ``off``: nothing beside the loop;
- ``plain``: the textbook design, the simplest peer: a ``queue.Queue``, one worker
  thread calling ``Llama.create_completion(stream=True)`` back to back, and a callback
  that posts each piece to a task queue the main thread drains every tick;
- ``runtime``: the project's ``AiRuntime`` with ``LlamaBackend``, lines arriving whole
  (a bark); ``runtime-stream`` asks for a token event per token (a chat reply);
- ``runtime@X``: ``runtime`` with ``sys.setswitchinterval(X)``, for each X given in
  ``--switch-intervals``, so switch intervals are compared within one run;
- ``subprocess``: the prototype alternative, the same backend in a child process
  (``tools/peers/subprocess_worker.py``), lines coming back whole through a pipe.

The switch interval is process-wide, so it is set at the start of every block: Python's
default for ``off``, ``plain`` and ``subprocess`` (the textbook design does not touch
it), the runtime's configured value for ``runtime`` and ``runtime-stream``. The tick
time is ``village.step`` plus the generator's calls at that tick. ``--load N`` keeps N
busy-loop processes running beside it, for the loaded condition. Records the load
average before and after. Writes JSON.

    python tools/bench/busy.py --blocks 12 --out bench/busy.json
    python tools/bench/busy.py --blocks 12 --load 2 --out bench/busy_loaded.json
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Only for the types: ai/ is imported in main(), from the tree --ai-from names.
    from llama_cpp import Llama
    from llama_cpp.llama_types import CreateCompletionStreamResponse

    from ai import AiConfig, AiRuntime, GenerationConfig, LineRequest, PromptSpec
    from tools.peers.subprocess_worker import SubprocessWorker

ROOT = Path(__file__).resolve().parents[2]

TICK_S = 1.0 / 60.0
MODES = ("off", "plain", "runtime", "runtime-stream", "subprocess")


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        return {"count": 0}

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e3, 4)

    return {"p50": at(0.50), "p99": at(0.99), "max": at(1.0), "count": len(ordered)}


class _Plain:
    """The simplest peer: a worker thread, a request queue and a task queue."""

    def __init__(
        self,
        llm: Llama,
        gen: GenerationConfig,
        complete: Callable[
            [Llama, str, GenerationConfig, int], Iterator[CreateCompletionStreamResponse]
        ],
    ) -> None:
        self.requests: queue.Queue[str | None] = queue.Queue()
        self.tasks: queue.Queue[str | None] = queue.Queue()
        self.busy = False
        self.lines: list[tuple[int, float]] = []  # (decoded tokens, seconds)
        self._llm, self._gen, self._complete = llm, gen, complete
        self._seed = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        llm, gen = self._llm, self._gen
        while (prompt := self.requests.get()) is not None:
            self.busy = True
            self._seed += 1
            prompt_tokens = len(llm.tokenize(prompt.encode()))
            first = end = 0.0
            for chunk in self._complete(llm, prompt, gen, self._seed):
                first = first or time.perf_counter()
                self.tasks.put(chunk["choices"][0]["text"])  # the callback
            end = time.perf_counter()
            decoded = llm.n_tokens - prompt_tokens  # tokens sampled and fed back
            if first and decoded > 0:
                self.lines.append((decoded, end - first))
            self.tasks.put(None)
            self.busy = False

    @property
    def native_id(self) -> int | None:
        """The worker thread's id in the kernel."""
        return self._thread.native_id

    def tick(self, busy: bool, prompt: str) -> None:
        """Drain the task queue; keep one request waiting while busy."""
        tasks = self.tasks
        while True:
            try:
                tasks.get_nowait()
            except queue.Empty:
                break
        if busy and self.requests.empty():
            self.requests.put(prompt)

    def idle(self) -> bool:
        """True once the worker has nothing running or queued."""
        return not self.busy and self.requests.empty()

    def close(self) -> None:
        """Stop the worker after its current line."""
        self.requests.put(None)
        self._thread.join(10.0)


class _Runtime:
    """The project's runtime, generating back to back."""

    def __init__(self, ai: ModuleType, config: AiConfig, stream: bool) -> None:
        self._ai = ai
        self.runtime: AiRuntime = ai.AiRuntime(config, ai.LlamaBackend(config), _Fallback())
        self.runtime.start()
        while self.runtime.load_progress().state == "loading":
            time.sleep(0.01)
        if self.runtime.load_progress().state != "ready":
            raise SystemExit(f"model failed to load: {self.runtime.load_progress().error}")
        self._stream = stream
        self._streams = any(f.name == "stream" for f in dataclasses.fields(ai.LineRequest))
        self._count = 0
        self.lines: list[tuple[int, float]] = []

    def request(self, prompt_spec: PromptSpec, stream: bool) -> LineRequest:
        """A back-to-back request; ``stream`` where this version of the runtime has it."""
        self._count += 1
        extra = {"stream": stream} if self._streams else {}
        request: LineRequest = self._ai.LineRequest(
            npc_id=self._count % 50,
            priority=self._ai.Priority.REACTIVE,
            signature=f"busy-{self._count}",
            prompt=prompt_spec,
            snapshot=None,
            deadline_s=10.0,
            timeout_s=20.0,
            **extra,
        )
        return request

    def tick(self, busy: bool, prompt_spec: PromptSpec | None, stream: bool) -> None:
        """Poll; keep one request waiting while busy."""
        runtime = self.runtime
        if busy and prompt_spec is not None and runtime.queue_depth == 0:
            runtime.submit(self.request(prompt_spec, stream))
        for event in runtime.poll():
            if isinstance(event, self._ai.LineCompleted) and event.stats.tokens_per_s > 0:
                decoded = event.stats.tokens - 1
                self.lines.append((decoded, decoded / event.stats.tokens_per_s))

    def idle(self) -> bool:
        """True once nothing is running or queued."""
        return self.runtime.in_flight == 0 and self.runtime.queue_depth == 0


class _Fallback:
    def fallback_line(self, request: LineRequest) -> str:
        return "..."


def _switches(tid: int | None) -> tuple[int, int]:
    """A thread's voluntary and involuntary context switches so far (Linux).

    A thread that blocks waiting for the GIL sleeps in the kernel: one voluntary
    switch per wait. So a generating worker's voluntary switches count the times it
    had to wait for the GIL, and the main thread's, beyond its one sleep per tick,
    the times it did.
    """
    counts = {"voluntary_ctxt_switches": 0, "nonvoluntary_ctxt_switches": 0}
    if tid is not None:
        try:
            with open(f"/proc/{tid}/task/{tid}/status", encoding="ascii") as status:
                for line in status:
                    key, _, value = line.partition(":")
                    if key in counts:
                        counts[key] = int(value)
        except OSError:
            pass
    return counts["voluntary_ctxt_switches"], counts["nonvoluntary_ctxt_switches"]


def _per(count: int, over: int) -> float | None:
    return round(count / over, 3) if over else None


def _rate(lines: list[tuple[int, float]]) -> float:
    seconds = sum(s for _, s in lines)
    return round(sum(n for n, _ in lines) / seconds, 2) if seconds else 0.0


def _busy_loads(count: int) -> list[subprocess.Popen[bytes]]:
    code = "while True: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]


def main() -> int:
    """Run the interleaved blocks and write the JSON report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scenario", default="village")
    parser.add_argument("--blocks", type=int, default=12, help="blocks per mode")
    parser.add_argument("--block-seconds", type=float, default=2.0)
    parser.add_argument("--modes", default="off,plain,runtime,runtime-stream,subprocess")
    parser.add_argument("--load", type=int, default=0, help="busy-loop processes beside it")
    parser.add_argument(
        "--switch-interval",
        type=float,
        default=None,
        help="runtime.switch_interval_s (default: as config/ai.toml says)",
    )
    parser.add_argument(
        "--switch-intervals",
        default="",
        help="extra runtime modes at these sys.setswitchinterval values (s), comma separated",
    )
    parser.add_argument("--ai-from", type=Path, default=None, help="import ai/ from this tree")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "busy.json")
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"unknown modes {unknown}; choose from {', '.join(MODES)}")
    try:
        extra = [float(x) for x in args.switch_intervals.split(",") if x]
    except ValueError:
        parser.error(f"--switch-intervals takes seconds, comma separated: {args.switch_intervals}")
    if any(not 1e-5 <= x <= 0.1 for x in extra):
        parser.error("--switch-intervals values must be in 1e-5..0.1 seconds")
    modes += [f"runtime@{x:g}" for x in extra]
    python_interval = sys.getswitchinterval()  # before the runtime sets its own

    sys.path.insert(0, str(ROOT))
    if args.ai_from is not None:
        sys.path.insert(0, str(args.ai_from.resolve()))
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    import ai
    from ai.prompt import build_completion_prompt
    from game.app import build_village
    from game.config.settings import CONFIG_DIR, load_settings
    from game.core.gcwatch import settle_heap
    from game.input.bot import Bot
    from tools.bench.machine import load_average, machine_header
    from tools.bench.runtime_alone import prompt_spec
    from tools.peers.plain_runtime import completion_stream, load_llama
    from tools.peers.subprocess_worker import SubprocessWorker, prototype_report, rss_mb

    settings = load_settings(
        CONFIG_DIR, ('game.dialogue.ai_mode="off"', f'game.headless.scenario="{args.scenario}"')
    )
    config = dataclasses.replace(
        settings.ai, scheduler=dataclasses.replace(settings.ai.scheduler, rate_limit_s=0.0)
    )
    if args.switch_interval is not None:
        config = dataclasses.replace(
            config, runtime=ai.RuntimeConfig(switch_interval_s=args.switch_interval)
        )
    model = config.model
    llm = load_llama(model)
    plain = _Plain(llm, config.generation, completion_stream) if "plain" in modes else None
    runtime = (
        _Runtime(ai, config, stream=False) if any(m.startswith("runtime") for m in modes) else None
    )
    child = SubprocessWorker(config) if "subprocess" in modes else None

    def interval(mode: str) -> float:
        if mode.startswith("runtime@"):
            return float(mode.partition("@")[2])
        if mode.startswith("runtime") and config.runtime.switch_interval_s > 0:
            return config.runtime.switch_interval_s
        return python_interval

    village = build_village(settings)
    world = village.world
    bot = Bot(
        settings.game.headless.scenario,
        seed=settings.game.world.seed,
        level=world.level_view(),
        talk_radius=world.talk_radius,
    )
    generators: list[_Plain | _Runtime | SubprocessWorker] = [
        g for g in (plain, runtime, child) if g is not None
    ]
    main_tid = threading.get_native_id()

    def worker_tid(mode: str) -> int | None:
        if mode == "plain" and plain is not None:
            return plain.native_id
        if mode.startswith("runtime") and runtime is not None:
            return runtime.runtime._worker.thread.native_id
        if mode == "subprocess" and child is not None:
            return child.pid  # the child's main thread generates
        return None

    # mode -> [main voluntary, main involuntary, ticks, worker voluntary, worker involuntary]
    switches: dict[str, list[int]] = {m: [0, 0, 0, 0, 0] for m in modes}
    mode_lines: dict[str, list[tuple[int, float]]] = {m: [] for m in modes}
    loads = _busy_loads(args.load)
    ticks: dict[str, list[float]] = {m: [] for m in modes}
    calls: dict[str, list[float]] = {m: [] for m in modes}
    load_before = load_average()
    settle_heap()
    started = time.perf_counter()
    count = 0
    try:
        for _ in range(args.blocks):
            for mode in modes:
                record, call_record = ticks[mode], calls[mode]
                sys.setswitchinterval(interval(mode))
                lines_before = [len(g.lines) for g in generators]
                tid = worker_tid(mode)
                main_before, worker_before = _switches(main_tid), _switches(tid)
                ticks_before = len(record)
                next_tick = time.perf_counter()
                end = next_tick + args.block_seconds
                while next_tick < end:
                    count += 1
                    spec = prompt_spec(count)
                    begin = time.perf_counter()
                    village.step(bot.intent(world.snapshot()))
                    ai_begin = time.perf_counter()
                    if mode == "plain" and plain is not None:
                        plain.tick(True, build_completion_prompt(spec, ""))
                    elif mode.startswith("runtime") and runtime is not None:
                        runtime.tick(True, spec, stream=mode == "runtime-stream")
                    elif mode == "subprocess" and child is not None:
                        child.poll()
                        if child.outstanding < 2:  # one running, one waiting
                            child.submit(spec)
                    done = time.perf_counter()
                    record.append(done - begin)
                    if mode != "off":
                        call_record.append(done - ai_begin)
                    next_tick += TICK_S
                    delay = next_tick - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                main_after = _switches(main_tid)
                # Let the generator finish its line before the next mode (not recorded).
                while not (
                    (plain is None or plain.idle())
                    and (runtime is None or runtime.idle())
                    and (child is None or child.outstanding == 0)
                ):
                    if plain is not None:
                        plain.tick(False, "")
                    if runtime is not None:
                        runtime.tick(False, None, stream=False)
                    if child is not None:
                        child.poll()
                    time.sleep(0.005)
                for g, before in zip(generators, lines_before, strict=True):
                    mode_lines[mode] += g.lines[before:]
                worker_after = _switches(tid)
                counts = switches[mode]
                counts[0] += main_after[0] - main_before[0]
                counts[1] += main_after[1] - main_before[1]
                counts[2] += len(record) - ticks_before
                counts[3] += worker_after[0] - worker_before[0]
                counts[4] += worker_after[1] - worker_before[1]
    finally:
        load_after = load_average()
        for process in loads:
            process.terminate()
            process.wait()
        if plain is not None:
            plain.close()
        if runtime is not None:
            runtime.runtime.shutdown()
        prototype = prototype_report(child) if child is not None else None
        if child is not None:
            child.close()
        sys.setswitchinterval(python_interval)
    tick_ms = {m: _percentiles(v) for m, v in ticks.items()}
    off_p99 = tick_ms.get("off", {}).get("p99")
    rates = {m: _rate(lines) for m, lines in mode_lines.items() if m != "off"}
    report = {
        "machine": machine_header(load_before, model=model, load_at_end=load_after),
        "settings": {
            "scenario": args.scenario,
            "blocks_per_mode": args.blocks,
            "block_seconds": args.block_seconds,
            "modes": modes,
            "background_busy_processes": args.load,
            "switch_interval_s": {m: interval(m) for m in modes},
            "ai_from": str(args.ai_from) if args.ai_from else "this tree",
            "n_threads": model.n_threads,
        },
        "wall_s": round(time.perf_counter() - started, 1),
        "tick_ms": tick_ms,
        "tick_p99_over_off": {
            m: round(t["p99"] / off_p99, 3) for m, t in tick_ms.items() if off_p99 and t.get("p99")
        },
        "ai_call_ms": {m: _percentiles(v) for m, v in calls.items() if v},
        "tokens_per_s": rates,
        "context_switches": {
            m: {
                "main_voluntary_per_tick": _per(c[0], c[2]),
                "main_involuntary_per_tick": _per(c[1], c[2]),
                "worker_voluntary_per_token": _per(c[3], sum(n for n, _ in mode_lines[m])),
                "worker_involuntary_per_token": _per(c[4], sum(n for n, _ in mode_lines[m])),
            }
            for m, c in switches.items()
        },
        "lines": {m: len(lines) for m, lines in mode_lines.items() if m != "off"},
        "tokens": {m: sum(n for n, _ in lines) for m, lines in mode_lines.items() if m != "off"},
        "subprocess_prototype": prototype and {**prototype, "game_rss_mb": rss_mb(os.getpid())},
    }
    gc.collect()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("tick_p99_over_off", "tokens_per_s")}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
