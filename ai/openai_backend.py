"""A backend that streams lines from an OpenAI-compatible server over HTTP.

llama.cpp's ``llama-server``, llama-cpp-python's ``llama_cpp.server``, vLLM and
Ollama all speak this protocol. Lines stream as server-sent events from
``/v1/completions`` (the few-shot prompt, for base models) or
``/v1/chat/completions`` (chat messages, for instruct models).

Like every backend it is driven by one runtime worker thread: a tier's own
thread, never the game's and never the llama.cpp worker's. That thread owns a
private asyncio event loop and an ``httpx.AsyncClient``; ``generate`` steps the
stream one piece at a time and checks the cancel flag every 50 ms
while it waits, so a cancel or a shutdown closes the connection at once, even
while the server is still thinking about the first token.

Every way a request can go wrong ends in a :class:`GenerationError` with a short
reason ("refused", "http 500", "bad sse", "empty stream", "timeout", ...), which
the worker turns into ``LineFailed`` and the runtime into a fallback line.
"""

from __future__ import annotations

import asyncio
import codecs
import email.utils
import json
import logging
import math
import os
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

import httpx

from ai.backend import GenerationError, GenerationParams, ProgressCallback, StopCheck
from ai.config import RemoteConfig
from ai.prompt import build_chat_messages, build_completion_prompt
from ai.requests import PromptSpec
from ai.streaming import StopFilter, with_opener

logger = logging.getLogger(__name__)

# How often a wait for the next piece looks at the cancel flag: each look wakes the
# tier thread, which then competes with the game for the GIL, so not too often.
_POLL_S = 0.05
# The OpenAI API takes at most four stop strings.
_MAX_STOPS = 4
# Bytes of an error body kept for the log.
_ERROR_BODY_CHARS = 200


class OpenAiBackend:
    """Streams lines from an OpenAI-compatible server; one instance per tier lane."""

    def __init__(self, config: RemoteConfig, env: Mapping[str, str] | None = None) -> None:
        self._env = os.environ if env is None else env
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None
        self._interrupted = threading.Event()
        self._aim(config)

    def _aim(self, config: RemoteConfig) -> None:
        self._config = config
        chat = config.api == "chat"
        self._chat = chat
        self._url = config.base_url.rstrip("/") + ("/chat/completions" if chat else "/completions")
        self._url_problem = _url_problem(self._url)

    @property
    def url(self) -> str:
        """Where requests go."""
        return self._url

    def load(self, progress: ProgressCallback) -> None:
        """Open the HTTP client on this (the tier's) thread; the server is not contacted yet.

        A server that is down is the circuit breaker's business, not a load failure:
        the tier comes up, its first requests fail with "refused", and the breaker opens.
        """
        progress(0.0, "opening HTTP client")
        self._loop = asyncio.new_event_loop()
        self._client = self._open_client()
        logger.info("remote tier: %s (model %s)", self._url, self._config.model)
        progress(1.0, "ready")

    def use_server(self, config: RemoteConfig) -> None:
        """From the next request on, send to the server ``config`` names (worker thread).

        A new address, model or API takes effect at once; a new key or timeouts open a
        new HTTP client on this thread's loop, and the old one is closed.
        """
        old = self._config
        if config == old:
            return
        self._aim(config)
        reopen = (config.api_key_env, config.connect_timeout_s, config.read_timeout_s) != (
            old.api_key_env,
            old.connect_timeout_s,
            old.read_timeout_s,
        )
        loop, client = self._loop, self._client
        if reopen and loop is not None and client is not None:
            self._client = self._open_client()
            loop.run_until_complete(client.aclose())
        logger.info("remote tier now: %s (model %s)", self._url, config.model)

    def _open_client(self) -> httpx.AsyncClient:
        headers = {"Accept": "text/event-stream"}
        key_env = self._config.api_key_env
        if key_env:
            key = self._env.get(key_env, "")
            if key:
                headers["Authorization"] = f"Bearer {key}"
            else:
                logger.warning("remote tier: %s is not set; sending no API key", key_env)
        timeout = httpx.Timeout(
            connect=self._config.connect_timeout_s,
            read=self._config.read_timeout_s,
            write=self._config.read_timeout_s,
            pool=self._config.connect_timeout_s,
        )
        # trust_env=False: no proxy from the environment may reroute the game's traffic.
        return httpx.AsyncClient(headers=headers, timeout=timeout, trust_env=False)

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        """Stream text pieces; returns quietly soon after ``should_stop()`` turns true."""
        loop = self._loop
        if loop is None or self._client is None:
            raise RuntimeError("generate() called before load()")
        if self._url_problem:
            raise GenerationError("bad url", self._url_problem)
        pieces = self._pieces(loop, prompt, params, should_stop)
        # A completion prompt ends in the opener, which the server does not send back.
        yield from pieces if self._chat else with_opener(prompt.opener, pieces)

    def _pieces(
        self,
        loop: asyncio.AbstractEventLoop,
        prompt: PromptSpec,
        params: GenerationParams,
        should_stop: StopCheck,
    ) -> Iterator[str]:
        deadline = time.monotonic() + self._config.request_timeout_s
        interrupted = self._interrupted.is_set
        asked_to_stop = should_stop

        def stopped() -> bool:
            return asked_to_stop() or interrupted()

        should_stop = stopped
        stream = self._stream(self._body(prompt, params), params)
        try:
            while True:
                piece = loop.run_until_complete(_next_piece(stream, should_stop, deadline))
                if piece is None:
                    return
                yield piece
        finally:
            loop.run_until_complete(stream.aclose())

    def contrast(self, prompt: PromptSpec, neutral: PromptSpec, continuation: str) -> float | None:
        """Not measured over the network: candidates from a server rank without it."""
        return None

    def choose(self, prompt: PromptSpec, options: Sequence[str]) -> tuple[int, float] | None:
        """Not measured over the network: closed choices are made by the local model."""
        del prompt, options
        return None

    def _body(self, prompt: PromptSpec, params: GenerationParams) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self._config.model,
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "stream": True,
        }
        if params.seed is not None:
            body["seed"] = params.seed
        if self._chat:
            body["messages"] = build_chat_messages(prompt, prompt.player_text)
            body["stop"] = list(params.chat_stop[:_MAX_STOPS])
        else:
            body["prompt"] = build_completion_prompt(prompt, prompt.player_text)
            body["stop"] = list(params.stop[:_MAX_STOPS])
        return body

    async def _stream(
        self, body: dict[str, Any], params: GenerationParams
    ) -> AsyncGenerator[str, None]:
        client = self._client
        assert client is not None
        stops = StopFilter(params.chat_stop if self._chat else params.stop)
        chunks = 0
        try:
            async with client.stream("POST", self._url, json=body) as response:
                if response.status_code >= 400:
                    text = (await response.aread())[:_ERROR_BODY_CHARS].decode("utf-8", "replace")
                    raise GenerationError(
                        f"http {response.status_code}",
                        text.strip(),
                        _retry_after(response.headers.get("Retry-After", "")),
                    )
                config = self._config
                lines = _capped_lines(
                    response.aiter_bytes(), config.max_line_bytes, config.max_reply_bytes
                )
                try:
                    async for line in lines:
                        data = _sse_data(line)
                        if data is None:
                            continue
                        if data == "[DONE]":
                            break
                        chunks += 1
                        text = stops.feed(_piece(data, self._chat))
                        if text:
                            yield text
                        if stops.stopped:
                            return
                finally:
                    await lines.aclose()
        except httpx.ConnectTimeout as exc:
            raise GenerationError("connect timeout", str(exc)) from exc
        except httpx.ConnectError as exc:
            raise GenerationError("refused", f"{self._url}: {exc}") from exc
        except httpx.TimeoutException as exc:
            raise GenerationError("read timeout", str(exc)) from exc
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise GenerationError("bad url", f"{self._url}: {exc}") from exc
        except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
            raise GenerationError("stream broken", str(exc)) from exc
        except httpx.HTTPError as exc:
            raise GenerationError("http error", repr(exc)) from exc
        except GenerationError:
            raise
        except Exception as exc:
            # The HTTP stack below httpx can raise its own errors (anyio wraps some).
            raise GenerationError("http error", repr(exc)) from exc
        if chunks == 0:
            raise GenerationError("empty stream", "the server sent no completion chunk")
        tail = stops.flush()
        if tail:
            yield tail

    def prompt_room(self, prompt: PromptSpec) -> int:
        """The server's context size is not known here: its own limit applies."""
        return 1 << 30

    @property
    def prompt_style(self) -> str:
        """No adapter here: any base model's prompts."""
        return ""

    def interrupt(self) -> None:
        """Stop the stream at its next piece or poll (any thread)."""
        self._interrupted.set()

    def resume(self) -> None:
        """Let the next request stream."""
        self._interrupted.clear()

    def close(self) -> None:
        """Close the client and the event loop."""
        loop, self._loop = self._loop, None
        client, self._client = self._client, None
        if loop is None:
            return
        # Whatever a stopped stream left behind is cancelled and awaited, and open async
        # generators closed, so the loop shuts down without a "task was destroyed" error.
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        if client is not None:
            loop.run_until_complete(client.aclose())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


async def _next_piece(
    stream: AsyncGenerator[str, None], should_stop: StopCheck, deadline: float
) -> str | None:
    """The stream's next piece; None when it ends or ``should_stop()`` turns true.

    Cancelling the pending read closes the response, so the server hears about
    a cancel at once instead of at its next chunk.
    """
    if should_stop():
        return None
    task = asyncio.ensure_future(anext(stream))
    try:
        while True:
            left = deadline - time.monotonic()
            done, _ = await asyncio.wait((task,), timeout=max(0.0, min(_POLL_S, left)))
            if done:
                try:
                    return task.result()
                except StopAsyncIteration:
                    return None
            if should_stop():
                return None
            if time.monotonic() >= deadline:
                raise GenerationError("timeout", "the whole-request budget ran out")
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def _url_problem(url: str) -> str:
    """Why ``url`` cannot be requested, or "" if it can."""
    try:
        parsed = httpx.URL(url)
        port = parsed.port
    except (httpx.InvalidURL, ValueError) as exc:
        return f"{url}: {exc}"
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return f"{url}: only http:// and https:// URLs with a host are accepted"
    if port is not None and not 0 < port < 65536:
        return f"{url}: port {port} is out of range"
    return ""


async def _capped_lines(
    chunks: AsyncIterator[bytes], max_line: int, max_reply: int
) -> AsyncGenerator[str, None]:
    """The stream's lines, decoded as strict UTF-8 across chunk boundaries, with caps.

    A line longer than ``max_line`` bytes or a reply longer than ``max_reply`` fails the
    request before it is parsed (a 10 MB line never reaches ``json.loads``, which would
    hold the interpreter for as long as it reads), and so does any byte that is not
    UTF-8: a bubble never shows U+FFFD for what a server sent.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    pending = ""
    total = 0
    async for chunk in chunks:
        total += len(chunk)
        if total > max_reply:
            raise GenerationError("too large", f"the reply passed {max_reply} bytes")
        try:
            pending += decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            raise GenerationError("bad utf-8", str(exc)) from exc
        *lines, pending = pending.replace("\r\n", "\n").split("\n")
        for line in lines:
            if len(line) > max_line:
                raise GenerationError("line too long", f"a line passed {max_line} bytes")
            yield line.rstrip("\r")
        if len(pending.encode("utf-8")) > max_line:
            raise GenerationError("line too long", f"a line passed {max_line} bytes")
    try:
        pending += decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise GenerationError("bad utf-8", str(exc)) from exc
    if pending:
        yield pending.rstrip("\r")


_MAX_RETRY_AFTER_S = 600.0


def _retry_after(value: str) -> float:
    """Seconds from an HTTP ``Retry-After`` header (seconds, or a date); 0 when absent."""
    value = value.strip()
    if not value:
        return 0.0
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return 0.0
        seconds = when.timestamp() - time.time()
    if not math.isfinite(seconds):
        return 0.0
    return max(0.0, min(_MAX_RETRY_AFTER_S, seconds))


def _sse_data(line: str) -> str | None:
    """The payload of one server-sent-event line; None for blank lines, comments and fields."""
    if not line or line.startswith(":"):
        return None
    field, sep, value = line.partition(":")
    if not sep:
        raise GenerationError("bad sse", f"not an event-stream line: {line[:80]!r}")
    if field != "data":
        if field in ("event", "id", "retry"):
            return None
        raise GenerationError("bad sse", f"unknown event-stream field: {line[:80]!r}")
    return value[1:] if value.startswith(" ") else value


def _piece(data: str, chat: bool) -> str:
    """The text in one completion chunk; raises ``GenerationError`` on anything else."""
    try:
        chunk = json.loads(data)
    except json.JSONDecodeError as exc:
        raise GenerationError("bad sse", f"chunk is not JSON: {data[:80]!r}") from exc
    if not isinstance(chunk, dict):
        raise GenerationError("bad sse", f"chunk is not an object: {data[:80]!r}")
    if "error" in chunk:
        raise GenerationError("server error", str(chunk["error"])[:_ERROR_BODY_CHARS])
    try:
        choices = chunk["choices"]
        if not choices:
            return ""
        choice = choices[0]
        text = (choice["delta"].get("content") if chat else choice["text"]) or ""
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise GenerationError("bad sse", f"unexpected chunk: {data[:80]!r}") from exc
    if not isinstance(text, str):
        raise GenerationError("bad sse", f"chunk text is not a string: {data[:80]!r}")
    return text
