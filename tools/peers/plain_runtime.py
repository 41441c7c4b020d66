"""The textbook peer of the game's model runtime, for the benchmarks.

``PlainRuntime`` is the simplest design a new user would write: a ``queue.Queue`` of
requests, one worker thread calling ``Llama.create_completion(stream=True)``, and a
callback that posts each piece to a task queue the main thread drains every tick. No
scheduler, no priorities, no preemption, no prefix matching of its own, no tiers,
Python's default switch interval, and one line per request: a request's candidate plan
(several drafts, scored) is the runtime's own and is not followed here. It is a
:class:`~ai.line_runtime.LineRuntime`, the calls the game makes on the ``Router``
(submit, warm, poll, cancel, wait, status, metrics, tiers), so the village runs on it
unchanged through ``game.app.run(options, runtime_factory=plain_runtime)``.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeAlias

from ai import (
    AiConfig,
    AiEvent,
    AiMetrics,
    Backend,
    FallbackSource,
    FallbackUsed,
    GenerationConfig,
    GenerationParams,
    Handle,
    LineCompleted,
    LineFailed,
    LineRequest,
    LineRuntime,
    LoadProgress,
    ModelConfig,
    Priority,
    RequestCancelled,
    RequestStarted,
    RequestStats,
    RequestTimedOut,
    TierStats,
    TokenStreamed,
)
from ai.content import ContentFilter
from ai.fallback import safe_fallback_line
from ai.hygiene import clean_line, clean_partial, is_garbage
from ai.line_runtime import poll_until
from ai.load_checks import Probe
from ai.metrics import MetricsRecorder
from ai.model import resolve_model_path
from ai.prompt import build_completion_prompt

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_types import CreateCompletionStreamResponse

logger = logging.getLogger(__name__)

_START, _PIECE, _END, _ERROR = range(4)
# What the worker posts: (kind, handle, piece of text, decoded tokens, when).
_Task: TypeAlias = tuple[int, Handle, str, int, float]


@dataclass(slots=True)
class _Live:
    """Main-thread bookkeeping of one request not yet answered."""

    request: LineRequest
    submitted_at: float
    started_at: float = 0.0
    first_at: float = 0.0
    raw: str = ""


def load_llama(model: ModelConfig) -> Llama:
    """A ``Llama`` as the settings ask, the way a plain llama-cpp-python user loads it."""
    from llama_cpp import Llama

    return Llama(
        model_path=str(resolve_model_path(model)),
        n_ctx=model.n_ctx,
        n_batch=model.n_batch,
        n_threads=model.n_threads,
        n_threads_batch=model.n_threads_batch,
        swa_full=model.swa_full,
        verbose=False,
    )


def completion_stream(
    llm: Llama, prompt: str, sampling: GenerationParams | GenerationConfig, seed: int
) -> Generator[CreateCompletionStreamResponse, None, None]:
    """``Llama.create_completion(stream=True)`` with the game's sampling and stop strings.

    Closing the generator ends the decode.
    """
    stream = llm.create_completion(
        prompt,
        stream=True,
        stop=list(sampling.stop),
        max_tokens=sampling.max_tokens,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        top_k=sampling.top_k,
        min_p=sampling.min_p,
        repeat_penalty=sampling.repeat_penalty,
        seed=seed,
    )
    if not isinstance(stream, Generator):
        raise TypeError("create_completion(stream=True) gave no generator")
    return stream


class PlainRuntime:
    """A queue, one worker thread on ``create_completion(stream=True)``, a task queue.

    ``backend`` is accepted to match ``AiRuntime``'s constructor and not used: the
    textbook worker owns a ``Llama`` of its own, loaded on its thread.
    """

    def __init__(
        self,
        config: AiConfig,
        backend: Backend | None = None,
        fallback: FallbackSource | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._config = config
        self._fallback = fallback
        self._clock = clock
        self._params = GenerationParams.from_config(config.generation)
        self._requests: queue.Queue[tuple[Handle, LineRequest] | None] = queue.Queue()
        self._tasks: queue.Queue[_Task] = queue.Queue()
        self._cancelled: set[int] = set()  # handle ids; the worker only reads it
        self._live: dict[int, _Live] = {}
        self._pending: list[AiEvent] = []  # answers made on the main thread (cancels)
        self._warming: set[int] = set()  # requests whose answers nobody wants
        self._metrics = MetricsRecorder()
        self._progress = LoadProgress(0.0, "waiting to start", "loading")
        self._running: Handle | None = None
        self._next_id = 1
        self._rng = random.Random(None if config.generation.seed < 0 else config.generation.seed)
        self._thread = threading.Thread(target=self._run, name="plain-worker", daemon=True)

    # -- the worker thread -----------------------------------------------------

    def start(self, probes: Sequence[Probe] = ()) -> None:
        """Start the worker, which loads the model first (the peer checks no ``probes``)."""
        del probes
        self._thread.start()

    def _run(self) -> None:
        try:
            llm = load_llama(self._config.model)
        except Exception as exc:
            logger.error("plain worker: model failed to load: %s", exc)
            self._progress = LoadProgress(0.0, "model unavailable", "degraded", str(exc))
            return
        self._progress = LoadProgress(1.0, "ready", "ready")
        while (item := self._requests.get()) is not None:
            handle, request = item
            if handle.id in self._cancelled:
                continue
            self._running = handle
            try:
                self._generate(llm, handle, request)
            except Exception as exc:
                logger.warning("plain worker: generation failed: %r", exc)
                self._tasks.put((_ERROR, handle, "", 0, time.perf_counter()))
            self._running = None
        llm.close()

    def _generate(self, llm: Llama, handle: Handle, request: LineRequest) -> None:
        params = self._params
        if request.max_tokens is not None:
            params = replace(params, max_tokens=max(1, request.max_tokens))
        prompt = build_completion_prompt(request.prompt, request.prompt.player_text)
        prompt_tokens = len(llm.tokenize(prompt.encode("utf-8")))  # to count decoded tokens
        post = self._tasks.put
        post((_START, handle, "", 0, time.perf_counter()))
        stream = completion_stream(llm, prompt, params, self._rng.randrange(2**31))
        for chunk in stream:
            post((_PIECE, handle, chunk["choices"][0]["text"], 0, time.perf_counter()))  # callback
            if handle.id in self._cancelled:
                break
        stream.close()
        post((_END, handle, "", max(0, llm.n_tokens - prompt_tokens), time.perf_counter()))

    # -- the main thread ---------------------------------------------------------

    def submit(self, request: LineRequest) -> Handle:
        """Queue the request; never blocks."""
        begin = time.perf_counter()
        handle = Handle(self._next_id)
        self._next_id += 1
        self._metrics.record_submit(request.priority)
        # The opener is the end of the prompt, so the line starts with it.
        self._live[handle.id] = _Live(request, self._clock(), raw=request.prompt.opener)
        self._requests.put((handle, request))
        self._metrics.submit_calls.append(time.perf_counter() - begin)
        return handle

    def warm(self, request: LineRequest) -> None:
        """Run ``request`` for the model's cache only; its events are dropped."""
        self._warming.add(self.submit(request).id)

    def prefill(self, request: LineRequest) -> None:
        """The textbook design reads no prompt ahead: nothing to do."""
        del request

    @property
    def warming(self) -> bool:
        """Whether a warm-up has not ended yet."""
        return any(handle_id in self._live for handle_id in self._warming)

    def promote(self, handle: Handle, priority: Priority, value: float) -> bool:
        """The textbook design runs requests in the order they came: nothing to raise.
        True if the request is still live."""
        del priority, value
        return handle.id in self._live

    def cancel(self, handle: Handle) -> bool:
        """Stop the request at its next piece, or skip it if it has not started."""
        begin = time.perf_counter()
        live = self._live.pop(handle.id, None)
        if live is not None:
            self._cancelled.add(handle.id)
            self._metrics.cancelled += 1
            self._pending.append(RequestCancelled(handle, live.request, "cancelled"))
        self._metrics.cancel_calls.append(time.perf_counter() - begin)
        return live is not None

    def poll(self) -> list[AiEvent]:
        """Drain the task queue; turn pieces into events; answer timed-out requests."""
        begin = time.perf_counter()
        out, self._pending = self._pending, []
        tasks = self._tasks
        while True:
            try:
                kind, handle, piece, tokens, at = tasks.get_nowait()
            except queue.Empty:
                break
            live = self._live.get(handle.id)
            if live is None:
                continue
            if kind == _START:
                self._metrics.started += 1
                live.started_at = at
                out.append(RequestStarted(handle, live.request))
            elif kind == _PIECE:
                if not live.first_at:
                    live.first_at = at
                live.raw += piece
                if live.request.stream:
                    partial = clean_partial(live.raw, self._config.hygiene.max_chars)
                    out.append(TokenStreamed(handle, live.request, partial, piece))
            else:
                del self._live[handle.id]
                self._finish(handle, live, kind, tokens, at, out)
        self._expire(out)
        if self._warming:
            out = [e for e in out if e.handle.id not in self._warming]
        self._metrics.poll_calls.append(time.perf_counter() - begin)
        return out

    def _finish(
        self, handle: Handle, live: _Live, kind: int, tokens: int, at: float, out: list[AiEvent]
    ) -> None:
        request = live.request
        text = clean_line(live.raw, self._config.hygiene) if kind == _END else ""
        if kind == _END and not is_garbage(text, self._config.hygiene.min_letters):
            started, first = live.started_at or at, live.first_at or at
            stats = RequestStats(
                queue_wait_s=started - live.submitted_at,
                ttft_s=first - started,
                tokens=tokens,
                tokens_per_s=(tokens - 1) / (at - first) if tokens > 1 and at > first else 0.0,
                total_s=at - live.submitted_at,
            )
            self._metrics.record_completed(stats)
            out.append(LineCompleted(handle, request, text, stats))
            return
        reason = "error" if kind == _ERROR else "garbage"
        self._metrics.failed[reason] += 1
        out.append(LineFailed(handle, request, reason))
        self._fall_back(handle, request, reason, out)

    def _expire(self, out: list[AiEvent]) -> None:
        now = self._clock()
        late = [
            h for h, live in self._live.items() if now - live.submitted_at > live.request.timeout_s
        ]
        for handle_id in late:
            live = self._live.pop(handle_id)
            handle = Handle(handle_id)
            self._cancelled.add(handle_id)
            self._metrics.timed_out += 1
            out.append(RequestTimedOut(handle, live.request))
            self._fall_back(handle, live.request, "timeout", out)

    def _fall_back(
        self, handle: Handle, request: LineRequest, reason: str, out: list[AiEvent]
    ) -> None:
        self._metrics.fallbacks[reason] += 1
        text = safe_fallback_line(self._fallback, request) if self._fallback else "..."
        out.append(FallbackUsed(handle, request, text, reason))

    def wait(self, handle: Handle, timeout_s: float) -> list[AiEvent]:
        """Poll until ``handle`` is answered or ``timeout_s`` passes (the sync mode)."""
        return poll_until(self.poll, lambda: handle.id not in self._live, timeout_s)

    # -- status ----------------------------------------------------------------

    def load_progress(self) -> LoadProgress:
        """Loading, ready, or degraded."""
        return self._progress

    @property
    def queue_depth(self) -> int:
        """Requests waiting to start."""
        return self._requests.qsize()

    @property
    def in_flight(self) -> int:
        """1 while the worker generates."""
        return 0 if self._running is None else 1

    def metrics(self) -> AiMetrics:
        """The same figures ``AiRuntime`` reports, so the game's report is comparable."""
        return self._metrics.snapshot(self.queue_depth, self.in_flight)

    @property
    def multi_tier(self) -> bool:
        """One worker, no tiers."""
        return False

    def tiers(self) -> tuple[TierStats, ...]:
        """No tiers to report."""
        return ()

    def shutdown(self) -> None:
        """Stop after the current line; cancel it at its next piece."""
        if self._running is not None:
            self._cancelled.add(self._running.id)
        while True:
            try:
                self._requests.get_nowait()
            except queue.Empty:
                break
        self._requests.put(None)
        if self._thread.is_alive():
            self._thread.join(2.0)


def plain_runtime(
    config: AiConfig,
    backend: Backend,
    fallback: FallbackSource,
    /,
    *,
    content: ContentFilter | None = None,
) -> PlainRuntime:
    """``game.app``'s runtime factory for the plain peer.

    The textbook design shows what the model writes: it runs no content filter.
    """
    del content
    return PlainRuntime(config, backend, fallback)


# mypy checks here that the peer offers every call the game makes.
_IS_A_LINE_RUNTIME: type[LineRuntime] = PlainRuntime
