"""The one place that builds and wires everything: settings, world, dialogue, window."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ai import (
    AiConfig,
    Backend,
    Exchange,
    FallbackSource,
    HygieneConfig,
    LlamaBackend,
    PromptSpec,
    Router,
    ScriptedBackend,
    build_router,
)
from game.assets import AssetError, asset_path
from game.config.checks import warn_about
from game.config.loader import ConfigError
from game.config.settings import CONFIG_DIR, Settings, load_settings
from game.core.gcwatch import settle_heap
from game.core.session import Session
from game.core.shutdown import StopRequest
from game.decisions.decider import Decider
from game.decisions.options import OptionFinder
from game.dialogue.disruptions import Disruptions
from game.dialogue.facts import matching_facts
from game.dialogue.line_plan import LinePlanner, load_trigger_words
from game.dialogue.line_source import LineSource, SourceStatus, TemplateLineSource
from game.dialogue.memory import MEMORY_FACTS, MEMORY_WINDOW, Memories
from game.dialogue.model_line_source import ModelLineSource
from game.dialogue.persona_prompt import Persona, shared_context
from game.dialogue.speech import Dialogue
from game.dialogue.templates import TemplateFallback, TemplateLines
from game.persist.autosave import Autosave, restore
from game.persist.lock import SaveInUseError
from game.persist.paths import default_save_path, start_new
from game.persist.saver import Saver
from game.persist.store import SaveStore
from game.sim.cast import Fact, NpcSpec, load_cast
from game.sim.level import load_level
from game.sim.ticks import ticks
from game.sim.world import World

logger = logging.getLogger(__name__)

_CROWD_EXTRA_NPCS = 24

#: Builds the model runtime from its settings, backend and fallback; ``build_router``
#: unless a benchmark swaps in a peer design.
RuntimeFactory = Callable[[AiConfig, Backend, FallbackSource], Router]


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


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def run(options: Options, runtime_factory: RuntimeFactory = build_router) -> int:
    """Run the game as ``options`` ask; returns the exit code (2 for a player's mistake).

    SIGINT and SIGTERM (through ``options.stop``) end the run after the current tick, with
    the report written, the bubble log flushed and the model worker joined: exit code 0.
    """
    if options.log_level not in LOG_LEVELS:
        print(
            f"zerostall: error: unknown log level {options.log_level!r} "
            f"(expected one of {', '.join(LOG_LEVELS)})",
            file=sys.stderr,
        )
        return 2
    logging.basicConfig(
        level=getattr(logging, options.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    stop = options.stop or StopRequest()
    with ExitStack() as stack:
        try:
            settings = load_settings(options.config_dir or CONFIG_DIR, _overrides(options))
            warn_about(settings)
            if options.report is not None:
                check_writable(options.report)
            log = None
            if options.bubble_log is not None:
                # Line-buffered: every bubble is on disk as soon as it is shown, so a killed
                # run still leaves its log.
                log = stack.enter_context(
                    options.bubble_log.open("w", encoding="utf-8", buffering=1)
                )
            village = build_village(settings, bubble_log=log, runtime_factory=runtime_factory)
        except (ConfigError, AssetError) as exc:
            print(f"zerostall: error: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            print(f"zerostall: error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
            return 2
        stack.callback(village.close)
        try:
            autosave = open_save(village, settings, options)
        except ConfigError as exc:
            print(f"zerostall: error: {exc}", file=sys.stderr)
            return 2
        if autosave is not None:
            stack.callback(autosave.close)
            village.autosave = autosave
        if options.headless:
            return _run_headless(village, settings, options, stop)
        return _run_window(village, settings, options, stop)


def open_save(village: Session, settings: Settings, options: Options) -> Autosave | None:
    """Continue from the save (or start fresh with ``--new``) and return the autosave.

    Window play saves unless ``save.enabled`` is false; headless runs only with ``--save``.
    Raises ConfigError for a ``--save`` path that cannot be written; any other trouble
    with the save file means playing on without saving, after one warning.
    """
    config = settings.game.save
    if options.save is not None:
        check_writable(options.save)
        path = options.save
    elif options.headless or not config.enabled:
        return None
    else:
        path = Path(config.path).expanduser() if config.path else default_save_path()
    try:
        if options.new:
            start_new(path)
        store = SaveStore(path)
        state = store.load()
    except SaveInUseError as exc:
        if options.headless:
            raise ConfigError(f"{exc}; use another --save path") from None
        _notice(village, f"{exc}; playing without saving")
        return None
    except (OSError, sqlite3.Error) as exc:
        _notice(village, f"cannot use the save file {path} ({exc}); playing without saving")
        return None
    if store.moved_aside is not None:
        _notice(
            village,
            f"the save file was damaged or not ours; kept it as "
            f"{store.moved_aside.name} and started a new game",
        )
    if store.dropped:
        _notice(
            village,
            f"the save had {len(store.dropped)} damaged entr"
            f"{'y' if len(store.dropped) == 1 else 'ies'}, left out: {'; '.join(store.dropped)}",
        )
    if state is not None:
        lines = restore(village.world, village.dialogue.memories, state)
        logger.info("continuing the saved game: %d lines remembered (save %d)", lines, state.saves)
    interval = ticks(config.interval_s)
    return Autosave(village.world, village.dialogue.memories, Saver(store), interval)


def _notice(village: Session, message: str) -> None:
    """Tell the player once: on the terminal now, and in the window when it opens."""
    print(f"zerostall: {message}", file=sys.stderr)
    village.notices.append(message[:1].upper() + message[1:] + ".")


def check_writable(path: Path) -> None:
    """Fail now, not after a long run, when ``path`` cannot be written. Raises ConfigError."""
    if path.is_dir():
        raise ConfigError(f"cannot write {path}: it is a directory")
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create the folder {parent}: {exc.strerror}") from None
    target = path if path.exists() else parent
    if not os.access(target, os.W_OK):
        raise ConfigError(f"cannot write {path}: permission denied")


def build_village(
    settings: Settings,
    backend: Backend | None = None,
    bubble_log: IO[str] | None = None,
    runtime_factory: RuntimeFactory = build_router,
) -> Session:
    """Load the level and villagers and wire the dialogue. Raises AssetError, ConfigError.

    ``backend`` writes the villagers' lines when the AI is on; by default the one that
    ``ai.model.backend`` names (llama.cpp, or the scripted fake). ``runtime_factory``
    builds the runtime that serves it.
    """
    world_config = settings.game.world
    level = load_level(asset_path(world_config.level))
    cast = load_cast(asset_path(world_config.cast))
    world = World(
        level,
        cast,
        seed=world_config.seed,
        extra_npcs=world_config.extra_npcs,
        extra_props=world_config.extra_props,
    )
    specs = {npc_id: _spec(world, npc_id) for npc_id in world.npc_ids()}
    names = {npc_id: spec.name for npc_id, spec in specs.items()}
    templates = TemplateLines(
        {npc_id: spec.templates for npc_id, spec in specs.items()}, names, seed=world_config.seed
    )
    memories = Memories()
    disruptions = Disruptions(world)
    dialogue_config = settings.game.dialogue
    source: LineSource
    status: SourceStatus
    lane: ModelLineSource | None = None
    if dialogue_config.ai_mode == "off":
        source = status = TemplateLineSource(templates, {world.player_status().id: "traveller"})
    else:
        model = _model_source(
            settings, backend, runtime_factory, world, specs, templates, memories, disruptions
        )
        model.checker.record_facts = bubble_log is not None
        source = status = lane = model
    decider = Decider(
        world,
        OptionFinder(world, level),
        memories,
        disruptions,
        lane,
    )
    dialogue = Dialogue(
        source,
        names,
        bubble_ticks=ticks(dialogue_config.bubble_s),
        chat_bubble_ticks=ticks(dialogue_config.chat_bubble_s),
        player_text_max_chars=settings.ai.hygiene.player_text_max_chars,
        memories=memories,
        disruptions=disruptions,
        bubble_log=bubble_log,
        topic_of=_topics(specs, world.cast.facts),
        on_reply=decider.chat_replied,
    )
    return Session(world, dialogue, status, decider=decider)


def _topics(specs: Mapping[int, NpcSpec], shared: tuple[Fact, ...]) -> Callable[[int, str], str]:
    """What a villager remembers being asked about: the topic of the fact that answers."""

    def topic_of(npc_id: int, question: str) -> str:
        spec = specs.get(npc_id)
        facts = () if spec is None else matching_facts(question, spec.facts, shared)
        return facts[0].topic if facts else ""

    return topic_of


def _spec(world: World, npc_id: int) -> NpcSpec:
    spec = world.npc_spec(npc_id)
    if spec is None:
        raise AssetError(f"villager {npc_id} has no persona data")
    return spec


def _model_source(
    settings: Settings,
    backend: Backend | None,
    runtime_factory: RuntimeFactory,
    world: World,
    specs: Mapping[int, NpcSpec],
    templates: TemplateLines,
    memories: Memories,
    disruptions: Disruptions,
) -> ModelLineSource:
    """The language model's line source, its model loading in the background."""
    ai = settings.ai
    if backend is None:
        backend = (
            ScriptedBackend(ai.scripted) if ai.model.backend == "scripted" else LlamaBackend(ai)
        )
    # By default the local tier always, and an OpenAI-compatible server as a second tier
    # when configured.
    runtime = runtime_factory(ai, backend, TemplateFallback(templates))
    personas = {
        npc_id: Persona(
            spec.name, spec.role, spec.persona, spec.templates, spec.openers, spec.facts
        )
        for npc_id, spec in specs.items()
    }
    context = shared_context(list(personas.values()))
    planner = LinePlanner(context, personas, load_trigger_words(), ai.generation, world.cast.facts)
    runtime.start(largest_prompts(context, personas.values(), ai.hygiene))
    return ModelLineSource(
        runtime,
        world,
        personas,
        planner,
        memories,
        templates,
        ai.scheduler,
        disruptions,
        mode=settings.game.dialogue.ai_mode,
        sync_wait_s=settings.game.dialogue.sync_wait_s,
    )


def largest_prompts(
    context: str, personas: Iterable[Persona], hygiene: HygieneConfig
) -> list[tuple[str, PromptSpec]]:
    """Each villager's longest possible prompt, longest persona first, for the load check.

    The shared prefix plus a full memory (every remembered line and fact at its longest)
    and a player's line at its cap.
    """
    longest = sorted(personas, key=lambda p: len(p.persona), reverse=True)
    line = ("word " * hygiene.max_chars)[: hygiene.max_chars]
    history = tuple(Exchange("Player", line) for _ in range(MEMORY_WINDOW))
    notes = tuple(line for _ in range(MEMORY_FACTS + 1))  # the facts and the summary
    player = ("word " * hygiene.player_text_max_chars)[: hygiene.player_text_max_chars]
    return [
        (
            f"{p.name} the {p.role} (persona of {len(p.persona)} characters)",
            PromptSpec(context, p.label, "is spoken to", notes, history, player),
        )
        for p in longest
    ]


def _overrides(options: Options) -> tuple[str, ...]:
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


def _run_headless(village: Session, settings: Settings, options: Options, stop: StopRequest) -> int:
    from game.headless import run_headless
    from game.input.bot import Bot

    headless = settings.game.headless
    world = village.world
    bot = Bot(
        headless.scenario,
        seed=settings.game.world.seed,
        level=world.level_view(),
        talk_radius=world.talk_radius,
    )
    state, ready_at = _wait_ready(village, stop, timeout_s=120.0)
    startup = _startup_figures(options.launched_at, ready_at)
    if state == "degraded":
        source = village.ai
        reason = (
            source.runtime.load_progress().error if isinstance(source, ModelLineSource) else None
        )
        print(
            f"zerostall: the model could not load ({reason or 'see the log'}); "
            "villagers use template lines",
            file=sys.stderr,
        )
    settle_heap()
    if startup:
        startup["first_tick_ms"] = _ms_since(options.launched_at)
        logger.info(
            "first tick %.0f ms after start (model ready at %.0f ms)",
            startup["first_tick_ms"],
            startup.get("model_ready_ms", -1.0),
        )
    report = run_headless(
        village,
        bot,
        headless.ticks,
        settings.game.loop,
        paced=options.paced,
        stop=lambda: stop.requested,
    )
    # Shut the model down before the report is written, so it can say nothing was left.
    village.close()
    after = village.ai_report()
    if isinstance(report.get("ai"), dict) and "queue_depth" in after:
        report["ai"]["after_shutdown"] = {
            "queue_depth": after["queue_depth"],
            "in_flight": after["in_flight"],
        }
    if isinstance(village.autosave, Autosave):
        report["save"] = village.autosave.report()
    if startup:
        report["startup"] = startup
    report = {
        "scenario": headless.scenario,
        "seed": settings.game.world.seed,
        "ai_mode": settings.game.dialogue.ai_mode,
        **report,
    }
    if options.samples:
        report["samples"] = {
            "tick_ms": [round(ms, 4) for ms in village.tick_ms],
            "ai_ms": [round(ms, 4) for ms in village.dialogue.ai_ms],
            "greet_latency_ticks": list(village.dialogue.latency_ticks.get("greet", ())),
        }
    print(f"world_hash {report['world_hash']}")
    tick_ms = report["tick_ms"]
    print(
        f"ticks {report['ticks']}  tick_ms p50 {tick_ms['p50']:.3f} p99 {tick_ms['p99']:.3f} "
        f"max {tick_ms['max']:.3f}  overruns {report['overruns']}"
        + ("  (interrupted)" if report["interrupted"] else "")
    )
    if options.report is not None:
        try:
            options.report.parent.mkdir(parents=True, exist_ok=True)
            options.report.write_text(json.dumps(report, indent=2) + "\n")
        except OSError as exc:
            print(f"zerostall: error: cannot write report {options.report}: {exc}", file=sys.stderr)
            return 2
    return 0


def _wait_ready(village: Session, stop: StopRequest, timeout_s: float) -> tuple[str, float | None]:
    """Wait for the model and its warm-up in short slices, so a stop signal is seen.

    Returns the state and the ``perf_counter`` time the model was first seen loaded.
    """
    end = time.monotonic() + timeout_s
    state = "loading"
    ready_at = None
    while state in ("loading", "warming") and not stop.requested and time.monotonic() < end:
        state = village.ai.wait_ready(timeout_s=0.05)
        if ready_at is None and state != "loading":
            ready_at = time.perf_counter()
    return state, ready_at


def _ms_since(start: float | None, at: float | None = None) -> float:
    if start is None:
        return -1.0
    return round(((time.perf_counter() if at is None else at) - start) * 1000.0, 1)


def _startup_figures(launched_at: float | None, ready_at: float | None) -> dict[str, float]:
    """Milliseconds from launch to the loaded model; {} when the launch time is unknown."""
    if launched_at is None:
        return {}
    figures = {}
    if ready_at is not None:
        figures["model_ready_ms"] = _ms_since(launched_at, ready_at)
    return figures


def _run_window(village: Session, settings: Settings, options: Options, stop: StopRequest) -> int:
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    import pygame

    # Only what the window needs: ``pygame.init()`` also probes audio, which costs about
    # 100 ms at startup (longer on machines without a sound card) for sound we never play.
    from game.render.text import BOLD_FONT, REGULAR_FONT
    from game.ui.window import GameWindow

    try:
        pygame.display.init()
        pygame.font.init()
        check_fonts((REGULAR_FONT, BOLD_FONT))
    except AssetError as exc:
        print(f"zerostall: error: {exc}", file=sys.stderr)
        pygame.quit()
        return 2
    except pygame.error:
        pass  # no display: reported just below, where the window is opened
    try:
        window = GameWindow(village, settings.game, launched_at=options.launched_at)
    except pygame.error as exc:
        print(
            f"zerostall: error: cannot open a window ({exc}); "
            "on a machine without a display, run with --headless",
            file=sys.stderr,
        )
        pygame.quit()
        return 2

    def finish_frame() -> None:
        window.running = False

    stop.on_stop(finish_frame)
    try:
        settle_heap()
        window.run(max_frames=options.frames, screenshot_path=options.screenshot)
    finally:
        pygame.quit()
    return 0


def check_fonts(paths: tuple[Path, ...]) -> None:
    """Open each bundled font that exists, so a corrupt one stops the game with one line.

    A missing font is fine (pygame's default font stands in); a damaged one would
    otherwise fail at the first frame. Needs ``pygame.font.init()``. Raises AssetError.
    """
    import pygame

    for path in paths:
        if not path.is_file():
            continue
        try:
            # Opening succeeds on garbage; measuring text is what touches the glyphs.
            pygame.font.Font(path, 12).size("Zerostall")
        except (pygame.error, OSError, ValueError) as exc:
            raise AssetError(f"{path}: cannot load font: {exc}") from None
