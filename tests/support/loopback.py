"""Servers on 127.0.0.1 for the remote tier's tests and benchmark.

llama.cpp's own OpenAI-compatible server (``python -m llama_cpp.server``) with the
packaged model, a stub server whose answers a test writes, and a proxy that slows a
server down. Everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

HOST = "127.0.0.1"


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class LlamaServer:
    """``python -m llama_cpp.server`` with the packaged model, on a port of its own."""

    def __init__(self, model: Path, port: int | None = None) -> None:
        self.model = model
        self.port = port or free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self._log = Path(os.environ.get("TMPDIR", "/tmp")) / f"llama-server-{self.port}.log"

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self, timeout_s: float = 120.0) -> None:
        """Start the server and wait until ``/v1/models`` answers."""
        command = [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.model),
            "--model_alias",
            "gemma-3-270m",
            "--host",
            HOST,
            "--port",
            str(self.port),
            "--n_threads",
            "1",
            "--n_threads_batch",
            "1",
            "--n_ctx",
            "2048",
        ]
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self._process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {self._log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {timeout_s} s")

    def kill(self) -> None:
        """Kill it at once, as a crash would."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGKILL)
            self._process.wait(10)

    def stop(self) -> None:
        """Stop it, politely first."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


Responder = Callable[[BaseHTTPRequestHandler, dict[str, object]], None]


class StubServer:
    """An HTTP server whose answer to every POST is written by the test."""

    def __init__(self, respond: Responder) -> None:
        self.requests: list[dict[str, object]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 - the http.server naming
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append({"path": self.path, "headers": dict(self.headers), **body})
                respond(self, body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

        self._server = ThreadingHTTPServer((HOST, 0), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def send_stream(handler: BaseHTTPRequestHandler, lines: list[str], status: int = 200) -> None:
    """Answer with ``lines`` as an event stream (one write each, connection closed after)."""
    payload = "".join(line + "\n" for line in lines).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Content-Length", str(len(payload)))
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(payload)


def completion_chunk(text: str) -> str:
    """One ``/v1/completions`` stream event."""
    return "data: " + json.dumps({"choices": [{"text": text, "index": 0}]}) + "\n"


def chat_chunk(text: str) -> str:
    """One ``/v1/chat/completions`` stream event."""
    return "data: " + json.dumps({"choices": [{"delta": {"content": text}, "index": 0}]}) + "\n"


class SlowProxy:
    """A TCP proxy on loopback that holds every answer back by ``delay_s`` before passing it on."""

    def __init__(self, upstream_port: int, delay_s: float) -> None:
        self.delay_s = delay_s
        self._upstream = upstream_port
        self._listener = socket.create_server((HOST, 0))
        self.port = int(self._listener.getsockname()[1])
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection((HOST, self._upstream))
            threading.Thread(target=self._pipe, args=(client, upstream, 0.0), daemon=True).start()
            threading.Thread(
                target=self._pipe, args=(upstream, client, self.delay_s), daemon=True
            ).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket, delay_s: float) -> None:
        try:
            first = True
            while data := source.recv(65536):
                if first and delay_s:
                    time.sleep(delay_s)
                first = False
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._closed = True
        self._listener.close()
