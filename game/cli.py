"""The command line: flags into ``Options``, the exit codes, and the one-line error."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from game.core.shutdown import StopRequest

EXIT_OK = 0
EXIT_MISTAKE = 2
"""A player's mistake (a bad flag, setting, asset or path): one line on stderr, no traceback."""

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

_CROWD_EXTRA_NPCS = 24


@dataclass(frozen=True, slots=True)
class Options:
    """Command-line choices; ``None`` means "as the config says"."""

    headless: bool = False
    ticks: int | None = None
    seed: int | None = None
    report: Path | None = None
    scenario: str | None = None
    ai_mode: str | None = None
    backend: str | None = None
    model: str | None = None
    extra_npcs: int | None = None
    extra_props: int | None = None
    paced: bool = True
    bubble_log: Path | None = None
    samples: bool = False
    config_dir: Path | None = None
    overrides: tuple[str, ...] = ()
    frames: int = 0
    screenshot: Path | None = None
    log_level: str = "INFO"
    save: Path | None = None
    new: bool = False
    #: ``time.perf_counter()`` when the program started, to log how soon a window shows.
    launched_at: float | None = None
    #: Set by SIGINT/SIGTERM; a fresh one (never set) when the caller has none.
    stop: StopRequest | None = None


def parse_args(
    argv: list[str] | None = None,
    *,
    launched_at: float | None = None,
    stop: StopRequest | None = None,
) -> Options:
    """Turn command-line flags into ``Options``, stamped with the launch time and stop."""
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
        launched_at=launched_at,
        stop=stop,
    )


def setting_overrides(options: Options) -> tuple[str, ...]:
    """The ``--set`` assignments the flags stand for, then the ``--set`` ones given."""
    pairs: list[tuple[str, object]] = [
        ("game.world.seed", options.seed),
        ("game.headless.ticks", options.ticks),
        ("game.headless.scenario", options.scenario),
        ("game.dialogue.ai_mode", options.ai_mode),
        ("ai.model.backend", options.backend),
        ("ai.model.model_path", options.model),
        ("game.world.extra_npcs", options.extra_npcs),
        ("game.world.extra_props", options.extra_props),
    ]
    if options.scenario == "crowd" and options.extra_npcs is None:
        pairs.append(("game.world.extra_npcs", _CROWD_EXTRA_NPCS))
    flags = tuple(f"{key}={json.dumps(value)}" for key, value in pairs if value is not None)
    return flags + options.overrides


def notice(message: str) -> None:
    """Print ``zerostall: <message>`` on stderr: something the player should know."""
    print(f"zerostall: {message}", file=sys.stderr)


def fail(message: str) -> int:
    """Print ``zerostall: error: <message>`` on stderr; return :data:`EXIT_MISTAKE`."""
    print(f"zerostall: error: {message}", file=sys.stderr)
    return EXIT_MISTAKE
