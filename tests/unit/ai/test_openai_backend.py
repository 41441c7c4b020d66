"""The OpenAI-compatible backend against stub servers on 127.0.0.1: every way a server fails."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler

import pytest

from ai import (
    AiRuntime,
    FallbackUsed,
    LineCompleted,
    LineFailed,
    RemoteConfig,
    RequestCancelled,
    TokenStreamed,
)
from ai.openai_backend import OpenAiBackend
from tests.support.loopback import (
    StubServer,
    chat_chunk,
    completion_chunk,
    free_port,
    send_stream,
)
from tests.unit.ai.conftest import EventLog, RecordingFallback, fast_config, make_request

Respond = Callable[[BaseHTTPRequestHandler, dict[str, object]], None]


@pytest.fixture
def stub() -> Iterator[Callable[[Respond], StubServer]]:
    servers: list[StubServer] = []

    def start(respond: Respond) -> StubServer:
        server = StubServer(respond)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def remote_runtime(
    fallback: RecordingFallback,
) -> Iterator[Callable[..., AiRuntime]]:
    runtimes: list[AiRuntime] = []

    def build(base_url: str, env: dict[str, str] | None = None, **remote: object) -> AiRuntime:
        config = RemoteConfig(enabled=True, base_url=base_url, **remote)  # type: ignore[arg-type]
        runtime = AiRuntime(fast_config(), OpenAiBackend(config, env or {}), fallback)
        runtimes.append(runtime)
        runtime.start()
        return runtime

    yield build
    for runtime in runtimes:
        runtime.shutdown()


def _one_line(runtime: AiRuntime, timeout_s: float = 10.0) -> EventLog:
    log = EventLog(runtime)
    handle = runtime.submit(make_request("line"))
    log.until(
        lambda: bool(log.of(LineCompleted, handle) or log.of(FallbackUsed, handle)), timeout_s
    )
    return log


def _failure(log: EventLog) -> str:
    failed = log.of(LineFailed)
    assert len(failed) == 1, log.events
    assert len(log.of(FallbackUsed)) == 1
    return failed[0].reason  # type: ignore[attr-defined,no-any-return]


def test_streams_a_line_and_sends_the_key_from_the_environment(
    stub: Callable[[Respond], StubServer],
    remote_runtime: Callable[..., AiRuntime],
    caplog: pytest.LogCaptureFixture,
) -> None:
    def respond(handler: BaseHTTPRequestHandler, body: dict[str, object]) -> None:
        words = ["Mind ", "the ", "crate", '!" she said']
        send_stream(handler, [completion_chunk(w) for w in words] + ["data: [DONE]", ""])

    server = stub(respond)
    caplog.set_level(logging.DEBUG)
    runtime = remote_runtime(
        server.base_url, {"VILLAGE_KEY": "sekrit-123"}, api_key_env="VILLAGE_KEY"
    )
    log = _one_line(runtime)
    [line] = log.of(LineCompleted)
    assert line.text == "Mind the crate!"  # type: ignore[attr-defined]
    assert len(log.of(TokenStreamed)) >= 3
    [sent] = server.requests
    assert sent["path"] == "/v1/completions"
    assert sent["stream"] is True
    assert str(sent["prompt"]).endswith('Bess the baker (a crate falls next to her): "')
    assert sent["headers"]["Authorization"] == "Bearer sekrit-123"  # type: ignore[index]
    assert "sekrit" not in caplog.text


@pytest.mark.parametrize(
    ("lines", "status", "reason"),
    [
        (['{"error": "model exploded"}'], 500, "http 500"),
        (["data: {not json", ""], 200, "bad sse"),
        (["hello there", ""], 200, "bad sse"),
        (['data: {"choices": "nope"}', ""], 200, "bad sse"),
        (["data: [DONE]", ""], 200, "empty stream"),
        ([""], 200, "empty stream"),
        (['data: {"error": {"message": "out of memory"}}', ""], 200, "server error"),
    ],
)
def test_a_bad_answer_ends_the_line_with_a_reason_and_a_fallback(
    stub: Callable[[Respond], StubServer],
    remote_runtime: Callable[..., AiRuntime],
    lines: list[str],
    status: int,
    reason: str,
) -> None:
    server = stub(lambda handler, body: send_stream(handler, lines, status))
    assert _failure(_one_line(remote_runtime(server.base_url))) == reason


def test_refused_connection(remote_runtime: Callable[..., AiRuntime]) -> None:
    assert _failure(_one_line(remote_runtime(f"http://127.0.0.1:{free_port()}/v1"))) == "refused"


def test_bad_url(remote_runtime: Callable[..., AiRuntime]) -> None:
    assert _failure(_one_line(remote_runtime("http://127.0.0.1:99999/v1"))) == "bad url"


def test_a_server_that_never_answers_times_out(
    stub: Callable[[Respond], StubServer], remote_runtime: Callable[..., AiRuntime]
) -> None:
    server = stub(lambda handler, body: time.sleep(5.0))
    began = time.monotonic()
    reason = _failure(_one_line(remote_runtime(server.base_url, read_timeout_s=0.3)))
    assert reason == "read timeout"
    assert time.monotonic() - began < 3.0


def test_cancel_closes_the_connection_while_the_server_is_silent(
    stub: Callable[[Respond], StubServer], remote_runtime: Callable[..., AiRuntime]
) -> None:
    server = stub(lambda handler, body: time.sleep(5.0))
    runtime = remote_runtime(server.base_url, read_timeout_s=30.0)
    log = EventLog(runtime)
    handle = runtime.submit(make_request("line"))
    log.until(lambda: runtime.in_flight == 1 and bool(server.requests))
    began = time.monotonic()
    assert runtime.cancel(handle)
    log.until(lambda: runtime.in_flight == 0, timeout_s=2.0)
    assert time.monotonic() - began < 1.0
    assert [type(e) for e in log.of(RequestCancelled)] == [RequestCancelled]
    assert not log.of(FallbackUsed)


def test_shutdown_joins_within_a_second_mid_request(
    stub: Callable[[Respond], StubServer], fallback: RecordingFallback
) -> None:
    server = stub(lambda handler, body: time.sleep(5.0))
    config = RemoteConfig(enabled=True, base_url=server.base_url, read_timeout_s=30.0)
    runtime = AiRuntime(fast_config(), OpenAiBackend(config, {}), fallback)
    runtime.start()
    runtime.submit(make_request("line"))
    EventLog(runtime).until(lambda: bool(server.requests))
    began = time.monotonic()
    runtime.shutdown()
    assert time.monotonic() - began < 1.5


def _send_bytes(handler: BaseHTTPRequestHandler, pieces: list[bytes]) -> None:
    """Answer with raw bytes, written (and flushed) piece by piece."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Content-Length", str(sum(len(p) for p in pieces)))
    handler.send_header("Connection", "close")
    handler.end_headers()
    for piece in pieces:
        handler.wfile.write(piece)
        handler.wfile.flush()
        time.sleep(0.02)


def _chunk_bytes(text: str) -> bytes:
    return completion_chunk(text).encode("utf-8") + b"\n"


def test_invalid_utf_8_fails_the_request_and_never_reaches_a_bubble(
    stub: Callable[[Respond], StubServer], remote_runtime: Callable[..., AiRuntime]
) -> None:
    bad = b'data: {"choices": [{"text": "Good \xff\xfe bread", "index": 0}]}\n\n'
    server = stub(lambda handler, body: _send_bytes(handler, [_chunk_bytes("Morning! "), bad]))
    log = _one_line(remote_runtime(server.base_url))
    assert _failure(log) == "bad utf-8"
    assert not any("\ufffd" in str(getattr(e, "text_so_far", "")) for e in log.events)


def test_a_character_split_across_two_reads_is_decoded_whole(
    stub: Callable[[Respond], StubServer], remote_runtime: Callable[..., AiRuntime]
) -> None:
    line = 'data: {"choices": [{"text": "Caf\u00e9 au lait, friend.", "index": 0}]}\n\n'.encode()
    cut = line.index("\u00e9".encode()) + 1  # between the two bytes of the é
    done = b"data: [DONE]\n\n"
    server = stub(lambda handler, body: _send_bytes(handler, [line[:cut], line[cut:], done]))
    [completed] = _one_line(remote_runtime(server.base_url)).of(LineCompleted)
    assert completed.text == "Caf\u00e9 au lait, friend."  # type: ignore[attr-defined]


def test_a_10_mb_line_fails_as_too_long_without_reading_it_all(
    stub: Callable[[Respond], StubServer], remote_runtime: Callable[..., AiRuntime]
) -> None:
    huge = b'data: {"choices": [{"text": "' + b"a" * 10_000_000 + b'", "index": 0}]}\n\n'
    pieces = [huge[i : i + 1_000_000] for i in range(0, len(huge), 1_000_000)]
    server = stub(lambda handler, body: _send_bytes(handler, pieces))
    start = time.perf_counter()
    reason = _failure(_one_line(remote_runtime(server.base_url)))
    assert reason in ("line too long", "too large")
    assert time.perf_counter() - start < 5.0


def test_http_429_carries_the_servers_retry_after(
    stub: Callable[[Respond], StubServer], remote_runtime: Callable[..., AiRuntime]
) -> None:
    def respond(handler: BaseHTTPRequestHandler, body: dict[str, object]) -> None:
        handler.send_response(429)
        handler.send_header("Retry-After", "12")
        handler.send_header("Content-Length", "4")
        handler.end_headers()
        handler.wfile.write(b"busy")

    server = stub(respond)
    log = _one_line(remote_runtime(server.base_url))
    assert _failure(log) == "http 429"
    [failed] = log.of(LineFailed)
    assert failed.retry_after_s == 12.0  # type: ignore[attr-defined]


def test_a_live_edit_points_the_tier_at_another_server_with_its_own_key(
    stub: Callable[[Respond], StubServer], remote_runtime: Callable[..., AiRuntime]
) -> None:
    def speaks(words: list[str], chunk: Callable[[str], str]) -> Respond:
        def respond(handler: BaseHTTPRequestHandler, body: dict[str, object]) -> None:
            send_stream(handler, [chunk(w) for w in words] + ["data: [DONE]", ""])

        return respond

    first = stub(speaks(["From ", "the first."], completion_chunk))
    second = stub(speaks(["From ", "the second."], chat_chunk))
    runtime = remote_runtime(first.base_url, {"SECOND_KEY": "k-2"})
    [line] = _one_line(runtime).of(LineCompleted)
    assert line.text == "From the first."  # type: ignore[attr-defined]

    config = fast_config()
    remote = RemoteConfig(
        enabled=True, base_url=second.base_url, api="chat", api_key_env="SECOND_KEY"
    )
    runtime.reconfigure(replace(config, remote=remote))
    [line] = _one_line(runtime).of(LineCompleted)
    assert line.text == "From the second."  # type: ignore[attr-defined]
    assert len(first.requests) == 1
    [sent] = second.requests
    assert sent["path"] == "/v1/chat/completions"
    assert sent["headers"]["Authorization"] == "Bearer k-2"  # type: ignore[index]
