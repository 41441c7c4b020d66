"""The dialogue evaluation: what villagers say, through the game's own path, measured.

Every situation (each trigger for each villager, with a listener and the prop involved)
goes through the game's prompt building, openers and candidate plan
(``game.dialogue.line_plan``), the AI runtime's worker with its candidate selection and
line cleaning, and the real model. Shown lines enter the villager's memory as in the
game. Then chat questions check that the answer holds the expected fact, and timed chats
with 0, 3 and 6 exchanges of history give the time to first token.

    python tools/eval/dialogue.py                      # every situation; bench/dialogue.json
    python tools/eval/dialogue.py --slice 20           # about 20 situations, a few chats
    python tools/eval/dialogue.py --ab generation.candidates=1,3
    python tools/eval/dialogue.py --ab 'model.adapter=village,""'   # the adapter against none
    python tools/eval/dialogue.py --pairs 60           # also blind pairs and their key
    python tools/eval/dialogue.py --score-answers bench/dialogue_answers.txt

An A/B run alternates the two settings situation by situation (each keeps its own
memories), so machine load hits both alike.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ai import (  # noqa: E402
    AiRuntime,
    Backend,
    FallbackUsed,
    LineCompleted,
    LineRequest,
    LlamaBackend,
    ScriptedBackend,
)
from ai.events import LineFailed  # noqa: E402
from ai.requests import make_plan  # noqa: E402
from game.app import load_content_filter  # noqa: E402
from game.config.settings import CONFIG_DIR, Settings, load_settings  # noqa: E402
from game.dialogue.examples import load_example_bank  # noqa: E402
from game.dialogue.facts import fact_answer  # noqa: E402
from game.dialogue.line_plan import (  # noqa: E402
    LineAskParts,
    LinePlanner,
    load_trigger_words,
    priority_of,
)
from game.dialogue.memory import PLAYER_SPEAKER, Memories, Memory  # noqa: E402
from game.dialogue.persona_prompt import Persona, shared_context  # noqa: E402
from game.dialogue.templates import TemplateLines  # noqa: E402
from game.sim.cast import Cast, load_cast  # noqa: E402
from game.sim.events import Trigger  # noqa: E402
from game.sim.level import load_level  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402
from tools.eval.dialogue_metrics import line_flags, summarize_lines, timing  # noqa: E402

DATA = ROOT / "tools" / "eval" / "data" / "dialogue"
SITUATIONS = DATA / "situations.json"
QUESTIONS = DATA / "chat.toml"
BENCH = ROOT / "bench"
SITUATION_VERSION = 2
HISTORY_EXCHANGES = (0, 3, 6)
_PROPS = ("crate", "barrel", "apple", "ball")
_ERRANDS = {
    "baker": "Fill the baker's basket with 5 apples",
    "merchant": "Stack 4 crates back up by the well",
    "child": "Get the ball down from the market hall roof",
}
# Small talk used to give timed chats a history.
_SMALL_TALK = (
    "Nice weather today.",
    "I just got here this morning.",
    "The market looks busy.",
    "Have you lived here long?",
    "I saw a goat on the road.",
    "The well water is cold.",
)


# The bare moments (to the traveller, nothing remembered, no attitude, no errand state),
# as (trigger, prop): the corpus has bare lines for most villagers in each, and the
# evaluation keeps two villagers a moment to itself (:func:`held_for_evaluation`).
BARE_MOMENTS = (
    ("ambient", ""),
    ("bumped", ""),
    ("errand_done", ""),
    ("errand_offer", ""),
    ("farewell", ""),
    ("greet", ""),
    *(("hit", prop) for prop in sorted(_PROPS)),
    *(("near_miss", prop) for prop in sorted(_PROPS)),
    ("toppled", ""),
)


def held_for_evaluation(ids: list[str], trigger: str, subject: str) -> frozenset[str]:
    """The two villagers (of ``ids``, in name order) whose bare line for the moment the
    corpus leaves to the evaluation: a new combination of a villager and a known moment."""
    k = BARE_MOMENTS.index((trigger, subject))
    return frozenset({ids[2 * k % len(ids)], ids[(2 * k + 1) % len(ids)]})


def build_situations(cast: Cast) -> list[dict[str, Any]]:
    """The fixed situation set: for every moment, the villagers held out of the corpus's
    bare lines, and small talk to another villager."""
    out: list[dict[str, Any]] = []
    ids = [spec.id for spec in cast.npcs]
    order = sorted(ids)
    for round_ in range(4):
        for i, spec in enumerate(cast.npcs):
            neighbour = ids[(i + 1 + round_) % len(ids)]
            plan: list[tuple[str, str, str]] = []
            if round_ < 3:
                plan += [("greet", "traveller", ""), ("hit", "traveller", _PROPS[round_])]
                plan += [("near_miss", "traveller", _PROPS[(round_ + 1) % 4])]
                plan += [("ambient", neighbour if round_ == 1 else "traveller", "")]
            else:
                plan += [("hit", "traveller", _PROPS[3]), ("near_miss", "traveller", _PROPS[0])]
                plan += [("ambient", neighbour, "")]
            if round_ < 2:
                plan += [("farewell", "traveller", ""), ("bumped", "traveller", "")]
                plan += [("toppled", "traveller", "")]
            if round_ == 0:
                plan += [("errand_offer", "traveller", ""), ("errand_done", "traveller", "")]
            for trigger, listener, subject in plan:
                if listener == "traveller" and spec.id not in held_for_evaluation(
                    order, trigger, subject
                ):
                    continue
                errand = _ERRANDS.get(spec.id, "") if trigger.startswith("errand") else ""
                out.append(
                    {
                        "id": len(out),
                        "npc": spec.id,
                        "trigger": trigger,
                        "listener": listener,
                        "subject": subject,
                        "errand": errand,
                    }
                )
    return out


@dataclass
class _Arm:
    """One setting under test: its runtime, planner and the villagers' memories."""

    label: str
    settings: Settings
    runtime: AiRuntime
    planner: LinePlanner
    memories: Memories = field(default_factory=Memories)
    said: dict[str, list[str]] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    chats: list[dict[str, Any]] = field(default_factory=list)


class _Fallback:
    """The template line for the villager and trigger a request was for, as in the game."""

    def __init__(self, templates: TemplateLines) -> None:
        self._templates = templates

    def fallback_line(self, request: LineRequest) -> str:
        # The harness's own requests carry (villager, trigger) as their snapshot.
        npc_id, trigger = typing.cast(tuple[int, Trigger], request.snapshot)
        return self._templates.line(npc_id, trigger, "traveller", request.prompt.player_text)


class Harness:
    """Runs situations and chats through one or two settings of the game's dialogue."""

    def __init__(self, overrides: list[tuple[str, ...]], backend: str, seed: int) -> None:
        self.cast = load_cast()
        self.index = {spec.id: i + 1 for i, spec in enumerate(self.cast.npcs)}
        self.specs = {i + 1: spec for i, spec in enumerate(self.cast.npcs)}
        self.personas = {
            npc_id: Persona(s.name, s.role, s.persona, s.lines, s.openers, s.facts)
            for npc_id, s in self.specs.items()
        }
        self.context = shared_context(list(self.personas.values()))
        self.words = load_trigger_words()
        names = {npc_id: s.name for npc_id, s in self.specs.items()}
        # As in the game: a chat with no model line answers from the villager's own fact.
        self.templates = TemplateLines(
            {npc_id: s.lines for npc_id, s in self.specs.items()},
            names,
            seed=seed,
            answers=lambda npc_id, question: fact_answer(question, self.specs[npc_id].facts),
        )
        # As the game: a village-style bark opens with corpus lines (never the held-out
        # ones; the evaluation's situations are in no split of the corpus).
        self.examples = load_example_bank(self.cast, load_level())
        self.arms = [self._arm(extra, backend, seed) for extra in overrides]

    def _arm(self, extra: tuple[str, ...], backend_name: str, seed: int) -> _Arm:
        # No rate limit: the harness asks one villager for many lines in a row on purpose.
        base = ("ai.scheduler.rate_limit_s=0", f'ai.model.backend="{backend_name}"')
        settings = load_settings(CONFIG_DIR, base + extra)
        ai = settings.ai
        backend: Backend = (
            ScriptedBackend(ai.scripted) if ai.model.backend == "scripted" else LlamaBackend(ai)
        )
        # The game's content filter (word list, patterns and the semantic layer), so a line
        # it refuses counts as the fallback the player would see.
        content = load_content_filter(ai)
        runtime = AiRuntime(ai, backend, _Fallback(self.templates), content=content)
        runtime.start()
        planner = LinePlanner(
            self.context, self.personas, self.words, ai.generation, self.cast.facts, self.examples
        )
        return _Arm(" ".join(extra) or "default", settings, runtime, planner)

    def wait_ready(self) -> None:
        """Load every arm's model and warm the shared prefix."""
        for arm in self.arms:
            end = time.monotonic() + 120
            while arm.runtime.load_progress().state == "loading" and time.monotonic() < end:
                time.sleep(0.05)
            progress = arm.runtime.load_progress()
            if progress.state != "ready":
                raise SystemExit(f"tools/eval/dialogue.py: model not ready ({progress})")
            # As the game does: the style the loaded model was tuned for.
            arm.planner.use_style("village" if progress.prompt_style == "village" else "fewshot")
            self._ask(arm, LineAskParts(1, Trigger.AMBIENT, priority_of(Trigger.AMBIENT)))

    def close(self) -> None:
        """Stop every arm's worker."""
        for arm in self.arms:
            arm.runtime.shutdown()

    def _request(self, arm: _Arm, ask: LineAskParts, memory: Memory) -> LineRequest:
        prompt, plan = arm.planner.build(ask, memory)
        deadline, timeout = arm.settings.ai.scheduler.budget(ask.priority)
        return LineRequest(
            ask.npc_id,
            ask.priority,
            f"eval:{time.perf_counter_ns()}",
            prompt,
            (ask.npc_id, ask.trigger),
            deadline,
            timeout,
            stream=ask.trigger is Trigger.CHAT,
            plan=plan,
        )

    def _ask(self, arm: _Arm, ask: LineAskParts) -> tuple[LineRequest, dict[str, Any]]:
        request = self._request(arm, ask, arm.memories.of(ask.npc_id))
        timeout = request.timeout_s
        handle = arm.runtime.submit(request)
        out: dict[str, Any] = {"origin": "fallback", "reason": "no answer", "text": ""}
        for event in arm.runtime.wait(handle, timeout + 60.0):
            if event.handle != handle:
                continue
            if isinstance(event, LineCompleted):
                chosen = next((v for v in event.candidates if v.text == event.text), None)
                out = {
                    "origin": "model",
                    "text": event.text,
                    "candidates": len(event.candidates) or 1,
                    "contrast": None if chosen is None else chosen.contrast,
                    "ttft_ms": round(event.stats.ttft_s * 1000, 1),
                    "total_ms": round(event.stats.total_s * 1000, 1),
                    "drawn": [[v.text, list(v.faults), v.score] for v in event.candidates],
                }
            elif isinstance(event, LineFailed):
                out["drawn"] = [[v.text, list(v.faults), v.score] for v in event.candidates]
                out["reason"] = event.reason
                if event.stats is not None:
                    # The model read the prompt and wrote: its times count, shown or not.
                    out["ttft_ms"] = round(event.stats.ttft_s * 1000, 1)
                    out["total_ms"] = round(event.stats.total_s * 1000, 1)
            elif isinstance(event, FallbackUsed):
                out.update(origin="fallback", text=event.text, reason=event.reason)
        out.setdefault("candidates", len(out.get("drawn", [])))
        return request, out

    def run_situation(self, arm: _Arm, situation: dict[str, Any]) -> None:
        """One line for one situation, measured and remembered as shown."""
        npc_id = self.index[situation["npc"]]
        trigger = Trigger(situation["trigger"])
        listener = situation["listener"]
        if listener != "traveller":
            listener = self.personas[self.index[listener]].label
        ask = LineAskParts(
            npc_id,
            trigger,
            priority_of(trigger, predictive=trigger is Trigger.GREET),
            listener=listener,
            subject=situation["subject"],
            errand=situation["errand"],
        )
        request, out = self._ask(arm, ask)
        name = self.personas[npc_id].name
        earlier = arm.said.setdefault(name, [])
        assert request.plan is not None
        # Made again here from what the request was built with: the worker's copy is gone.
        plan = make_plan(request.plan)
        opener = _opener_of(out["text"], plan.openers)
        record = {**situation, "name": name, "priority": ask.priority.name.lower(), **out}
        record["opener"] = opener
        record.update(line_flags(out["text"], opener, plan.criteria, earlier))
        arm.records.append(record)
        if out["origin"] == "model":
            earlier.append(out["text"])
        arm.memories.of(npc_id).record_shown(name, out["text"])

    def run_chat(
        self, arm: _Arm, question: dict[str, Any], exchanges: int, typed: bool = False
    ) -> dict[str, Any]:
        """Ask one question after ``exchanges`` exchanges of small talk; measure the answer.

        ``typed``: as in the game when the player types the question, its reply's prompt
        is read ahead first (what the chat box hands over while they type), so only the
        reply's own time is left when it is sent.
        """
        npc_id = self.index[question["npc"]]
        memory = arm.memories.of(npc_id)
        name = self.personas[npc_id].name
        for i in range(exchanges):
            memory.record_shown(PLAYER_SPEAKER, _SMALL_TALK[i % len(_SMALL_TALK)])
            memory.record_shown(name, self.templates.line(npc_id, Trigger.CHAT, "traveller"))
        ask = LineAskParts(
            npc_id, Trigger.CHAT, priority_of(Trigger.CHAT), player_text=question["ask"]
        )
        if typed:
            typing = memory.with_line(PLAYER_SPEAKER, question["ask"])
            request = self._request(arm, ask, typing)
            ahead = arm.runtime.submit(request.read_ahead())
            list(arm.runtime.wait(ahead, request.timeout_s + 60.0))
        memory.record_shown(PLAYER_SPEAKER, question["ask"])
        request, out = self._ask(arm, ask)
        assert request.plan is not None
        # Made again here from what the request was built with: the worker's copy is gone.
        plan = make_plan(request.plan)
        text = out["text"]
        record = {**question, "history_exchanges": exchanges, "read_ahead": typed, "name": name}
        record.update(out)
        record["has_fact"] = out["origin"] == "model" and any(
            word in _words(text) for word in question["expect"]
        )
        record.update(line_flags(text, "", plan.criteria, []))
        memory.record_shown(name, text)
        arm.chats.append(record)
        return record


# Words with which a villager would step out of the village: talk of being a program.
_OUT_OF_CHARACTER = frozenset(
    [
        "ai",
        "assistant",
        "chatbot",
        "model",
        "prompt",
        "prompts",
        "instructions",
        "program",
        "language",
        "bot",
    ]
)


def _in_character(chat: dict[str, Any]) -> bool:
    """A model answer that stays in the village: not empty, no echo, no talk of programs."""
    text = chat["text"]
    return (
        chat["origin"] == "model"
        and bool(text.strip())
        and not chat.get("echo")
        and not (_words(text) & _OUT_OF_CHARACTER)
    )


def _opener_of(text: str, openers: tuple[str, ...]) -> str:
    return next((o for o in openers if text.startswith(o)), "")


def _words(text: str) -> set[str]:
    from ai.selection import words

    return set(words(text))


def _load_situations(write: bool, cast: Cast) -> list[dict[str, Any]]:
    if write or not SITUATIONS.exists():
        data = {"version": SITUATION_VERSION, "situations": build_situations(cast)}
        SITUATIONS.write_text(json.dumps(data, indent=1) + "\n")
    data = json.loads(SITUATIONS.read_text())
    situations: list[dict[str, Any]] = data["situations"]
    return situations


def _load_questions() -> list[dict[str, Any]]:
    questions: list[dict[str, Any]] = tomllib.loads(QUESTIONS.read_text())["question"]
    return questions


def _ab_overrides(ab: str | None) -> list[tuple[str, ...]]:
    """One setting's values (``key=v1,v2``), or whole arms (``k=v+k2=v2;k=w+k2=w2``)."""
    if not ab:
        return [()]

    def full(setting: str) -> str:
        return setting if setting.startswith(("ai.", "game.")) else f"ai.{setting}"

    if ";" in ab:
        return [tuple(full(s.strip()) for s in arm.split("+")) for arm in ab.split(";")]
    key, _, values = ab.partition("=")
    return [(f"{full(key)}={value}",) for value in values.split(",")]


def _every(items: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    if count <= 0 or count >= len(items):
        return items
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    """Run the evaluation as ``args`` ask and return the report."""
    harness = Harness(_ab_overrides(args.ab), args.backend, args.seed)
    situations = _every(_load_situations(args.write_situations, harness.cast), args.slice)
    questions = _load_questions()
    if args.slice:
        questions = _every(questions, max(4, args.slice // 3))
    if args.only == "chat":
        situations = []
    elif args.only == "lines":
        questions = []
    started = time.perf_counter()
    try:
        harness.wait_ready()
        for i, situation in enumerate(situations):
            arms = harness.arms if i % 2 == 0 else list(reversed(harness.arms))
            for arm in arms:
                harness.run_situation(arm, situation)
        for i, question in enumerate(questions):
            arms = harness.arms if i % 2 == 0 else list(reversed(harness.arms))
            for arm in arms:
                arm.memories = Memories()
                for exchanges in HISTORY_EXCHANGES if i < args.timed_chats else (0,):
                    harness.run_chat(arm, question, exchanges)
                    arm.memories = Memories()
                    if i < args.timed_chats:
                        harness.run_chat(arm, question, exchanges, typed=True)
                        arm.memories = Memories()
    finally:
        harness.close()
    return _report(harness, situations, args, time.perf_counter() - started)


def _report(
    harness: Harness, situations: list[dict[str, Any]], args: argparse.Namespace, seconds: float
) -> dict[str, Any]:
    arms: dict[str, Any] = {}
    for arm in harness.arms:
        every = [c for c in arm.chats if c["history_exchanges"] == 0 and not c["read_ahead"]]
        plain = [c for c in every if c.get("expect")]
        open_ended = [c for c in every if not c.get("expect")]
        reactions = [r for r in arm.records if r["priority"] == "reactive"]
        arms[arm.label] = {
            "lines": summarize_lines(arm.records),
            "chat": {
                "questions": len(plain),
                "has_fact": round(sum(c["has_fact"] for c in plain) / max(1, len(plain)), 3),
                "echo": round(sum(bool(c["echo"]) for c in plain) / max(1, len(plain)), 3),
                "fallbacks": sum(1 for c in plain if c["origin"] != "model"),
                "off_topic_and_hostile": len(open_ended),
                "in_character": round(
                    sum(_in_character(c) for c in open_ended) / max(1, len(open_ended)), 3
                ),
            },
            "timing": {
                "reactions": timing(reactions),
                **{
                    f"chat_{n}_exchanges{'_read_ahead' if ahead else ''}": timing(
                        c
                        for c in arm.chats
                        if c["history_exchanges"] == n and c["read_ahead"] == ahead
                    )
                    for n in HISTORY_EXCHANGES
                    for ahead in (False, True)
                },
            },
            "records": arm.records,
            "chats": arm.chats,
        }
    return {
        "situations_version": SITUATION_VERSION,
        "situations": len(situations),
        "seconds": round(seconds, 1),
        "keywords_version": harness.words.version,
        "keywords": {t.value: list(w) for t, w in harness.words.by_trigger.items()},
        "backend": args.backend,
        "arms": arms,
    }


def write_pairs(report: dict[str, Any], harness_seed: int, count: int) -> None:
    """Blind pairs: a model line against the villager's template line for the same situation.

    With two settings (``--ab``), each gets ``count`` pairs drawn from the same situations
    (those where both settings showed a model line) against the same template line, all
    shuffled together, so one reader judges both settings in one sitting. The key, kept
    apart, says which side is the model's and which setting wrote it.
    """
    arms = report["arms"]
    by_arm = {
        label: {r["id"]: r for r in arm["records"] if r["origin"] == "model"}
        for label, arm in arms.items()
    }
    shared = sorted(set.intersection(*(set(ids) for ids in by_arm.values())))
    rng = random.Random(harness_seed)
    chosen = rng.sample(shared, min(count, len(shared)))
    cast = load_cast()
    by_id = {spec.id: spec for spec in cast.npcs}
    drafts: list[tuple[str, dict[str, Any], str]] = []
    for situation in chosen:
        first = next(iter(by_arm.values()))[situation]
        spec = by_id[first["npc"]]
        template = rng.choice(spec.lines_for(Trigger(first["trigger"])))
        template = template.replace("{player}", "traveller").replace("{name}", spec.name)
        drafts += [(label, records[situation], template) for label, records in by_arm.items()]
    rng.shuffle(drafts)
    lines, key = [], {}
    for n, (label, record, template) in enumerate(drafts, start=1):
        spec = by_id[record["npc"]]
        model_first = rng.random() < 0.5
        a, b = (record["text"], template) if model_first else (template, record["text"])
        key[str(n)] = {"model": "A" if model_first else "B", "setting": label}
        where = record["trigger"].replace("_", " ")
        if record["subject"]:
            where += f" ({record['subject']})"
        lines.append(f"{n}. {spec.name} the {spec.role}, {where}\n   A: {a}\n   B: {b}\n")
    header = (
        "# Blind pairs\n\nFor each situation, which line would you rather read in the game?"
        " Answer with one line per pair, `number A` or `number B`.\n\n"
    )
    (BENCH / "dialogue_pairs.md").write_text(header + "\n".join(lines))
    (BENCH / "dialogue_pairs_key.json").write_text(json.dumps(key, indent=1) + "\n")


def score_answers(answers_path: Path) -> dict[str, Any]:
    """Score a reader's answers against the hidden key: the model's share, per setting."""
    key = json.loads((BENCH / "dialogue_pairs_key.json").read_text())
    answers: dict[str, str] = {}
    for line in answers_path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].rstrip(".") in key:
            answers[parts[0].rstrip(".")] = parts[1].upper()
    settings: dict[str, dict[str, int]] = {}
    for n, pick in answers.items():
        entry = key[n] if isinstance(key[n], dict) else {"model": key[n], "setting": "default"}
        tally = settings.setdefault(entry["setting"], {"answered": 0, "model_preferred": 0})
        tally["answered"] += 1
        tally["model_preferred"] += pick == entry["model"]
    return {
        "pairs": len(key),
        "answered": len(answers),
        "model_preferred": sum(t["model_preferred"] for t in settings.values()),
        "model_share": round(
            sum(t["model_preferred"] for t in settings.values()) / max(1, len(answers)), 3
        ),
        "by_setting": {
            label: {**t, "model_share": round(t["model_preferred"] / max(1, t["answered"]), 3)}
            for label, t in settings.items()
        },
    }


def markdown(report: dict[str, Any]) -> str:
    """The table ``docs/dialogue.md`` shows, and a few sample lines per trigger."""
    out = [
        "| setting | model lines | mentions trigger | after opener | names speaker/absent "
        "| copies example | echo | exact repeats | near repeats | labels | words p50/p95 "
        "| chat fact | in character | chat TTFT p50 (0/3/6 exchanges) | read ahead while typing "
        "| fallbacks |",
        "| " + " | ".join(["---"] * 16) + " |",
    ]
    for label, arm in report["arms"].items():
        lines, chat, time_ = arm["lines"], arm["chat"], arm["timing"]
        ttft, ahead = (
            "/".join(
                f"{time_[f'chat_{n}_exchanges{suffix}']['ttft_ms_p50']:.0f}"
                for n in HISTORY_EXCHANGES
            )
            for suffix in ("", "_read_ahead")
        )
        out.append(
            f"| {label} | {lines['model_lines']} of {lines['lines']} | {_p(lines['mentions'])} "
            f"| {_p(lines['mentions_after_opener'])} "
            f"| {_p(lines['self_name'])} / {_p(lines['absent_name'])} | {_p(lines['copy'])} "
            f"| {_p(lines['echo'])} | {_p(lines['exact_repeat'])} | {_p(lines['near_repeat'])} "
            f"| {_p(lines['label'])} | {lines['words_p50']}/{lines['words_p95']} "
            f"| {_p(chat['has_fact'])} | {_p(chat['in_character'])} | {ttft} ms | {ahead} ms "
            f"| {lines['fallbacks']} |"
        )
    first = next(iter(report["arms"].values()))
    out += ["", "| trigger | lines | mentions | after opener |", "| --- | --- | --- | --- |"]
    for trigger, row in first["lines"]["by_trigger"].items():
        out.append(
            f"| {trigger} | {row['lines']} | {_p(row['mentions'])} "
            f"| {_p(row['mentions_after_opener'])} |"
        )
    out += ["", "Sample lines (first setting):", ""]
    seen: dict[str, int] = {}
    for record in first["records"]:
        if record["origin"] == "model" and seen.get(record["trigger"], 0) < 3:
            seen[record["trigger"]] = seen.get(record["trigger"], 0) + 1
            subject = f", {record['subject']}" if record["subject"] else ""
            out.append(
                f"- {record['name']}, {record['trigger']}{subject}: \u201c{record['text']}\u201d"
            )
    return "\n".join(out) + "\n"


def _p(value: float | None) -> str:
    return "\u2013" if value is None else f"{value * 100:.0f}%"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slice", type=int, default=0, help="run about this many situations")
    parser.add_argument(
        "--ab",
        help="compare two settings, e.g. generation.candidates=1,3, or two whole arms, "
        "e.g. 'generation.min_p=0.05+generation.temperature=0.8;generation.min_p=0.2'",
    )
    parser.add_argument("--backend", default="llama", choices=("llama", "scripted"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timed-chats", type=int, default=10, help="questions timed with history")
    parser.add_argument("--pairs", type=int, default=0, help="write this many blind pairs")
    parser.add_argument("--score-answers", type=Path, help="score a reader's answers file")
    parser.add_argument("--only", choices=("chat", "lines"), help="run only chats or lines")
    parser.add_argument("--write-situations", action="store_true")
    parser.add_argument("--out", type=Path, default=BENCH / "dialogue.json")
    args = parser.parse_args(argv)
    if args.score_answers is not None:
        result = score_answers(args.score_answers)
        (BENCH / "dialogue_preference.json").write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps(result))
        return 0
    load_start = load_average()
    figures = evaluate(args)
    model = None if args.backend == "scripted" else load_settings(CONFIG_DIR).ai.model
    report = {"machine": machine_header(load_start, model=model), **figures}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    table = markdown(report)
    args.out.with_suffix(".md").write_text(table)
    if args.pairs:
        write_pairs(report, args.seed, args.pairs)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
