"""Write the speed benchmarks' figures into docs/benchmarks.md, between two marker lines.

Reads what ``make bench-all`` leaves in ``bench/`` (``results.md`` from
``tools/bench/zero_stall.py``, ``busy.json``, ``busy_loaded.json``, ``bench_ai.json``,
``profile_tokens.json``, ``gil.json``) and replaces the page's text between
``<!-- bench:begin -->`` and ``<!-- bench:end -->`` with tables built from them, so no
figure is retyped by hand. The load average each table gives is read through
:func:`tools.bench.machine.recorded_load`, from the ``machine`` header or the keys of
older JSON. The README's headline figures are short quotes of these tables, kept by hand.

    python tools/docs/bench_readme.py                  # docs/benchmarks.md
    python tools/docs/bench_readme.py --page OTHER.md  # any page with the two markers
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tools.bench.machine import recorded_load  # noqa: E402

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def _load(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text()) if path.exists() else None


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _load_text(document: dict[str, Any]) -> str:
    """The 1-minute load average the run recorded, from its header or the older keys."""
    before, after = recorded_load(document)
    if before and after:
        return f"load average (1 min) {before[0]:.1f} before, {after[0]:.1f} after"
    if before or after:
        return f"load average {(before or after)[0]:.1f}"
    return "load average not recorded"


def busy_table(document: dict[str, Any], title: str) -> str:
    """tools/bench/busy.py's modes: tick p99 over off, tokens/s, GIL waits, call cost."""
    settings = document["settings"]
    intervals = settings["switch_interval_s"]
    rows = [
        f"**{title}** ({settings['blocks_per_mode']} blocks of {settings['block_seconds']:g} s "
        f"per mode, {settings['background_busy_processes']} busy-loop processes beside it, "
        f"{_load_text(document)})",
        "",
        "| mode | switch interval | tick p99 | / off | tokens/s | main thread: voluntary "
        "switches per tick | worker: voluntary switches per token | AI calls p99 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    switches = document.get("context_switches", {})
    for mode, tick in document["tick_ms"].items():
        calls = document["ai_call_ms"].get(mode, {})
        sw = switches.get(mode, {})
        rows.append(
            f"| {mode} | {intervals[mode] * 1000:g} ms | {tick['p99']:.2f} ms "
            f"| {document['tick_p99_over_off'].get(mode, 0):.2f} "
            f"| {_num(document['tokens_per_s'].get(mode), 1)} "
            f"| {_num(sw.get('main_voluntary_per_tick'))} "
            f"| {_num(sw.get('worker_voluntary_per_token'))} "
            f"| {_num(calls.get('p99'), 3) + ' ms' if calls else '–'} |"
        )
    prototype = document.get("subprocess_prototype")
    if prototype:
        rows += [
            "",
            f"Subprocess prototype: start-up {prototype['startup_s']:.2f} s (a second "
            f"interpreter and model), worker process {prototype['child_rss_mb']:.0f} MB "
            f"resident beside the game's {prototype['game_rss_mb']:.0f} MB.",
        ]
    return "\n".join(rows) + "\n"


def bench_ai_table(document: dict[str, Any]) -> str:
    """tools/bench/runtime_alone.py: the runtime beside a fake tick with pymunk work."""
    ratio, rates, calls = (
        document["tick_p99_ratio"],
        document["tokens_per_s"],
        document["api_call_ms"],
    )
    ttft = document["ttft_ms_runtime_cached_prefix"]
    settings = document["settings"]
    return (
        "\n".join(
            [
                f"**The runtime alone** (`bench_ai.json`; a fake 60 Hz tick of "
                f"{settings['work_ms_per_tick']:g} ms with {settings['physics_bodies_per_tick']} "
                f"pymunk bodies, idle, busy and control blocks interleaved; "
                f"{_load_text(document)})",
                "",
                "| figure | measured | target |",
                "| --- | --- | --- |",
                f"| tick p99, busy / idle | {ratio['busy_over_idle']:.2f} | ≤ 1.10 |",
                f"| tick p99, other core busy in C (control) / idle | "
                f"{ratio['control_over_idle']:.2f} | – |",
                f"| AI calls p99, max | {calls['all']['p99']:.3f} ms, {calls['all']['max']:.3f} ms "
                f"| p99 < 0.1 ms |",
                f"| time to first token, cached prefix, p50 | {ttft['p50']:.1f} ms | ≤ 100 ms |",
                f"| tokens/s, runtime / plain llama-cpp-python | {rates['runtime']:.1f} / "
                f"{rates['plain_llama_cpp']:.1f} = {rates['ratio']:.2f} | ≥ 1.0 |",
            ]
        )
        + "\n"
    )


def tokens_table(document: dict[str, Any]) -> str:
    """tools/bench/profile_tokens.py: per-token cost of each way to drive llama.cpp."""
    names = {
        "decode": "`llama_decode` alone",
        "token_loop": "`TokenLoop` (the runtime)",
        "generate": "`Llama.generate` + detokenise",
        "create_completion": "`create_completion(stream=True)` (plain)",
    }
    rows = [
        f"**Per token, no game beside it** (`profile_tokens.json`, {_load_text(document)})",
        "",
        "| path | tokens/s | / raw decode | native calls per token | Python ms per token |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key, path in document["paths"].items():
        rows.append(
            f"| {names.get(key, key)} | {path['tokens_per_s_median']:.1f} "
            f"| {path['rate_over_raw_decode']:.2f} | {path['native_calls_per_token_median']:.1f} "
            f"| {path['python_ms_per_token_median']:.2f} |"
        )
    return "\n".join(rows) + "\n"


def gil_table(document: dict[str, Any]) -> str:
    """tools/bench/profile_gil.py: main thread's GIL waits and the worker's Python per token."""
    rows = [
        f"**Sampled with py-spy in the village** (`gil.json`, {document['rate_hz']} Hz, "
        f"{document['seconds_per_run']:g} s per run, {_load_text(document)})",
        "",
        "| mode | main thread awake: waiting for the GIL | samples in `village.step` waiting "
        "/ running | worker: GIL held per token | worker's hottest Python line |",
        "| --- | --- | --- | --- | --- |",
    ]
    for mode, entry in document["modes"].items():
        main, worker = entry["main_thread"], entry["worker"]
        step = main["in_village_step"]
        top = next(iter(worker["top_frames"]), "–")
        rows.append(
            f"| {mode} | {100 * (main['gil_wait_share_of_awake'] or 0):.1f}% "
            f"| {step.get('waiting_for_gil', 0)} / {step.get('running', 0)} "
            f"| {_num(worker['gil_ms_per_token'], 2)} ms | `{top}` |"
        )
    return "\n".join(rows) + "\n"


def block(bench: Path) -> str:
    """Everything between the markers."""
    parts = []
    results = bench / "results.md"
    if results.exists():
        parts.append(
            "**The game, every scenario and mode** (`results.json`, written by "
            "`tools/bench/zero_stall.py`)\n\n" + results.read_text()
        )
    for name, title, build in (
        ("busy.json", "The model busy the whole time", busy_table),
        ("busy_loaded.json", "The same, with other processes busy on both cores", busy_table),
    ):
        document = _load(bench / name)
        if document is not None:
            parts.append(build(document, f"{title} (`{name}`)"))
    for name, render in (
        ("bench_ai.json", bench_ai_table),
        ("profile_tokens.json", tokens_table),
        ("gil.json", gil_table),
    ):
        document = _load(bench / name)
        if document is not None:
            parts.append(render(document))
    return "\n".join(parts)


def main() -> int:
    """Replace the page's generated block."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--page",
        type=Path,
        default=ROOT / "docs" / "benchmarks.md",
        help="the Markdown page with the markers (default: docs/benchmarks.md)",
    )
    parser.add_argument("--bench", type=Path, default=ROOT / "bench")
    args = parser.parse_args()
    text = args.page.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{args.page} has no {BEGIN} ... {END} block")
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    args.page.write_text(f"{head}{BEGIN}\n{block(args.bench)}{END}{tail}", encoding="utf-8")
    print(f"updated {args.page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
