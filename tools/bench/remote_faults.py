"""Tick time with a hostile remote tier, against the same village with a well-behaved one.

Two loopback servers stand in for an OpenAI-compatible tier that serves every line
(``routing`` sends all classes to it): one answers each request with a short stream of
completion chunks, the other with a single 10 MB ``data:`` line, or with bytes that are
not UTF-8. Each runs the headless village paced at 60 Hz, arms interleaved round by
round. The hostile replies must fail on the tier's own thread, before anything is
parsed, and leave the frame alone: tick p99 within 1.10x of the normal server's, no
overruns.

    python tools/bench/remote_faults.py              # bench/remote_faults.json
    python tools/bench/remote_faults.py --rounds 1 --ticks 600
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tests.support.loopback import StubServer, completion_chunk  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402
from tools.bench.zero_stall import run_game  # noqa: E402

HUGE_LINE = b'data: {"choices": [{"text": "' + b"a" * 10_000_000 + b'", "index": 0}]}\n\n'
BAD_UTF8 = b'data: {"choices": [{"text": "Morning! Good \xff\xfe bread here.", "index": 0}]}\n\n'


def _send(handler: BaseHTTPRequestHandler, payload: bytes, piece: int = 1 << 16) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Content-Length", str(len(payload)))
    handler.send_header("Connection", "close")
    handler.end_headers()
    try:
        for i in range(0, len(payload), piece):
            handler.wfile.write(payload[i : i + piece])
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up on the reply, as it should


def normal(handler: BaseHTTPRequestHandler, body: dict[str, object]) -> None:
    del body
    words = ["Morning, ", "traveller. ", "Fresh ", "bread ", 'today!"']
    chunks = "".join(completion_chunk(w) + "\n" for w in words) + "data: [DONE]\n\n"
    time.sleep(0.05)
    _send(handler, chunks.encode())


def huge(handler: BaseHTTPRequestHandler, body: dict[str, object]) -> None:
    del body
    _send(handler, HUGE_LINE)


def bad_utf8(handler: BaseHTTPRequestHandler, body: dict[str, object]) -> None:
    del body
    _send(handler, BAD_UTF8 + b"data: [DONE]\n\n")


def _flags(base_url: str) -> list[str]:
    flags = ["--scenario", "village", "--ai", "async", "--set", "ai.remote.enabled=true"]
    flags += ["--set", f'ai.remote.base_url="{base_url}"']
    for name in ("player_chat", "reactive", "predictive", "ambient"):
        flags += ["--set", f'ai.routing.{name}=["remote"]']
    return flags


def _figures(report: dict[str, Any]) -> dict[str, Any]:
    ai = report["ai"]
    return {
        "tick_ms": report["tick_ms"],
        "overruns": report["overruns"],
        "lines_by_tier": ai.get("lines_by_tier", {}),
        "tiers": ai.get("tiers", {}),
        "replacement_chars_shown": report["audit"].get("replacement_chars", 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ticks", type=int, default=1800)
    parser.add_argument("--out", default=str(ROOT / "bench" / "remote_faults.json"))
    args = parser.parse_args()
    servers = {"normal": StubServer(normal), "10 MB line": StubServer(huge)}
    servers["bad utf-8"] = StubServer(bad_utf8)
    load_start = load_average()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in servers}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for name, server in servers.items():
                tag = f"{name.replace(' ', '-')}-{r}"
                flags = [*_flags(server.base_url), "--ticks", str(args.ticks)]
                runs[name].append(_figures(run_game(flags, Path(tmp), tag)))
    for server in servers.values():
        server.close()
    p99 = {name: sorted(r["tick_ms"]["p99"] for r in rs) for name, rs in runs.items()}
    median = {name: values[len(values) // 2] for name, values in p99.items()}
    report = {
        "machine": machine_header(load_start, model=load_settings(CONFIG_DIR).ai.model),
        "ticks_per_run": args.ticks,
        "runs": runs,
        "tick_p99_median_ms": median,
        "p99_ratio_vs_normal": {
            name: round(value / median["normal"], 3) for name, value in median.items()
        },
        "overruns": {name: [r["overruns"] for r in rs] for name, rs in runs.items()},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    for name in servers:
        print(
            f"{name:12s} tick p99 median {median[name]:.3f} ms "
            f"(x{report['p99_ratio_vs_normal'][name]}), overruns {report['overruns'][name]}"
        )
    print(f"-> {out}")


if __name__ == "__main__":
    main()
