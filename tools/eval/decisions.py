"""The decision evaluation: what villagers decide to do, model against rules, in one run.

Every labelled situation in ``tools/eval/data/decisions.jsonl`` (written apart from the
training data and never trained on) is decided three ways, interleaved item by item so
machine load hits all alike:

- the rules (``game.decisions.rules``), as the game decides with the model off;
- the village model: the game's decision prompt, each possible option scored on the
  worker through the AI runtime (``LineRequest.choice``), exactly as in the game;
- the base model with the same prompt and scoring, unless ``--no-base``.

It reports action accuracy, mood accuracy and both together, per intent and attitude,
and the model's decision latency (submit to answer, through the runtime's queue).

    python tools/eval/decisions.py                 # bench/decisions.json
    python tools/eval/decisions.py --limit 20      # a quick slice
    python tools/eval/decisions.py --data assets/dialogue/decisions/corpus.jsonl --held-out
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ai import AiRuntime, Choice, LineCompleted, LineRequest, LlamaBackend, Priority  # noqa: E402
from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from game.core.stats import summarize_ms  # noqa: E402
from game.decisions.policy import place_name, resolve  # noqa: E402
from game.decisions.prompt import (  # noqa: E402
    action_continuations,
    mood_continuations,
    parse_mood,
)
from game.decisions.rules import rules_decision  # noqa: E402
from game.decisions.situations import Situation, SituationWorld, load_situations  # noqa: E402
from game.sim.cast import load_cast  # noqa: E402
from game.sim.level import load_level  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

DATA = ROOT / "tools" / "eval" / "data" / "decisions.jsonl"


class _NoFallback:
    def fallback_line(self, request: LineRequest) -> str:
        del request
        return ""


@dataclass
class Arm:
    """One way of deciding, and what it got right."""

    name: str
    runtime: AiRuntime | None = None
    answers: list[dict[str, Any]] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    failures: Counter[str] = field(default_factory=Counter)


def _model_arm(name: str, adapter: str) -> Arm:
    settings = load_settings(CONFIG_DIR, (f'ai.model.adapter="{adapter}"',))
    runtime = AiRuntime(settings.ai, LlamaBackend(settings.ai), _NoFallback())
    runtime.start()
    end = time.monotonic() + 180
    while runtime.load_progress().state == "loading" and time.monotonic() < end:
        time.sleep(0.05)
    progress = runtime.load_progress()
    if progress.state != "ready":
        raise SystemExit(f"tools/eval/decisions.py: {name} model not ready: {progress}")
    return Arm(name, runtime)


def _decide_model(arm: Arm, world: SituationWorld, item: Situation) -> tuple[str, str]:
    assert arm.runtime is not None
    possible = world.options(item)
    options = (*possible, *world.absent(item))
    request = LineRequest(
        1,
        Priority.REACTIVE,
        f"eval:{item.id}",
        world.spec(item),
        None,
        30.0,
        60.0,
        choice=Choice(action_continuations(options), mood_continuations()),
    )
    start = time.perf_counter()
    handle = arm.runtime.submit(request)
    for event in arm.runtime.wait(handle, 90.0):
        if isinstance(event, LineCompleted):
            arm.latency_ms.append((time.perf_counter() - start) * 1000.0)
            for option, text in zip(options, action_continuations(options), strict=True):
                if event.text.startswith(text):
                    mood = parse_mood(event.text[len(text) :]) or "?"
                    return resolve(option, possible).text, mood
            arm.failures["unparsed"] += 1
            return "?", "?"
        reason = getattr(event, "reason", None)
        if reason is not None and event.handle == handle:
            arm.failures[str(reason)] += 1
    return "?", "?"


def _decide_rules(world: SituationWorld, item: Situation) -> tuple[str, str]:
    option, mood = rules_decision(item.text, item.attitude, world.options(item), item.event)
    return option.text, mood


def _score(arm: Arm) -> dict[str, Any]:
    answers = arm.answers
    n = len(answers)
    action = sum(a["action_ok"] for a in answers)
    # Every place of the level always exists, so an ask for the way to a place that is
    # not among the options cannot happen in the game; such items are counted apart.
    possible = [a for a in answers if a["possible_in_game"]]
    mood = sum(a["mood_ok"] for a in answers)
    both = sum(a["action_ok"] and a["mood_ok"] for a in answers)
    by: dict[str, dict[str, dict[str, int]]] = {"intent": {}, "attitude": {}}
    for a in answers:
        for key in by:
            row = by[key].setdefault(str(a[key]), {"n": 0, "action_ok": 0})
            row["n"] += 1
            row["action_ok"] += int(a["action_ok"])
    out: dict[str, Any] = {
        "items": n,
        "action_accuracy": round(action / n, 4) if n else 0.0,
        "mood_accuracy": round(mood / n, 4) if n else 0.0,
        "both_accuracy": round(both / n, 4) if n else 0.0,
        "possible_in_game": {
            "items": len(possible),
            "action_accuracy": round(sum(a["action_ok"] for a in possible) / len(possible), 4)
            if possible
            else 0.0,
        },
        "by_intent": by["intent"],
        "by_attitude": by["attitude"],
        "failures": dict(arm.failures),
    }
    if arm.runtime is not None:
        out["latency_ms"] = summarize_ms(arm.latency_ms)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--held-out", action="store_true", help="only held-out corpus records")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--no-base", action="store_true", help="skip the base model")
    parser.add_argument(
        "--adapter", default="village", help="the village model's adapter: a GGUF path"
    )
    parser.add_argument("--no-model", action="store_true", help="rules only")
    parser.add_argument("--out", default=str(ROOT / "bench" / "decisions.json"))
    parser.add_argument("--answers", help="also write every answer as JSON lines here")
    args = parser.parse_args()

    cast = load_cast()
    level = load_level()
    places = [place_name(d.label) for d in level.decor if d.label]
    items = load_situations(Path(args.data), cast, places)
    if args.held_out:
        items = tuple(i for i in items if i.held_out)
    if args.limit:
        items = items[: args.limit]
    world = SituationWorld.of(cast, places)
    arms = [Arm("rules")]
    if not args.no_model:
        arms.append(_model_arm("village model", args.adapter))
        if not args.no_base:
            arms.append(_model_arm("base model", ""))
    load = load_average()
    began = time.perf_counter()
    for index, item in enumerate(items):
        for arm in arms:
            if arm.runtime is None:
                action, mood = _decide_rules(world, item)
            else:
                action, mood = _decide_model(arm, world, item)
            arm.answers.append(
                {
                    "id": item.id,
                    "intent": item.intent,
                    "attitude": item.attitude,
                    "text": item.text,
                    "expected": f"{item.action}; {item.mood}",
                    "got": f"{action}; {mood}",
                    "action_ok": action == item.action,
                    "mood_ok": mood == item.mood,
                    "possible_in_game": not (
                        item.intent == "show_way" and item.target not in item.places
                    ),
                }
            )
        if (index + 1) % 20 == 0:
            print(f"{index + 1}/{len(items)}", file=sys.stderr)
    wall = time.perf_counter() - began
    for arm in arms:
        if arm.runtime is not None:
            arm.runtime.shutdown()
    results = {arm.name: _score(arm) for arm in arms}
    report = {
        # Both model arms load the same base model file; the rules-only run loads none.
        "machine": machine_header(
            load, model=None if args.no_model else load_settings(CONFIG_DIR).ai.model
        ),
        "data": str(Path(args.data).relative_to(ROOT)),
        "held_out_only": args.held_out,
        "items": len(items),
        "wall_s": round(wall, 1),
        "results": results,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    if args.answers:
        with open(args.answers, "w", encoding="utf-8") as f:
            for arm in arms:
                for a in arm.answers:
                    f.write(json.dumps({"arm": arm.name, **a}) + "\n")
    for name, r in results.items():
        line = (
            f"{name:14s} action {r['action_accuracy']:.1%} "
            f"({r['possible_in_game']['action_accuracy']:.1%} of situations possible in game)  "
            f"mood {r['mood_accuracy']:.1%}  both {r['both_accuracy']:.1%}"
        )
        if "latency_ms" in r:
            latency = r["latency_ms"]
            line += f"  latency p50 {latency['p50']:.0f} ms p95 {latency['p95']:.0f}"
        print(line)
    print(f"-> {out}")


if __name__ == "__main__":
    main()
