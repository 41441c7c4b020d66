"""The one place that builds and wires everything: settings, world, dialogue, window."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Protocol

from ai import (
    AiConfig,
    Backend,
    FallbackSource,
    LineRuntime,
    LlamaBackend,
    Router,
    ScriptedBackend,
    build_router,
)
from ai.content import ClassifierError, ContentFilter, WordListError
from game.assets import AssetError, asset_path
from game.cli import LOG_LEVELS, Options, fail, setting_overrides
from game.config.checks import warn_about
from game.config.live import ConfigReads, LiveSettings
from game.config.loader import ConfigError
from game.config.settings import CONFIG_DIR, VILLAGE_ADAPTER_PATH, Settings, load_settings
from game.config.watch import ConfigWatcher
from game.core.session import Session
from game.core.shutdown import StopRequest
from game.decisions.decider import Decider
from game.decisions.options import OptionFinder
from game.dialogue.disruptions import Disruptions
from game.dialogue.examples import load_example_bank
from game.dialogue.facts import fact_answer, matching_facts
from game.dialogue.line_plan import LinePlanner, load_trigger_words
from game.dialogue.line_source import LineSource, SourceStatus, TemplateLineSource
from game.dialogue.memory import Memories
from game.dialogue.model_line_source import ModelLineSource
from game.dialogue.persona_prompt import Persona, largest_prompts, shared_context
from game.dialogue.recall import RecallLines
from game.dialogue.speech import Dialogue
from game.dialogue.templates import TemplateFallback, TemplateLines
from game.dialogue.voice_swap import VoiceSwap
from game.persist.opening import open_save
from game.persist.paths import check_writable
from game.sim.cast import Fact, NpcSpec, load_cast
from game.sim.level import load_level
from game.sim.ticks import ticks
from game.sim.world import World

logger = logging.getLogger(__name__)

CONTENT_WORDS = "content/blocklist.txt"
CONTENT_CLASSIFIER = "content/classifier.npz"
CONTENT_PATTERNS = "content/patterns.txt"


class RuntimeFactory(Protocol):
    """Builds the model runtime from its settings, backend, fallback and content filter;
    ``build_router`` unless a benchmark swaps in a peer design."""

    def __call__(
        self,
        config: AiConfig,
        backend: Backend,
        fallback: FallbackSource,
        /,
        *,
        content: ContentFilter | None = None,
    ) -> LineRuntime:
        """A runtime, not yet started."""
        ...


def load_content_filter(ai: AiConfig) -> ContentFilter:
    """The content filter from ``assets/content`` and ``hygiene.blocklist``; AssetError if bad."""
    try:
        return ContentFilter.load(
            ai.filter,
            asset_path(CONTENT_WORDS),
            asset_path(CONTENT_CLASSIFIER) if ai.filter.meaning else None,
            ai.hygiene.blocklist,
            asset_path(CONTENT_PATTERNS),
        )
    except (WordListError, ClassifierError) as exc:
        raise AssetError(str(exc)) from exc


def run(options: Options, runtime_factory: RuntimeFactory = build_router) -> int:
    """Run the game as ``options`` ask; returns the exit code (2 for a player's mistake).

    SIGINT and SIGTERM (through ``options.stop``) end the run after the current tick, with
    the report written, the bubble log flushed and the model worker joined: exit code 0.
    """
    if options.log_level not in LOG_LEVELS:
        return fail(
            f"unknown log level {options.log_level!r} (expected one of {', '.join(LOG_LEVELS)})"
        )
    logging.basicConfig(
        level=getattr(logging, options.log_level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    stop = options.stop or StopRequest()
    with ExitStack() as stack:
        try:
            config_dir = options.config_dir or CONFIG_DIR
            overrides = setting_overrides(options)
            # Made first, so an edit saved while the game starts is taken in too.
            watcher = ConfigWatcher(config_dir, overrides)
            settings = load_settings(config_dir, overrides)
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
            return fail(str(exc))
        except OSError as exc:
            return fail(f"cannot write {exc.filename}: {exc.strerror}")
        stack.callback(village.close)
        watch_settings(village, settings, watcher, config_dir)
        watcher.start()
        stack.callback(watcher.close)
        try:
            autosave = open_save(
                village,
                settings.game.save,
                path=options.save,
                new=options.new,
                headless=options.headless,
            )
        except ConfigError as exc:
            return fail(str(exc))
        if autosave is not None:
            stack.callback(autosave.close)
            village.autosave = autosave
        if options.headless:
            from game.headless.run import run_headless

            return run_headless(
                village,
                settings,
                stop,
                autosave=autosave,
                report_path=options.report,
                paced=options.paced,
                samples=options.samples,
                launched_at=options.launched_at,
            )
        # Only a window loads pygame, and without its greeting on stdout.
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        from game.ui.window import run_window

        return run_window(
            village,
            settings.game,
            stop,
            frames=options.frames,
            screenshot_path=options.screenshot,
            launched_at=options.launched_at,
        )


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
    memories = Memories()
    content = load_content_filter(settings.ai)
    recall = RecallLines(
        {npc_id: spec.recall for npc_id, spec in specs.items()},
        memories,
        names,
        seed=world_config.seed,
        addresses=[w for spec in specs.values() for w in (spec.name, spec.role)],
    )
    templates = TemplateLines(
        {npc_id: spec.templates for npc_id, spec in specs.items()},
        names,
        seed=world_config.seed,
        cold={npc_id: spec.cold_lines for npc_id, spec in specs.items()},
        attitude_of=lambda npc_id: memories.of(npc_id).attitude,
        answers=_answers(specs, recall),
    )
    disruptions = Disruptions(world)
    dialogue_config = settings.game.dialogue
    source: LineSource
    status: SourceStatus
    lane: ModelLineSource | None = None
    if dialogue_config.ai_mode == "off":
        source = status = TemplateLineSource(templates, {world.player_status().id: "traveller"})
    else:
        model = _model_source(
            settings,
            backend,
            runtime_factory,
            world,
            specs,
            templates,
            memories,
            disruptions,
            content,
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
        kind_of=world.entity_kind,
        player_dx=world.player_dx,
        topic_of=_topics(specs, world.cast.facts, recall),
        on_reply=decider.chat_replied,
        content=content,
        refusals={npc_id: spec.refusals for npc_id, spec in specs.items()},
    )
    return Session(world, dialogue, status, decider=decider)


def watch_settings(
    village: Session, settings: Settings, reads: ConfigReads, config_dir: Path
) -> LiveSettings:
    """Take in edits to the config files while ``village`` runs (see ``game.config.live``).

    ``settings`` are the ones it was built with; ``reads`` hands over what the files hold
    after each edit. Bubble times and player text length reach the dialogue; the AI's
    live settings, the budgets, the admission and the pacing reach the model line source,
    and through it the runtime's worker. An edited local model is swapped in.
    """
    source = village.dialogue.source
    model = source if isinstance(source, ModelLineSource) else None

    def apply(new: Settings) -> None:
        dialogue = new.game.dialogue
        village.dialogue.use_settings(
            ticks(dialogue.bubble_s),
            ticks(dialogue.chat_bubble_s),
            new.ai.hygiene.player_text_max_chars,
        )
        if model is not None:
            model.reconfigure(
                new.ai,
                dialogue.ai_mode,
                dialogue.sync_wait_s,
                dialogue.admission,
                dialogue.greet_ahead,
            )

    live = LiveSettings(
        reads,
        settings,
        apply,
        config_dir,
        swap=model.use_model if model is not None and model.voice is not None else None,
    )
    village.live_settings = live
    return live


def _answers(specs: Mapping[int, NpcSpec], recall: RecallLines) -> Callable[[int, str], str | None]:
    """A chat's own answer when no model line stands: what they remember of the traveller
    for "do you remember me?", else the villager's own fact that answers the question (in
    their words: "I have lived in Millbrook for eighty years; ..."), else None."""

    def answer(npc_id: int, question: str) -> str | None:
        remembered = recall.reply(npc_id, question)
        if remembered is not None:
            return remembered
        spec = specs.get(npc_id)
        return None if spec is None else fact_answer(question, spec.facts)

    return answer


def _topics(
    specs: Mapping[int, NpcSpec], shared: tuple[Fact, ...], recall: RecallLines
) -> Callable[[int, str], str]:
    """What a villager remembers being asked about: the topic of the fact that answers.

    "Do you remember me?" is about the traveller, no topic (not Old Wen's old days).
    """

    def topic_of(npc_id: int, question: str) -> str:
        if recall.asks(question):
            return ""
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
    content: ContentFilter,
) -> ModelLineSource:
    """The language model's line source, its model loading in the background."""
    ai = settings.ai
    if backend is None:
        backend = (
            ScriptedBackend(ai.scripted) if ai.model.backend == "scripted" else LlamaBackend(ai)
        )
    # By default the local tier always, and an OpenAI-compatible server as a second tier
    # when configured.
    runtime = runtime_factory(ai, backend, TemplateFallback(templates), content=content)
    personas = {
        npc_id: Persona(
            spec.name,
            spec.role,
            spec.persona,
            spec.templates,
            spec.openers,
            spec.facts,
            spec.recall_openers,
            spec.stranger_openers,
        )
        for npc_id, spec in specs.items()
    }
    context = shared_context(list(personas.values()))
    examples = load_example_bank(world.cast, world.level)
    planner = LinePlanner(
        context, personas, load_trigger_words(), ai.generation, world.cast.facts, examples
    )
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
        admission=settings.game.dialogue.admission,
        greet_ahead=settings.game.dialogue.greet_ahead,
        voice=(
            VoiceSwap(
                runtime,
                ai.model,
                str(VILLAGE_ADAPTER_PATH) if VILLAGE_ADAPTER_PATH.exists() else "",
            )
            if isinstance(runtime, Router)
            else None
        ),
        view_half_width=settings.game.window.width / 2,
    )
