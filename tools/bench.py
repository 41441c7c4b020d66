"""The zero-stall benchmark: the same scenarios with the AI off, async and sync, in one run.

Every configuration runs as its own headless process (``python -m game --headless``),
paced at real time so the model beside the loop sees what a player's game would see.
Modes are interleaved within each repeat, so machine noise hits them alike, and every
ratio is taken between runs of the same repeat. Then a scale sweep raises villagers and
props together. Writes ``bench/results.json`` and PNG charts.

``--tiers`` measures the remote tier instead, against llama.cpp's own server started on
127.0.0.1 with the packaged model: the same machine, so the server competes with the
game and the in-process model for the same two cores. Writes ``bench/tiers.json``.

    python tools/bench.py                 # the full run (about 10 minutes on 2 cores)
    python tools/bench.py --quick         # a short run for a smoke check
    python tools/bench.py --tiers         # local tier against local + remote
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.bubble_audit import audit  # noqa: E402
from tools.loopback import LlamaServer  # noqa: E402

MODES = ("off", "async", "sync")
BASE_NPCS, BASE_PROPS = 7, 67  # the village as shipped


def run_game(args: list[str], workdir: Path, tag: str) -> dict[str, Any]:
    """Run one headless game; return its report with the bubble-log audit folded in."""
    report_path, log_path = workdir / f"{tag}.json", workdir / f"{tag}.jsonl"
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    command = [sys.executable, "-m", "game", "--headless", "--samples", "--log", "WARNING"]
    command += ["--report", str(report_path), "--bubble-log", str(log_path), *args]
    started = time.perf_counter()
    result = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{tag} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(report_path.read_text())
    report["audit"] = audit(log_path)
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
    }


def median(values: list[float]) -> float:
    """Median that tolerates an empty list."""
    return round(statistics.median(values), 4) if values else 0.0


def bench_modes(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Each scenario in each mode, interleaved, ``repeats`` times."""
    runs: dict[str, list[dict[str, Any]]] = {}
    scenarios = ("village", "ambush", "crowd")
    for rep in range(args.repeats):
        print(f"repeat {rep + 1}/{args.repeats}", flush=True)
        for scenario in scenarios:
            for mode in MODES:
                if scenario == "crowd" and mode == "sync":
                    continue  # the sync stall is already shown; a crowd only lengthens it
                tag = f"{scenario}-{mode}-r{rep}"
                flags = ["--scenario", scenario, "--ai", mode, "--ticks", str(args.ticks)]
                runs.setdefault(f"{scenario}/{mode}", []).append(run_game(flags, workdir, tag))
    results: dict[str, Any] = {}
    for key, reports in runs.items():
        results[key] = {
            "runs": [summary(r) for r in reports],
            "tick_p99_ms_median": median([r["tick_ms"]["p99"] for r in reports]),
            "tick_max_ms_median": median([r["tick_ms"]["max"] for r in reports]),
        }
    for scenario in scenarios:
        off = runs.get(f"{scenario}/off", [])
        for mode in ("async", "sync"):
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
    """The README's table for the remote tier, from the results."""
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


def tables(results: dict[str, Any], scale: list[dict[str, Any]]) -> str:
    """The README's tables, written straight from the results so nothing is retyped."""

    def span(values: list[float], unit: str = " ms") -> str:
        low, high = min(values), max(values)
        return (
            f"{low:.2f}{unit}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}{unit}"
        )

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


def charts(results: dict[str, Any], out_dir: Path) -> list[str]:
    """Frame-time distributions, encounter latency and tokens per second, as PNGs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = results["_samples"]
    written = []
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for mode, colour in (("off", "#888888"), ("async", "#2a9d3a"), ("sync", "#d1492e")):
        ticks = sorted(samples.get(f"village/{mode}", {}).get("tick_ms", []))
        if ticks:
            share = [100.0 * (i + 1) / len(ticks) for i in range(len(ticks))]
            ax.plot(ticks, share, label=f"AI {mode}", color=colour, linewidth=2)
    ax.axvline(1000 / 60, color="black", linestyle="--", linewidth=1, label="16.7 ms budget")
    ax.set_xscale("log")
    ax.set_xlabel("tick processing time (ms, log scale)")
    ax.set_ylabel("ticks at or below (%)")
    ax.set_title("Session scenario: time per tick, AI off / async / sync")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    written.append(_save(fig, out_dir / "frame_times.png"))

    fig, ax = plt.subplots(figsize=(8, 4))
    latency = samples.get("village/async", {}).get("greet_latency_ticks", [])
    if latency:
        ax.hist(latency, bins=range(0, max(latency) + 2), color="#2a9d3a", align="left")
    ax.set_xlim(-0.5, max([10, *latency]) + 0.5)  # whole ticks, 0 at the left edge
    ax.set_xlabel("ticks from greeting trigger to bubble")
    ax.set_ylabel("greetings")
    ax.set_title("Encounter latency, village scenario, async (0 = same tick)")
    written.append(_save(fig, out_dir / "encounter_latency.png"))

    fig, ax = plt.subplots(figsize=(8, 4))
    keys = [k for k in results if k.endswith("/async") or k.endswith("/sync")]
    values = [
        median([r["tokens_per_s"]["p50"] for r in results[k]["runs"] if r["tokens_per_s"]])
        for k in keys
    ]
    ax.bar(keys, values, color="#3a6ea5")
    ax.set_title("Generation speed with the game running (tokens/s p50, median of runs)")
    ax.set_ylabel("tokens/s")
    ax.tick_params(axis="x", rotation=30)
    written.append(_save(fig, out_dir / "tokens_per_s.png"))
    return written


def _save(fig: Any, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return str(path.relative_to(ROOT))


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


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
    parser.add_argument("--tiers", action="store_true", help="the remote tier's benchmark")
    args = parser.parse_args()
    if args.tiers:
        return main_tiers(args)
    if args.quick:
        args.repeats, args.ticks, args.no_scale = 1, 300, True
    args.out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        results = bench_modes(args, workdir)
        scale = [] if args.no_scale else bench_scale(args, workdir)
    written = charts(results, args.out.parent)
    results.pop("_samples")
    summary_path = args.out.with_suffix(".md")
    summary_path.write_text(tables(results, scale))
    document = {
        "machine": machine(),
        "settings": {"repeats": args.repeats, "ticks": args.ticks, "paced": True},
        "wall_s": round(time.perf_counter() - started, 1),
        "modes": results,
        "scale": scale,
        "charts": written,
    }
    args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {args.out.relative_to(ROOT)}, {summary_path.relative_to(ROOT)}", *written)
    return 0


def main_tiers(args: argparse.Namespace) -> int:
    """Run the remote-tier benchmark; write ``bench/tiers.json`` and ``bench/tiers.md``."""
    if args.quick:
        args.repeats, args.ticks = 1, 300
    out = args.out.with_name("tiers.json")
    started = time.perf_counter()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        tiers = bench_tiers(args, Path(tmp))
    out.with_suffix(".md").write_text(tier_table(tiers))
    document = {
        "machine": machine(),
        "settings": {"repeats": args.repeats, "ticks": args.ticks, "paced": True},
        "load_average_at_start": [round(x, 2) for x in load],
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "server": "python -m llama_cpp.server on 127.0.0.1, same machine, 1 thread",
        "wall_s": round(time.perf_counter() - started, 1),
        **tiers,
    }
    out.write_text(json.dumps(document, indent=2) + "\n")
    print(tier_table(tiers))
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
