"""The zero-stall benchmark: the same scenarios with the AI off, async, sync and the plain peer.

Every configuration runs as its own headless game process (``tools/bench/headless_game.py``,
which is ``python -m game`` with a choice of runtime), paced at real time so the model
beside the loop sees what a player's game would see. The modes:

- ``off``: template lines only, no model;
- ``async``: the game's ``AiRuntime`` (zero stall); ``sync``: the naive baseline;
- ``plain``: the same game served by the textbook design, the simplest peer
  (``tools/peers/plain_runtime.py``: a ``queue.Queue``, one worker thread calling
  ``Llama.create_completion(stream=True)``, a task queue drained every tick);
- ``async-busy`` and ``plain-busy``: the same two with the worker kept generating back
  to back by filler lines the game never sees, so it is busy the whole time, not only
  when the game asks.

Modes are interleaved within each repeat, so machine noise hits them alike, and every
ratio is taken between runs of the same repeat. Then a scale sweep raises villagers and
props together. Each run records the machine's load average. Writes
``bench/results.json``, ``bench/results.md`` (the tables of ``docs/benchmarks.md``) and
PNG charts.

``--tiers`` measures the remote tier instead, against llama.cpp's own server started on
127.0.0.1 with the packaged model: the same machine, so the server competes with the
game and the in-process model for the same two cores. Writes ``bench/tiers.json``.

    python tools/bench/zero_stall.py              # the full run (about 13 minutes on 2 cores)
    python tools/bench/zero_stall.py --ticks 600  # as `make bench-all` runs it (about 9 minutes)
    python tools/bench/zero_stall.py --quick      # a short run for a smoke check
    python tools/bench/zero_stall.py --tiers      # local tier against local + remote
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ai import ModelConfig  # noqa: E402
from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from tests.support.loopback import LlamaServer  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402
from tools.eval.bubble_audit import audit  # noqa: E402

MODES = ("off", "async", "sync", "plain", "async-busy", "plain-busy")
SCENARIOS = ("village", "ambush", "crowd")
# mode -> (the game's --ai flag, this tool's runtime flags)
_MODE_FLAGS: dict[str, tuple[str, list[str]]] = {
    "off": ("off", []),
    "async": ("async", []),
    "sync": ("sync", []),
    "plain": ("async", ["--runtime", "plain"]),
    "async-busy": ("async", ["--back-to-back"]),
    "plain-busy": ("async", ["--runtime", "plain", "--back-to-back"]),
}
# Each pair: the project's runtime and its peer, compared within one repeat.
PAIRS = (("async", "plain"), ("async-busy", "plain-busy"))
BASE_NPCS, BASE_PROPS = 7, 67  # the village as shipped


def run_game(
    args: list[str], workdir: Path, tag: str, runtime: list[str] | None = None
) -> dict[str, Any]:
    """Run one headless game; return its report with the bubble-log audit folded in."""
    report_path, log_path = workdir / f"{tag}.json", workdir / f"{tag}.jsonl"
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    command = [sys.executable, str(ROOT / "tools" / "bench" / "headless_game.py"), *(runtime or [])]
    command += ["--headless", "--samples", "--log", "WARNING"]
    command += ["--report", str(report_path), "--bubble-log", str(log_path), *args]
    started = time.perf_counter()
    load_before = load_average()
    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0 and not report_path.exists():
        raise SystemExit(f"{tag} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(report_path.read_text())
    # The report is written before shutdown; a crash after it is counted, not hidden.
    report["exit_code"] = result.returncode
    if result.returncode != 0:
        print(f"  {tag}: exited with {result.returncode} after writing its report", flush=True)
    report["audit"] = audit(log_path)
    report["load_average_1min"] = [*load_before[:1], *load_average()[:1]]
    tick = report["tick_ms"]
    elapsed = time.perf_counter() - started
    print(
        f"  {tag:<28} tick p99 {tick['p99']:6.3f} ms  max {tick['max']:8.2f} ms ({elapsed:.1f} s)",
        flush=True,
    )
    return report


def greeting_share(report: dict[str, Any]) -> float | None:
    """Share of greetings shown within one tick of their trigger."""
    ai = report["ai"]
    return ai["greetings_within_1_tick"] / ai["encounters"] if ai["encounters"] else None


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """The figures of one run that the results table needs."""
    ai = report["ai"]
    return {
        "tick_ms": report["tick_ms"],
        "overruns": report["overruns"],
        "main_thread_ai_ms": ai.get("main_thread_ai_ms"),
        "greetings_within_1_tick": greeting_share(report),
        "encounters": ai.get("encounters", 0),
        "greetings_in_time": ai.get("greetings_within_1_tick", 0),
        "encounter_latency_ticks": ai.get("encounter_latency_ticks"),
        "stale_dropped": ai.get("stale_dropped", {}),
        "predictive": ai.get("predictive", {}),
        "fallbacks": ai.get("fallbacks", {}),
        "ttft_ms": ai.get("ttft_ms"),
        "tokens_per_s": ai.get("tokens_per_s"),
        "audit": report["audit"],
        "npcs": report["npcs"],
        "props": report["props"],
        "load_average_1min": report["load_average_1min"],
        "exit_code": report["exit_code"],
    }


def median(values: list[float]) -> float:
    """Median that tolerates an empty list."""
    return round(statistics.median(values), 4) if values else 0.0


def bench_modes(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Each scenario in each mode, interleaved, ``repeats`` times."""
    runs: dict[str, list[dict[str, Any]]] = {}
    scenarios = args.scenarios
    for rep in range(args.repeats):
        print(f"repeat {rep + 1}/{args.repeats}", flush=True)
        for scenario in scenarios:
            for mode in args.modes:
                if scenario == "crowd" and mode == "sync":
                    continue  # the sync stall is already shown; a crowd only lengthens it
                tag = f"{scenario}-{mode}-r{rep}"
                ai_flag, runtime = _MODE_FLAGS[mode]
                flags = ["--scenario", scenario, "--ai", ai_flag, "--ticks", str(args.ticks)]
                report = run_game(flags, workdir, tag, runtime)
                runs.setdefault(f"{scenario}/{mode}", []).append(report)
    results: dict[str, Any] = {}
    for key, reports in runs.items():
        results[key] = {
            "runs": [summary(r) for r in reports],
            "tick_p99_ms_median": median([r["tick_ms"]["p99"] for r in reports]),
            "tick_max_ms_median": median([r["tick_ms"]["max"] for r in reports]),
        }
    for scenario in scenarios:
        off = runs.get(f"{scenario}/off", [])
        for mode in args.modes:
            if mode == "off":
                continue
            paired = list(zip(runs.get(f"{scenario}/{mode}", []), off, strict=False))
            if paired:
                ratios = [a["tick_ms"]["p99"] / max(b["tick_ms"]["p99"], 1e-6) for a, b in paired]
                results[f"{scenario}/{mode}"]["tick_p99_ratio_vs_off"] = [
                    round(r, 3) for r in ratios
                ]
    results["_samples"] = {
        key: {
            "tick_ms": [ms for r in reports for ms in r["samples"]["tick_ms"]],
            "greet_latency_ticks": [
                t for r in reports for t in r["samples"]["greet_latency_ticks"]
            ],
        }
        for key, reports in runs.items()
    }
    return results


def compare_peers(results: dict[str, Any], scenarios: tuple[str, ...]) -> list[dict[str, Any]]:
    """Tick p99 over AI off, and tokens/s, for the runtime beside its plain peer."""
    rows = []
    for scenario in scenarios:
        for mine, peer in PAIRS:
            a, b = results.get(f"{scenario}/{mine}"), results.get(f"{scenario}/{peer}")
            if a is None or b is None or "tick_p99_ratio_vs_off" not in a:
                continue
            ratio_a, ratio_b = a["tick_p99_ratio_vs_off"], b["tick_p99_ratio_vs_off"]
            rows.append(
                {
                    "scenario": scenario,
                    "runtime": mine,
                    "peer": peer,
                    "tick_p99_over_off": {mine: ratio_a, peer: ratio_b},
                    "tokens_per_s_p50": {
                        mine: [r["tokens_per_s"]["p50"] for r in a["runs"]],
                        peer: [r["tokens_per_s"]["p50"] for r in b["runs"]],
                    },
                    "repeats_runtime_at_most_peer": sum(
                        x <= y for x, y in zip(ratio_a, ratio_b, strict=False)
                    ),
                    "repeats": min(len(ratio_a), len(ratio_b)),
                }
            )
    return rows


def bench_scale(args: argparse.Namespace, workdir: Path) -> list[dict[str, Any]]:
    """Villagers and props raised together, with the model running async."""
    steps = [(6, 60), (15, 150), (30, 300), (60, 600)]
    out = []
    print("scale sweep", flush=True)
    for npcs, props in steps:
        flags = [
            "--scenario", "crowd", "--ai", "async", "--ticks", str(args.ticks),
            "--npcs", str(max(0, npcs - BASE_NPCS)), "--props", str(max(0, props - BASE_PROPS)),
        ]  # fmt: skip
        report = run_game(flags, workdir, f"scale-{npcs}x{props}")
        out.append({"target_npcs": npcs, "target_props": props, **summary(report)})
    return out


def _remote_flags(base_url: str, *, only_remote: bool) -> list[str]:
    flags = ["--set", "ai.remote.enabled=true", "--set", f'ai.remote.base_url="{base_url}"']
    # The server's first request reads the whole shared prompt (the warm-up): allow for it.
    flags += ["--set", "ai.remote.read_timeout_s=60", "--set", "ai.remote.request_timeout_s=90"]
    if only_remote:
        for name in ("player_chat", "reactive", "predictive", "ambient"):
            flags += ["--set", f'ai.routing.{name}=["remote"]']
    return flags


def _tier_figures(report: dict[str, Any]) -> dict[str, Any]:
    ai = report["ai"]
    return {
        "tick_ms": report["tick_ms"],
        "overruns": report["overruns"],
        "encounters": ai.get("encounters", 0),
        "greetings_in_time": ai.get("greetings_within_1_tick", 0),
        "lines_by_tier": ai.get("lines_by_tier", {}),
        "tiers": ai.get("tiers", {}),
        "fallbacks": ai.get("fallbacks", {}),
        "npcs": report["npcs"],
    }


def bench_tiers(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """AI off, local only and local + remote, interleaved, against a loopback server."""
    from ai import AiConfig
    from ai.model import resolve_model_path

    server = LlamaServer(resolve_model_path(AiConfig().model))
    server.start()
    configs: list[tuple[str, list[str]]] = [
        ("village/off", ["--scenario", "village", "--ai", "off"]),
        ("village/all-remote", ["--scenario", "village", "--ai", "async",
                                *_remote_flags(server.base_url, only_remote=True)]),
        ("village/local", ["--scenario", "village", "--ai", "async"]),
    ]  # fmt: skip
    for npcs in (30, 60):
        props = npcs * 10
        crowd = ["--scenario", "crowd", "--ai", "async", "--npcs", str(npcs - BASE_NPCS),
                 "--props", str(props - BASE_PROPS)]  # fmt: skip
        configs.append((f"crowd-{npcs}/local", crowd))
        configs.append((f"crowd-{npcs}/local+remote", [*crowd, *_remote_flags(
            server.base_url, only_remote=False)]))  # fmt: skip
    runs: dict[str, list[dict[str, Any]]] = {}
    crashed: list[str] = []
    try:
        for rep in range(args.repeats):
            print(f"tiers, repeat {rep + 1}/{args.repeats}", flush=True)
            for key, flags in configs:
                tag = key.replace("/", "-") + f"-r{rep}"
                # Let the server finish what the last run left it before the next one starts.
                time.sleep(3.0)
                try:
                    report = run_game([*flags, "--ticks", str(args.ticks)], workdir, tag)
                except SystemExit as exc:
                    # A run that dies (on exit, a worker still inside llama.cpp) is recorded,
                    # not retried: the table shows what was measured.
                    print(exc, flush=True)
                    crashed.append(tag)
                    continue
                runs.setdefault(key, []).append(_tier_figures(report))
    finally:
        server.stop()
    out: dict[str, Any] = {"runs": runs, "crashed": crashed}
    off, remote = runs.get("village/off", []), runs.get("village/all-remote", [])
    out["tick_p99_ratio_all_remote_vs_off"] = [
        round(a["tick_ms"]["p99"] / max(b["tick_ms"]["p99"], 1e-6), 3)
        for a, b in zip(remote, off, strict=False)
    ]
    return out


def tier_table(tiers: dict[str, Any]) -> str:
    """The remote tier's table (``docs/remote.md`` quotes it), from the results."""
    rows = [
        "| run | tick p99 | lines local / remote | first token, local p50 / p95 "
        "| first token, remote p50 / p95 | greetings within 1 tick |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for key, runs in tiers["runs"].items():
        for run in runs:
            lines = run["lines_by_tier"]
            ttft = {}
            for name, tier in run["tiers"].items():
                ms = tier["ttft_from_submit_ms"]
                ttft[name] = f"{ms['p50']:.0f} / {ms['p95']:.0f} ms" if ms["p50"] else "–"
            rows.append(
                f"| {key} | {run['tick_ms']['p99']:.2f} ms "
                f"| {lines.get('local', 0)} / {lines.get('remote', 0)} "
                f"| {ttft.get('local', '–')} | {ttft.get('remote', '–')} "
                f"| {run['greetings_in_time']} of {run['encounters']} |"
            )
    return "\n".join(rows) + "\n"


def span(values: list[float], unit: str = " ms") -> str:
    """``low–high`` with two decimals, or one value when they print alike."""
    low, high = min(values), max(values)
    return f"{low:.2f}{unit}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}{unit}"


def peer_table(peers: list[dict[str, Any]]) -> str:
    """The runtime beside the plain peer: tick p99 over AI off, tokens/s, per repeat."""
    rows = [
        "The runtime beside the plain peer, each repeat's ratio against its own AI-off run:",
        "",
        "| scenario | worker busy | tick p99 / off: runtime | tick p99 / off: plain "
        "| runtime ≤ plain | tokens/s p50: runtime | tokens/s p50: plain |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in peers:
        mine, peer = row["runtime"], row["peer"]
        ratios, rates = row["tick_p99_over_off"], row["tokens_per_s_p50"]
        busy = "back to back" if mine.endswith("busy") else "as the game asks"
        rows.append(
            f"| {row['scenario']} | {busy} "
            f"| {', '.join(f'{r:.2f}' for r in ratios[mine])} "
            f"| {', '.join(f'{r:.2f}' for r in ratios[peer])} "
            f"| {row['repeats_runtime_at_most_peer']} of {row['repeats']} "
            f"| {span(rates[mine], '')} | {span(rates[peer], '')} |"
        )
    return "\n".join(rows) + "\n"


def tables(results: dict[str, Any], scale: list[dict[str, Any]]) -> str:
    """The tables of ``docs/benchmarks.md``, written straight from the results, never retyped."""

    rows = [
        "| scenario | AI | tick p50 | tick p99 | tick max | overruns | greetings within 1 tick "
        "| stale lines dropped | bubbles failing the audit |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for key, entry in results.items():
        if key.startswith("_"):
            continue
        scenario, mode = key.split("/")
        runs = entry["runs"]
        ticks = [r["tick_ms"] for r in runs]
        in_time = sum(r["greetings_in_time"] for r in runs)
        greet = (
            "templates" if mode == "off" else f"{in_time} of {sum(r['encounters'] for r in runs)}"
        )
        stale = sum(sum(r["stale_dropped"].values()) for r in runs)
        failed = sum(r["audit"]["violations"] for r in runs)
        audit = f"{failed} of {sum(r['audit']['checked'] for r in runs)}"
        rows.append(
            f"| {scenario} ({runs[0]['npcs']}, {runs[0]['props']}) | {mode} "
            f"| {span([t['p50'] for t in ticks])} | {span([t['p99'] for t in ticks])} "
            f"| {max(t['max'] for t in ticks):.2f} ms "
            f"| {', '.join(str(r['overruns']) for r in runs)} "
            f"| {greet} | {stale if mode != 'off' else '–'} | {audit if mode != 'off' else '–'} |"
        )
    out = "\n".join(rows) + "\n"
    if scale:
        out += (
            "\nScale: the `crowd` route, async, villagers and props raised together.\n"
            "\n| villagers, props | tick p50 | tick p99 | tick max | AI in tick, max "
            "| greetings within 1 tick |\n| --- | --- | --- | --- | --- | --- |\n"
        )
        for step in scale:
            t = step["tick_ms"]
            out += (
                f"| {step['npcs']}, {step['props']} | {t['p50']:.2f} ms | {t['p99']:.2f} ms "
                f"| {t['max']:.2f} ms | {step['main_thread_ai_ms']['max']:.2f} ms "
                f"| {step['greetings_in_time']} of {step['encounters']} |\n"
            )
    return out


def charts(results: dict[str, Any], peers: list[dict[str, Any]], out_dir: Path) -> list[str]:
    """Frame-time distributions, peer ratios, encounter latency and tokens/s, as PNGs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = results["_samples"]
    written = []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for mode, colour in (
        ("off", "#888888"),
        ("async", "#2a9d3a"),
        ("plain", "#3a6ea5"),
        ("async-busy", "#7ac77f"),
        ("plain-busy", "#8fb3de"),
        ("sync", "#d1492e"),
    ):
        ticks = sorted(samples.get(f"village/{mode}", {}).get("tick_ms", []))
        if ticks:
            share = [100.0 * (i + 1) / len(ticks) for i in range(len(ticks))]
            ax.plot(ticks, share, label=f"AI {mode}", color=colour, linewidth=1.5)
    ax.axvline(1000 / 60, color="black", linestyle="--", linewidth=1, label="16.7 ms budget")
    ax.set_xscale("log")
    ax.set_xlabel("tick processing time (ms, log scale)")
    ax.set_ylabel("ticks at or below (%)")
    ax.set_title("Village: time per tick, AI off / runtime / plain peer / sync")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    written.append(_save(fig, out_dir / "frame_times.png"))
    if peers:
        written.append(_peer_chart(peers, out_dir / "tick_p99_vs_peer.png"))

    fig, ax = plt.subplots(figsize=(8, 4))
    latency = samples.get("village/async", {}).get("greet_latency_ticks", [])
    if latency:
        ax.hist(latency, bins=range(0, max(latency) + 2), color="#2a9d3a", align="left")
    ax.set_xlim(-0.5, max([10, *latency]) + 0.5)  # whole ticks, 0 at the left edge
    ax.set_xlabel("ticks from greeting trigger to bubble")
    ax.set_ylabel("greetings")
    ax.set_title("Encounter latency, village scenario, async (0 = same tick)")
    written.append(_save(fig, out_dir / "encounter_latency.png"))

    fig, ax = plt.subplots(figsize=(10, 4.5))
    keys = [k for k in results if not k.startswith("_") and not k.endswith("/off")]
    values = [
        median([r["tokens_per_s"]["p50"] for r in results[k]["runs"] if r["tokens_per_s"]])
        for k in keys
    ]
    ax.bar(keys, values, color="#3a6ea5")
    ax.set_title("Generation speed with the game running (tokens/s p50, median of runs)")
    ax.set_ylabel("tokens/s")
    ax.tick_params(axis="x", rotation=45)
    written.append(_save(fig, out_dir / "tokens_per_s.png"))
    return written


def _peer_chart(peers: list[dict[str, Any]], path: Path) -> str:
    """Tick p99 over AI off per scenario: the runtime's bars beside the plain peer's."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.38
    labels = []
    for i, row in enumerate(peers):
        labels.append(f"{row['scenario']}\n{'busy' if row['runtime'].endswith('busy') else 'game'}")
        for side, (mode, colour) in enumerate(
            ((row["runtime"], "#2a9d3a"), (row["peer"], "#3a6ea5"))
        ):
            ratios = row["tick_p99_over_off"][mode]
            mid = statistics.median(ratios)
            ax.bar(
                i + (side - 0.5) * width,
                mid,
                width,
                yerr=[[mid - min(ratios)], [max(ratios) - mid]],
                color=colour,
                capsize=3,
                label=("runtime" if side == 0 else "plain peer") if i == 0 else None,
            )
    ax.axhline(1.0, color="black", linewidth=1)
    ax.axhline(1.10, color="black", linestyle="--", linewidth=1, label="target 1.10")
    ax.set_xticks(range(len(peers)), labels)
    ax.set_ylabel("tick p99 / AI off (median, range over repeats)")
    ax.set_title("Tick p99 beside the model: the runtime and the plain worker, same run")
    ax.legend()
    ax.grid(alpha=0.3, axis="y")
    return _save(fig, path)


def _save(fig: Figure, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return _shown(path)


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _model() -> ModelConfig:
    """The model the game's configuration names, which every run loads."""
    return load_settings(CONFIG_DIR).ai.model


def main() -> int:
    """Run the benchmark and write the results and charts."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--ticks", type=int, default=900)
    parser.add_argument("--quick", action="store_true", help="1 repeat of 300 ticks, no sweep")
    parser.add_argument("--no-scale", action="store_true", help="skip the scale sweep")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results.json")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma separated")
    parser.add_argument("--modes", default=",".join(MODES), help="comma separated")
    parser.add_argument("--tiers", action="store_true", help="the remote tier's benchmark")
    args = parser.parse_args()
    if args.tiers:
        return main_tiers(args)
    if args.quick:
        args.repeats, args.ticks, args.no_scale = 1, 300, True
    args.scenarios = tuple(filter(None, args.scenarios.split(",")))
    args.modes = tuple(filter(None, args.modes.split(",")))
    unknown = sorted(set(args.scenarios) - set(SCENARIOS)) + sorted(set(args.modes) - set(MODES))
    if unknown:
        parser.error(f"unknown scenarios or modes: {', '.join(unknown)}")
    if "off" not in args.modes:
        parser.error("the modes must include off: every ratio is taken against it")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    load_before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        results = bench_modes(args, workdir)
        scale = [] if args.no_scale else bench_scale(args, workdir)
    load_after = load_average()
    peers = compare_peers(results, args.scenarios)
    written = charts(results, peers, args.out.parent)
    results.pop("_samples")
    summary_path = args.out.with_suffix(".md")
    summary_path.write_text(tables(results, scale) + "\n" + peer_table(peers))
    document = {
        "machine": machine_header(load_before, model=_model(), load_at_end=load_after),
        "settings": {
            "repeats": args.repeats,
            "ticks": args.ticks,
            "paced": True,
            "scenarios": list(args.scenarios),
            "modes": list(args.modes),
        },
        "wall_s": round(time.perf_counter() - started, 1),
        "modes": results,
        "peers": peers,
        "scale": scale,
        "charts": written,
    }
    args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {_shown(args.out)}, {_shown(summary_path)}", *written)
    return 0


def main_tiers(args: argparse.Namespace) -> int:
    """Run the remote-tier benchmark; write ``bench/tiers.json`` and ``bench/tiers.md``."""
    if args.quick:
        args.repeats, args.ticks = 1, 300
    out = args.out.with_name("tiers.json")
    started = time.perf_counter()
    load = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        tiers = bench_tiers(args, Path(tmp))
    out.with_suffix(".md").write_text(tier_table(tiers))
    document = {
        "machine": machine_header(load, model=_model()),
        "settings": {"repeats": args.repeats, "ticks": args.ticks, "paced": True},
        "server": "python -m llama_cpp.server on 127.0.0.1, same machine, 1 thread",
        "wall_s": round(time.perf_counter() - started, 1),
        **tiers,
    }
    out.write_text(json.dumps(document, indent=2) + "\n")
    print(tier_table(tiers))
    print(f"wrote {_shown(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
