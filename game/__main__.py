"""Command line: ``python -m game [--headless ...]``. Flags only; ``app`` does the rest."""

from __future__ import annotations

import time

# Taken before the heavy imports below, so "first frame after X ms" counts them.
LAUNCHED_AT = time.perf_counter()

from game.core.shutdown import StopRequest  # noqa: E402

# Installed before the heavy imports, so that Ctrl+C at any moment ends the run cleanly.
STOP = StopRequest()
if __name__ == "__main__":
    STOP.install()

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from game.app import Options, run  # noqa: E402


def parse_args(argv: list[str] | None = None) -> Options:
    """Turn command-line flags into ``Options``."""
    parser = argparse.ArgumentParser(
        prog="python -m game",
        description="Zerostall: a physics village whose villagers talk without stalling the game.",
    )
    parser.add_argument("--headless", action="store_true", help="run without a window")
    parser.add_argument("--ticks", type=int, help="headless: ticks to run (default from config)")
    parser.add_argument("--seed", type=int, help="world seed (default from config)")
    parser.add_argument("--report", type=Path, help="headless: write the JSON report here")
    parser.add_argument(
        "--scenario", choices=("village", "ambush", "crowd"), help="headless: which bot run"
    )
    parser.add_argument(
        "--ai",
        choices=("on", "off", "async", "sync"),
        help="language model: off (templates only), async (zero-stall), sync (naive baseline)",
    )
    parser.add_argument("--ai-mode", choices=("async", "sync"), help="same as --ai async|sync")
    parser.add_argument("--backend", choices=("llama", "scripted"), help="model backend")
    parser.add_argument("--model", help="path to a GGUF model (default: the packaged Gemma 3 270M)")
    parser.add_argument("--npcs", type=int, help="extra generated villagers")
    parser.add_argument("--props", type=int, help="extra generated props")
    parser.add_argument("--unpaced", action="store_true", help="headless: do not keep real time")
    parser.add_argument(
        "--samples", action="store_true", help="headless: put raw per-tick samples in the report"
    )
    parser.add_argument("--bubble-log", type=Path, help="write every shown bubble as JSON lines")
    parser.add_argument("--config", type=Path, help="folder with game.toml and ai.toml")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a setting, e.g. --set game.world.seed=3 --set ai.model.n_threads=2",
    )
    parser.add_argument("--frames", type=int, default=0, help="window: quit after N frames")
    parser.add_argument("--screenshot", type=Path, help="window: save a screenshot on exit")
    parser.add_argument(
        "--log", default="INFO", help="log level (DEBUG, INFO, WARNING, ERROR, CRITICAL)"
    )
    parser.add_argument(
        "--save", type=Path, help="save file (default in a window: the user's data directory)"
    )
    parser.add_argument("--new", action="store_true", help="start fresh instead of continuing")
    ns = parser.parse_args(argv)
    ai = ns.ai_mode or ns.ai
    return Options(
        headless=ns.headless,
        ticks=ns.ticks,
        seed=ns.seed,
        report=ns.report,
        scenario=ns.scenario,
        ai_mode=None if ai is None else ("async" if ai == "on" else ai),
        backend=ns.backend,
        model=ns.model,
        extra_npcs=ns.npcs,
        extra_props=ns.props,
        paced=not ns.unpaced,
        bubble_log=ns.bubble_log,
        samples=ns.samples,
        config_dir=ns.config,
        overrides=tuple(ns.set),
        frames=ns.frames,
        screenshot=ns.screenshot,
        log_level=ns.log.upper(),
        save=ns.save,
        new=ns.new,
        launched_at=LAUNCHED_AT,
        stop=STOP,
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code.

    With no ``argv`` this is the real command line, which takes over SIGINT and SIGTERM;
    in-process callers (tests) keep their own handlers.
    """
    if argv is None:
        STOP.install()
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
