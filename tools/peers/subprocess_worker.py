"""A prototype: the model's worker in a child process instead of a thread.

The alternative to the in-process worker thread when the GIL is the bottleneck. The
child process owns the ``Llama`` object (through the same ``LlamaBackend`` and lean
token loop the game uses) and has a GIL of its own, so nothing it runs in Python can
delay the game's main thread. Requests go down a pipe, and each finished line comes
back whole, with its token count and decode time. The main thread only polls the pipe.

Its costs, measured by ``tools/bench/busy.py`` (mode ``subprocess``): start-up (a
second interpreter and a second copy of the model's working memory), the pipe's
per-tick poll, and pickling each request and line. This is a benchmark prototype, not
part of the game: it has no scheduler, no cancellation and no streaming, and it is not
a :class:`~ai.line_runtime.LineRuntime` (it takes prompts and gives back plain text).
"""

from __future__ import annotations

import multiprocessing
import time
from typing import TYPE_CHECKING, TypeAlias

from ai import AiConfig, GenerationParams, LlamaBackend, PromptSpec

# What the child sends back: ("ready", "", 0, when) once, then ("line", text, pieces,
# decode seconds) per request. The parent sends a prompt per request, None to stop.
_Reply: TypeAlias = tuple[str, str, int, float]
if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    _ChildEnd: TypeAlias = Connection[_Reply, PromptSpec | None]
    _ParentEnd: TypeAlias = Connection[PromptSpec | None, _Reply]


def _serve(conn: _ChildEnd, config: AiConfig) -> None:
    """The child: load the model, then answer requests until told to stop."""
    backend = LlamaBackend(config)
    backend.load(lambda _fraction, _stage: None)
    params = GenerationParams.from_config(config.generation)
    conn.send(("ready", "", 0, time.perf_counter()))
    never = bool
    while (spec := conn.recv()) is not None:
        pieces: list[str] = []
        first = 0.0
        for piece in backend.generate(spec, params, never):
            first = first or time.perf_counter()
            pieces.append(piece)
        conn.send(("line", "".join(pieces), len(pieces), time.perf_counter() - first))
    backend.close()


class SubprocessWorker:
    """The main process's side: send requests, poll finished lines, never block."""

    def __init__(self, config: AiConfig) -> None:
        context = multiprocessing.get_context("spawn")
        parent: _ParentEnd
        child: _ChildEnd
        parent, child = context.Pipe()
        self._conn = parent
        started = time.perf_counter()
        self._process = context.Process(target=_serve, args=(child, config), daemon=True)
        self._process.start()
        kind = self._conn.recv()[0]  # blocks once, at start-up
        if kind != "ready":
            raise RuntimeError("the worker process failed to start")
        self.startup_s = time.perf_counter() - started
        self.outstanding = 0
        self.lines: list[tuple[int, float]] = []  # (decoded tokens, seconds)

    @property
    def pid(self) -> int | None:
        """The child's process id."""
        return self._process.pid

    def submit(self, spec: PromptSpec) -> None:
        """Send a request down the pipe."""
        self._conn.send(spec)
        self.outstanding += 1

    def poll(self) -> list[str]:
        """Finished lines, if any; never blocks."""
        out: list[str] = []
        conn = self._conn
        while conn.poll():
            _, text, tokens, seconds = conn.recv()
            self.outstanding -= 1
            if tokens > 1 and seconds > 0:
                self.lines.append((tokens - 1, seconds))
            out.append(text)
        return out

    def close(self) -> None:
        """Stop the child after its current line."""
        self._conn.send(None)
        self._process.join(10.0)
        if self._process.is_alive():
            self._process.kill()


def rss_mb(pid: int | None) -> float:
    """Resident memory of a process, in MB (Linux)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return 0.0


def prototype_report(worker: SubprocessWorker) -> dict[str, float]:
    """What the prototype costs beyond the thread design."""
    return {"startup_s": round(worker.startup_s, 2), "child_rss_mb": rss_mb(worker.pid)}
