"""The village adapter against the base model, in real headless village games, interleaved.

Each round runs the same games twice, once with the adapter (``ai.model.adapter =
"village"``) and once without (few-shot base prompts), alternating so that machine
noise hits both alike (each seed plays the arms in the order of the seed before,
reversed). Paced at 60 Hz, like a player's game. From the bubble logs and
reports it writes ``bench/village_model.json``:

- where shown lines came from (model, prepared, template, fallback), over every bubble
  and over the bubbles of villagers in the player's view;
- bark time to first token, tokens/s, queue wait, greetings within one tick, warm-up;
- model lines that copy a corpus or template line word for word, and lines that use a
  detail no template of that villager and trigger has (a prop, a name, a memory);
- the same line twice in a row from one villager.

``--pairs N`` also writes N blind pairs, each an adapter line from these games against
the same villager's template line for the same trigger, in random order, without the
key (``bench/village_pairs.txt``; the key is ``bench/village_pairs_key.json``).

``--arms`` sets other arms than the adapter against the base model, for example two
adapters: ``--arms 'new=ai.model.adapter=/tmp/x/village-lora.gguf;shipped='`` (an empty
setting list is the game as configured). With ``--pairs N`` each arm that uses an
adapter then gets N pairs, all shuffled together, so one reader judges them in one
sitting; the key says which arm wrote each. ``--pairs-of a,b`` keeps the pairs to those
arms (an arm that only measures, the filter off say, then costs the readers nothing).

    python tools/train/compare_village_model.py --seeds 7,11,23 --ticks 7200 --pairs 60
    python tools/train/compare_village_model.py --score bench/village_pairs_answers.txt

``--base REF`` plays every arm a second time from the commit ``REF`` (``adapter@REF``),
in the same rounds, to measure a change of the game's code against the code before it.

With ``--out bench/village_model_x.json`` the pairs, key and scoring use
``bench/village_pairs_x*``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from game.dialogue.corpus import load_corpus, training_line  # noqa: E402
from game.dialogue.templates import fill  # noqa: E402
from game.sim.cast import Cast, load_cast  # noqa: E402
from tools.bench import trees  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

ARMS = {"adapter": (), "base": ("--set", 'ai.model.adapter=""')}
PROPS = ("crate", "barrel", "apple", "ball")
_WORD = re.compile(r"[a-z']+")
_SITUATION = {
    "greet": "the traveller walks up",
    "farewell": "the traveller walks away",
    "hit": "hit by something the traveller threw",
    "near_miss": "something lands close by",
    "bumped": "bumped into",
    "toppled": "the crate stack topples over",
    "errand_offer": "asking the traveller to do their errand",
    "errand_done": "the traveller just finished their errand",
    "ambient": "small talk",
    "chat": "answering the traveller",
}


def situation(bubble: dict[str, Any]) -> str:
    """What happened, as the reader of a pair is told: the prop that flew, by kind, and
    who small talk is with (older bubble logs name neither)."""
    trigger, subject = bubble["trigger"], bubble.get("subject") or ""
    if subject and trigger == "hit":
        return f"hit by {_article(subject)} {subject} the traveller threw"
    if subject and trigger == "near_miss":
        return f"{_article(subject)} {subject} lands close by"
    listener = bubble.get("listener")
    if trigger == "ambient" and listener:
        return f"small talk with {listener}"
    return _SITUATION[trigger]


def _article(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _norm(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


def parse_arms(text: str) -> dict[str, tuple[str, ...]]:
    """``name=key=value+key=value;name2=`` as arms of ``--set`` options."""
    arms: dict[str, tuple[str, ...]] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, _, settings = part.partition("=")
        pairs = [s for s in settings.split("+") if s]
        arms[name] = tuple(option for s in pairs for option in ("--set", s))
    if not arms:
        raise SystemExit("--arms needs an arm, e.g. 'a=ai.model.adapter=x;b='")
    return arms


def run_game(
    arm: str, settings: tuple[str, ...], seed: int, ticks: int, workdir: Path, root: Path = ROOT
) -> dict[str, Any]:
    """One paced headless village game, played from the tree at ``root``; its report and
    bubbles."""
    tag = f"{arm}-{seed}-{ticks}"
    log, report = workdir / f"{tag}.jsonl", workdir / f"{tag}.json"
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    command = [sys.executable, "-m", "game", "--headless", "--scenario", "village", "--new",
               "--seed", str(seed), "--ticks", str(ticks), "--bubble-log", str(log),
               "--report", str(report), *settings]  # fmt: skip
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tag}: the game exited with {done.returncode}\n{done.stderr[-2000:]}")
    bubbles = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return {"arm": arm, "seed": seed, "report": json.loads(report.read_text()), "bubbles": bubbles}


class LineJudge:
    """What the written lines of the village are, to tell copies and new details."""

    def __init__(self, cast: Cast) -> None:
        self.templates: dict[tuple[str, str], list[str]] = {}
        names = [spec.name for spec in cast.npcs]
        for spec in cast.npcs:
            for trigger, lines in spec.lines.items():
                filled = [fill(line, name=spec.name, listener="traveller") for line in lines]
                self.templates[(spec.name, trigger.value)] = filled
        self.written = {_norm(line) for lines in self.templates.values() for line in lines}
        # A corpus line, whole or cut to its first sentence as a prompt's example shows it.
        records = load_corpus(cast)
        self.written |= {_norm(record.line) for record in records}
        self.written |= {_norm(training_line(record)) for record in records}
        self.details = set(PROPS) | {"apples", "crates", "barrels", "balls"}
        self.details |= {w for name in names for w in _words(name) if w != "old"}

    def copied(self, text: str) -> bool:
        """Word for word a template or corpus line."""
        return _norm(text) in self.written

    def new_detail(self, bubble: dict[str, Any]) -> bool:
        """Whether the line names a prop, a villager or a remembered event that none of
        this villager's template lines for the trigger has."""
        said = _words(bubble["text"])
        template_words: set[str] = set()
        for line in self.templates.get((bubble["name"], bubble["trigger"]), []):
            template_words |= _words(line)
        remembered = {
            w for fact in bubble.get("remembers", []) for w in _words(fact) if len(w) > 4
        } - {"traveller", "their", "about"}
        return bool((said & (self.details | remembered)) - template_words)


def arm_figures(
    games: list[dict[str, Any]], judge: LineJudge, view_half_width: float
) -> dict[str, Any]:
    """The figures of one arm over its games.

    ``model_share_in_view`` counts only the bubbles of villagers in the view (within
    ``view_half_width`` of the player along x, where the view follows the player): the
    lines a player could read.
    """
    bubbles = [b for game in games for b in game["bubbles"]]
    model = [b for b in bubbles if b["origin"] in ("model", "prepared")]
    in_view = [
        b
        for b in bubbles
        if b.get("player_dx") is not None and abs(b["player_dx"]) <= view_half_width
    ]
    in_view_model = [b for b in in_view if b["origin"] in ("model", "prepared")]
    reports = [game["report"] for game in games]
    repeats = 0
    last: dict[str, str] = {}
    for bubble in bubbles:
        if last.get(bubble["name"]) == bubble["text"]:
            repeats += 1
        last[bubble["name"]] = bubble["text"]

    def per_game(path: str) -> list[object]:
        out: list[object] = []
        for report in reports:
            value: object = report
            for key in path.split("."):
                value = value.get(key, {}) if isinstance(value, dict) else {}
            out.append(value)
        return out

    startups = [r.get("startup", {}) for r in reports]
    return {
        "games": len(games),
        "bubbles": len(bubbles),
        "by_origin": dict(Counter(b["origin"] for b in bubbles)),
        "model_share": round(len(model) / max(1, len(bubbles)), 3),
        "bubbles_in_view": len(in_view),
        "by_origin_in_view": dict(Counter(b["origin"] for b in in_view)),
        "model_share_in_view": round(len(in_view_model) / max(1, len(in_view)), 3),
        "copied": sum(judge.copied(b["text"]) for b in model),
        "copied_share": round(sum(judge.copied(b["text"]) for b in model) / max(1, len(model)), 3),
        "new_detail_share": round(sum(judge.new_detail(b) for b in model) / max(1, len(model)), 3),
        "same_line_twice_in_a_row": repeats,
        "ttft_ms_p50": per_game("ai.ttft_ms.p50"),
        "tokens_per_s_p50": per_game("ai.tokens_per_s.p50"),
        "queue_wait_ms_p95": per_game("ai.queue_wait_ms.p95"),
        "greetings_within_1_tick": per_game("ai.greetings_within_1_tick"),
        "encounters": per_game("ai.encounters"),
        "fallbacks": per_game("ai.fallbacks"),
        "tick_ms_p99": per_game("tick_ms.p99"),
        "warm_up_ms": [
            round(s["first_tick_ms"] - s["model_ready_ms"], 1)
            for s in startups
            if "first_tick_ms" in s and "model_ready_ms" in s
        ],
        "first_tick_ms": [s.get("first_tick_ms") for s in startups],
        "lines": [
            {"name": b["name"], "trigger": b["trigger"], "text": b["text"], "origin": b["origin"]}
            for b in model
        ],
    }


def write_pairs(
    games: list[dict[str, Any]],
    judge: LineJudge,
    count: int,
    rng: random.Random,
    out: Path,
    arms: tuple[str, ...] = ("adapter",),
) -> None:
    """Blind pairs: a model line of each arm in ``arms`` against the same villager's
    template, ``count`` an arm, all shuffled together."""
    picked: list[tuple[str, dict[str, Any]]] = []
    for arm in arms:
        first_of_text: dict[str, dict[str, Any]] = {}
        for game in games:
            for b in game["bubbles"] if game["arm"] == arm else ():
                if b["origin"] in ("model", "prepared") and b["trigger"] != "chat":
                    first_of_text.setdefault(b["text"], b)
        unique = list(first_of_text.values())
        picked += [(arm, b) for b in rng.sample(unique, min(count, len(unique)))]
    if len(arms) > 1:
        rng.shuffle(picked)
    text, key = [], []
    for i, (arm, bubble) in enumerate(picked, start=1):
        template = rng.choice(judge.templates[(bubble["name"], bubble["trigger"])])
        model_first = rng.random() < 0.5
        a, b = (bubble["text"], template) if model_first else (template, bubble["text"])
        memory = "; ".join(bubble.get("remembers", [])) or "nothing yet"
        text.append(
            f"{i}. {bubble['name']}: {situation(bubble)}"
            f" (remembers: {memory})\n   A: {a}\n   B: {b}\n"
        )
        side = "A" if model_first else "B"
        key.append({"pair": i, "model": side, "trigger": bubble["trigger"], "arm": arm})
    out.with_suffix(".txt").write_text("\n".join(text))
    (out.parent / (out.stem + "_key.json")).write_text(json.dumps(key, indent=1) + "\n")


def score(answers: Path, key_path: Path) -> dict[str, Any]:
    """A reader's answers (``<n> <A|B> <rating A> <rating B>`` per line) against the key;
    with pairs from more than one arm, also the figures of each arm."""
    key = {row["pair"]: row for row in json.loads(key_path.read_text())}
    rows: dict[str, list[tuple[bool, str, str]]] = {}
    for line in answers.read_text().splitlines():
        parts = line.split()
        if len(parts) != 4 or not parts[0].isdigit() or int(parts[0]) not in key:
            continue
        row = key[int(parts[0])]
        model_side = row["model"]
        model_rating, template_rating = (
            (parts[2], parts[3]) if model_side == "A" else (parts[3], parts[2])
        )
        rows.setdefault(row.get("arm", "adapter"), []).append(
            (parts[1] == model_side, model_rating, template_rating)
        )

    def figures(answered: list[tuple[bool, str, str]]) -> dict[str, Any]:
        preferred = sum(r[0] for r in answered)
        return {
            "pairs": len(answered),
            "model_preferred": preferred,
            "model_preferred_share": round(preferred / max(1, len(answered)), 3),
            "ratings": {
                "model": dict(Counter(r[1] for r in answered)),
                "template": dict(Counter(r[2] for r in answered)),
            },
        }

    result = figures([r for answered in rows.values() for r in answered])
    if len(rows) > 1:
        result["by_arm"] = {arm: figures(answered) for arm, answered in sorted(rows.items())}
    return result


def _pairs_stem(out: Path) -> Path:
    """Where a run's pairs go: ``village_model_x.json`` writes ``village_pairs_x.txt``."""
    return out.with_name(out.stem.replace("village_model", "village_pairs", 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="7,11,23")
    parser.add_argument("--ticks", type=int, default=7200)
    parser.add_argument("--greet-seed", type=int, default=3, help="the greeting run's seed")
    parser.add_argument("--greet-ticks", type=int, default=3600)
    parser.add_argument("--pairs", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "village_model.json")
    parser.add_argument("--score", type=Path, help="score a reader's answers to the pairs")
    parser.add_argument("--arms", help="arms other than adapter and base (see above)")
    parser.add_argument("--base", help="a commit whose game plays the arms too (arm@REF)")
    parser.add_argument(
        "--pairs-of", help="the arms whose lines go into the pairs, comma separated (default: all)"
    )
    args = parser.parse_args()
    arms = dict(ARMS if args.arms is None else parse_arms(args.arms))
    roots = dict.fromkeys(arms, ROOT)
    unknown = set(args.pairs_of.split(",")) - set(arms) if args.pairs_of else set()
    if unknown:
        raise SystemExit(f"--pairs-of names no arm: {', '.join(sorted(unknown))}")
    if args.base:
        base = trees.checkout(args.base)
        for arm, settings in list(arms.items()):
            arms[f"{arm}@{args.base}"] = settings
            roots[f"{arm}@{args.base}"] = base
    if len(arms) < 2:
        raise SystemExit("two arms or more are needed: --arms with two, or one and --base")
    if args.score is not None:
        stem = _pairs_stem(args.out)
        key = stem.parent / (stem.name + "_key.json")
        print(json.dumps(score(args.score, key), indent=1))
        return
    seeds = [int(s) for s in args.seeds.split(",") if s]
    judge = LineJudge(load_cast())
    load_start = load_average()
    began = time.perf_counter()
    games: list[dict[str, Any]] = []
    greet: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for i, seed in enumerate(seeds):
            # Each seed plays the arms in turn, the order reversed seed by seed, so that
            # no arm always plays the sitting's first game.
            order = list(arms.items())
            for arm, settings in order if i % 2 == 0 else order[::-1]:
                print(f"{arm} seed {seed}: {args.ticks} ticks", flush=True)
                games.append(run_game(arm, settings, seed, args.ticks, work, roots[arm]))
        for arm, settings in arms.items():
            print(f"{arm} seed {args.greet_seed}: {args.greet_ticks} ticks", flush=True)
            greet.append(
                run_game(arm, settings, args.greet_seed, args.greet_ticks, work, roots[arm])
            )
    configured = load_settings(CONFIG_DIR)
    # The view follows the player and is the window's width across.
    half = configured.game.window.width / 2
    result: dict[str, Any] = {
        "version": 2,
        "machine": machine_header(load_start, model=configured.ai.model),
        "seeds": seeds,
        "ticks": args.ticks,
        "wall_s": round(time.perf_counter() - began, 1),
        "arms": {
            arm: arm_figures([g for g in games if g["arm"] == arm], judge, half) for arm in arms
        },
        "arm_settings": {arm: list(settings) for arm, settings in arms.items()},
        "greetings": {
            g["arm"]: {
                "seed": args.greet_seed,
                "ticks": args.greet_ticks,
                "encounters": g["report"]["ai"].get("encounters", 0),
                "within_1_tick": g["report"]["ai"].get("greetings_within_1_tick", 0),
                "encounter_latency_ticks": g["report"]["ai"].get("encounter_latency_ticks"),
            }
            for g in greet
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    if args.pairs:
        with_model = tuple(arm for arm in arms if arm.partition("@")[0] != "base")
        if args.pairs_of:
            with_model = tuple(arm for arm in with_model if arm in args.pairs_of.split(","))
        write_pairs(games, judge, args.pairs, random.Random(5), _pairs_stem(args.out), with_model)
    for arm, figures in result["arms"].items():
        print(
            f"{arm}: {figures['bubbles']} bubbles, model share {figures['model_share']} "
            f"({figures['model_share_in_view']} in view), "
            f"copied {figures['copied_share']}, new detail {figures['new_detail_share']}, "
            f"ttft p50 {figures['ttft_ms_p50']}, greet {result['greetings'][arm]}"
        )


if __name__ == "__main__":
    main()
