"""The content filter on its labelled evaluation set: the word list alone against both layers.

Every line of ``tools/eval/data/content.jsonl`` (written apart from the classifier's
exemplars in ``assets/content/``, with no line in common: checked here) goes through

- **blocklist**: the word list alone (``assets/content/blocklist.txt``);
- **word list and patterns**: all of layer 1, with ``assets/content/patterns.txt``;
- **layered**: layer 1, then layer 2, the classifier on the line's hidden state read from
  the packaged model on this one thread with ``n_threads=1``, as on the game's worker,
  with ``[filter]`` and ``hygiene.blocklist`` from ``config/ai.toml``; timed as the worker
  runs it (``ContentFilter.check``: the semantic layer only reads lines the word list
  passed).

It reports recall on unfit lines and the false-positive rate on fit lines, overall, by
kind and by source (villager lines, player text), and what each layer costs per line:
p50 and p95 of ``--repeats`` timed passes over every line, in wall time and in the
thread's CPU time, with one full-model decode step timed beside them as a yardstick for
other machines, and both layers' figures at other thresholds (``sweep``). The read alone
is also timed against a read at ``--compare-layer`` (the layer the filter read before,
mean-pooled), the two alternating line by line in the same run so that other work on the
machine weighs on both alike (``read_cost``). ``--methods``
also scores the other ways of reading meaning measured when the classifier was chosen
(``tools/eval/content_judge.py``). Writes
``bench/content_filter.json``. ``--data`` takes another labelled set: each held-out set,
written by a hand that saw none of this, goes to its own report (the second is the fair
one: the first was read for the second round of patterns):

    python tools/eval/content_filter.py
    python tools/eval/content_filter.py --data tools/eval/data/content_holdout.jsonl \
        --out bench/content_filter_holdout.json
    python tools/eval/content_filter.py --data tools/eval/data/content_holdout2.jsonl \
        --out bench/content_filter_holdout2.json
    python tools/eval/content_filter.py --methods centroid,knn,judge
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ai.config import FilterConfig, ModelConfig  # noqa: E402
from ai.content import ContentFilter, LabelledLine, LlamaHiddenStates, load_labelled  # noqa: E402
from ai.content.filter import PASSED_ON_WORDS, read_form  # noqa: E402
from ai.content.labelled import key  # noqa: E402
from ai.model import resolve_model_path, verified_sha256  # noqa: E402
from tools.eval.content_judge import Judge, Neighbours, threshold_at  # noqa: E402

DATA = ROOT / "tools" / "eval" / "data" / "content.jsonl"
CONTENT = ROOT / "assets" / "content"
OUT = ROOT / "bench" / "content_filter.json"
VERSION = 2
_WORD = re.compile(r"[a-z']+")


@dataclass
class Machine:
    """Where and on what the figures were measured."""

    cpu: str
    cores: int | None
    platform: str
    python: str
    llama_cpp_python: str
    model_sha256: str
    commit: str
    load_average_start: list[float]
    load_average_end: list[float] = field(default_factory=list)


@dataclass
class Cost:
    """Milliseconds per line, p50 and p95, wall and thread CPU time."""

    calls: int
    wall_p50_ms: float
    wall_p95_ms: float
    cpu_p50_ms: float
    cpu_p95_ms: float


@dataclass
class Rates:
    """Recall on unfit lines and false positives on fit lines, for one slice."""

    unfit: int
    caught: int
    recall: float
    fit: int
    refused: int
    false_positive_rate: float


@dataclass
class Arm:
    """One way of filtering, scored on the whole set and per kind and source."""

    name: str
    overall: Rates
    by_source: dict[str, Rates]
    by_kind: dict[str, dict[str, int]]
    cost: Cost | None = None
    threshold: float | None = None


@dataclass
class ReadCost:
    """What one read of a line's hidden state costs, at one layer and pooling."""

    layer: int
    pooling: str
    cost: Cost


@dataclass
class Report:
    """``bench/content_filter.json``."""

    version: int
    machine: Machine
    data: dict[str, Any]
    config: dict[str, Any]
    arms: list[Arm]
    methods: list[Arm]
    reference_decode_step: Cost | None
    read_cost: list[ReadCost]
    sweep: list[dict[str, float]]
    lines: list[dict[str, Any]]

    def to_json(self) -> str:
        """The one serialiser of this report."""
        return json.dumps(asdict(self), indent=2) + "\n"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else []


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return done.stdout.strip()


def _cost(wall: Sequence[float], cpu: Sequence[float]) -> Cost:
    w = np.asarray(wall) * 1000.0
    c = np.asarray(cpu) * 1000.0
    return Cost(
        len(w),
        round(float(np.percentile(w, 50)), 3),
        round(float(np.percentile(w, 95)), 3),
        round(float(np.percentile(c, 50)), 3),
        round(float(np.percentile(c, 95)), 3),
    )


def _rates(lines: Sequence[LabelledLine], flags: Sequence[bool]) -> Rates:
    unfit = [f for line, f in zip(lines, flags, strict=True) if not line.fit]
    fit = [f for line, f in zip(lines, flags, strict=True) if line.fit]
    return Rates(
        len(unfit),
        sum(unfit),
        round(sum(unfit) / len(unfit), 4) if unfit else 0.0,
        len(fit),
        sum(fit),
        round(sum(fit) / len(fit), 4) if fit else 0.0,
    )


def _arm(name: str, lines: Sequence[LabelledLine], flags: Sequence[bool]) -> Arm:
    by_source = {
        source: _rates(
            [line for line in lines if line.source == source],
            [f for line, f in zip(lines, flags, strict=True) if line.source == source],
        )
        for source in ("villager", "player")
    }
    by_kind: dict[str, dict[str, int]] = {}
    for line, flag in zip(lines, flags, strict=True):
        row = by_kind.setdefault(line.kind, {"lines": 0, "refused": 0, "fit": int(line.fit)})
        row["lines"] += 1
        row["refused"] += int(flag)
    return Arm(name, _rates(lines, flags), by_source, dict(sorted(by_kind.items())))


def _similarity(a: str, b: str) -> float:
    x, y = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(x & y) / len(x | y) if x | y else 0.0


def _sweep(
    lines: Sequence[LabelledLine], words: Sequence[bool], scores: Sequence[float | None]
) -> list[dict[str, float]]:
    """Both layers' recall and false positives if the threshold were elsewhere."""
    out = []
    for step in range(6, 19):
        cut = step / 20.0
        flags = [w or (s is not None and s >= cut) for w, s in zip(words, scores, strict=True)]
        rates = _rates(lines, flags)
        out.append(
            {
                "threshold": cut,
                "recall": rates.recall,
                "false_positive_rate": rates.false_positive_rate,
            }
        )
    return out


def _filter_settings() -> tuple[FilterConfig, tuple[str, ...]]:
    """``[filter]`` and ``hygiene.blocklist`` from ``config/ai.toml``, as the game reads them."""
    data = tomllib.loads((ROOT / "config" / "ai.toml").read_text(encoding="utf-8"))
    extra = data.get("hygiene", {}).get("blocklist", [])
    return FilterConfig(**data.get("filter", {})), tuple(str(word) for word in extra)


def _timed(fn: Callable[[str], Any], texts: Sequence[str], repeats: int) -> tuple[list[Any], Cost]:
    """``fn`` over every text, ``repeats`` times; the results of the first pass."""
    results: list[Any] = []
    wall: list[float] = []
    cpu: list[float] = []
    for r in range(repeats):
        for text in texts:
            w, c = time.perf_counter(), time.thread_time()
            out = fn(text)
            cpu.append(time.thread_time() - c)
            wall.append(time.perf_counter() - w)
            if r == 0:
                results.append(out)
    return results, _cost(wall, cpu)


def _alternated(
    readers: Sequence[Callable[[str], Any]], texts: Sequence[str], repeats: int
) -> list[Cost]:
    """Each reader on each text, taking turns line by line (the order flips each pass)."""
    wall: list[list[float]] = [[] for _ in readers]
    cpu: list[list[float]] = [[] for _ in readers]
    for r in range(repeats):
        for text in texts:
            order = range(len(readers)) if r % 2 == 0 else range(len(readers) - 1, -1, -1)
            for i in order:
                w, c = time.perf_counter(), time.thread_time()
                readers[i](text)
                cpu[i].append(time.thread_time() - c)
                wall[i].append(time.perf_counter() - w)
    return [_cost(w, c) for w, c in zip(wall, cpu, strict=True)]


def _decode_step(llm: Any, steps: int = 20) -> Cost:
    """One token through the whole model with its logits, as in generation."""
    llm.reset()
    llm.eval(llm.tokenize(b"The baker said good morning to the smith", add_bos=True))
    wall: list[float] = []
    cpu: list[float] = []
    token = llm.tokenize(b" and", add_bos=False)[0]
    for _ in range(steps):
        w, c = time.perf_counter(), time.thread_time()
        llm.eval([token])
        cpu.append(time.thread_time() - c)
        wall.append(time.perf_counter() - w)
    llm.reset()
    return _cost(wall, cpu)


def main() -> int:
    """Run the evaluation and write the report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--exemplars", type=Path, default=CONTENT / "exemplars.jsonl")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over the set")
    parser.add_argument("--methods", default="", help="also: centroid,knn,judge")
    parser.add_argument("--fp-target", type=float, default=0.05, help="for --methods thresholds")
    parser.add_argument("--threshold", type=float, help="instead of filter.threshold")
    parser.add_argument("--classifier", type=Path, default=CONTENT / "classifier.npz")
    parser.add_argument(
        "--compare-layer", type=int, default=4, help="time a mean read here beside ours"
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    import llama_cpp
    from llama_cpp import Llama

    lines = load_labelled(args.data)
    exemplars = load_labelled(args.exemplars)
    shared = {key(line.text) for line in lines} & {key(line.text) for line in exemplars}
    if shared:
        raise SystemExit(f"content_filter: {len(shared)} lines are in both sets")
    nearest = max(_similarity(a.text, b.text) for a in lines for b in exemplars)
    filter_config, extra_words = _filter_settings()
    if args.threshold is not None:
        filter_config = replace(filter_config, threshold=args.threshold)
    path = resolve_model_path(ModelConfig())
    sha = verified_sha256(ModelConfig(), path)
    machine = Machine(
        _cpu(),
        os.cpu_count(),
        platform.platform(),
        platform.python_version(),
        str(llama_cpp.__version__),
        sha,
        _commit(),
        _load(),
    )
    content = ContentFilter.load(
        filter_config,
        CONTENT / "blocklist.txt",
        args.classifier,
        extra_words,
        CONTENT / "patterns.txt",
    )
    classifier = content.classifier
    if classifier is None:
        raise SystemExit("content_filter: the semantic layer is off in config/ai.toml")
    llm = Llama(
        model_path=str(path),
        n_ctx=512,
        n_batch=64,
        n_threads=1,
        n_threads_batch=1,
        n_gpu_layers=0,
        verbose=False,
    )
    states = content.meaning_reader(llm, sha)
    if states is None:
        raise SystemExit("content_filter: the classifier does not fit the packaged model")
    texts = [line.text for line in lines]
    words_only = ContentFilter(filter_config, content.words)
    word_verdicts, word_cost = _timed(words_only.check_words, texts, args.repeats)
    layer1_verdicts, layer1_cost = _timed(content.check_words, texts, args.repeats)
    meaning_verdicts, meaning_cost = _timed(
        lambda text: content.check_meaning(text, states), texts, args.repeats
    )
    _, layered_cost = _timed(lambda text: content.check(text, states), texts, args.repeats)
    other = LlamaHiddenStates(llm, args.compare_layer)
    ours_cost, other_cost = _alternated([states.pooled, other.pooled], texts, args.repeats)
    other.close()
    read_cost = [
        ReadCost(classifier.layer, classifier.pooling, ours_cost),
        ReadCost(args.compare_layer, "mean", other_cost),
    ]
    blocklist_flags = [not v.ok for v in word_verdicts]
    layer1_flags = [not v.ok for v in layer1_verdicts]
    layered_flags = [
        (not w.ok) or (not m.ok) for w, m in zip(layer1_verdicts, meaning_verdicts, strict=True)
    ]
    blocklist = _arm("blocklist", lines, blocklist_flags)
    blocklist.cost = word_cost
    layer1 = _arm("word list and patterns", lines, layer1_flags)
    layer1.cost = layer1_cost
    layered = _arm("layered", lines, layered_flags)
    layered.cost = layered_cost
    layered.threshold = filter_config.threshold
    meaning_only = _arm("semantic layer alone", lines, [not m.ok for m in meaning_verdicts])
    meaning_only.cost = meaning_cost
    meaning_only.threshold = filter_config.threshold
    methods = _methods(args, llm, states, lines, exemplars, layer1_flags, classifier)
    reference = _decode_step(llm)
    states.close()
    llm.close()
    machine.load_average_end = _load()
    report = Report(
        VERSION,
        machine,
        {
            "file": str(args.data.relative_to(ROOT)) if args.data.is_relative_to(ROOT) else "",
            "lines": len(lines),
            "unfit": sum(not line.fit for line in lines),
            "fit": sum(line.fit for line in lines),
            "exemplars": len(exemplars),
            "lines_shared_with_exemplars": 0,
            "most_similar_exemplar_word_jaccard": round(nearest, 3),
        },
        {
            "threshold": filter_config.threshold,
            "classifier_layer": classifier.layer,
            "classifier_pooling": classifier.pooling,
            "classifier_hidden_units": (
                0 if classifier.hidden_weights is None else int(classifier.weights.shape[0])
            ),
            "classifier_threshold": classifier.threshold,
            "classifier_mix": classifier.mix,
            "classifier_words_floor": (
                classifier.words_floor if math.isfinite(classifier.words_floor) else None
            ),
            "passed_on_words_unread": sum(m.reason == PASSED_ON_WORDS for m in meaning_verdicts),
            "word_list_entries": len(content.words),
            "pattern_entries": 0 if content.patterns is None else len(content.patterns),
            "n_threads": 1,
            "timed_passes": args.repeats,
        },
        [blocklist, layer1, layered, meaning_only],
        methods,
        reference,
        read_cost,
        _sweep(lines, layer1_flags, [m.score for m in meaning_verdicts]),
        [
            {
                "line": i + 1,
                "fit": line.fit,
                "kind": line.kind,
                "blocklist": blocklist_flags[i],
                "patterns": layer1_flags[i] and not blocklist_flags[i],
                "layered": layered_flags[i],
                "score": None if m.score is None else round(m.score, 4),
            }
            for i, (line, m) in enumerate(zip(lines, meaning_verdicts, strict=True))
        ],
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report.to_json())
    for arm in report.arms + report.methods:
        o = arm.overall
        cost = f", {arm.cost.cpu_p95_ms:.2f} ms cpu p95" if arm.cost else ""
        print(
            f"{arm.name}: recall {o.recall:.3f}, false positives {o.false_positive_rate:.3f}{cost}"
        )
    for read in read_cost:
        c = read.cost
        print(
            f"read at layer {read.layer} ({read.pooling}): wall p50 {c.wall_p50_ms:.1f} ms,"
            f" p95 {c.wall_p95_ms:.1f}; cpu p50 {c.cpu_p50_ms:.1f}, p95 {c.cpu_p95_ms:.1f}"
        )
    print(f"load average {machine.load_average_start} -> {machine.load_average_end}")
    return 0


def _methods(
    args: argparse.Namespace,
    llm: Any,
    states: LlamaHiddenStates | Any,
    lines: Sequence[LabelledLine],
    exemplars: Sequence[LabelledLine],
    blocklist_flags: Sequence[bool],
    classifier: Any,
) -> list[Arm]:
    wanted = [m for m in args.methods.split(",") if m]
    if not wanted:
        return []
    out: list[Arm] = []
    unfit = [not line.fit for line in exemplars]
    # As in training: the threshold lets --fp-target of the hard fit exemplars through as
    # unfit (not those drawn from the village corpus, which are easy).
    counted = [not line.fit or line.kind != "corpus" for line in exemplars]
    texts = [line.text for line in lines]
    if {"centroid", "knn"} & set(wanted):
        rows = np.asarray(
            [states.pooled(read_form(line.text)) for line in exemplars], dtype=np.float64
        )
        near = Neighbours(rows, unfit, classifier.mean, classifier.scale)
        for name in ("centroid", "knn"):
            if name not in wanted:
                continue
            score: Callable[[Any], float] = getattr(near, name)
            own = [
                near.knn(row, skip=i) if name == "knn" else near.centroid(row)
                for i, row in enumerate(rows)
            ]
            cut = threshold_at(
                [v for v, c in zip(own, counted, strict=True) if c],
                [u for u, c in zip(unfit, counted, strict=True) if c],
                args.fp_target,
            )

            def scored(text: str, score: Callable[[Any], float] = score) -> float:
                return score(states.pooled(read_form(text)))

            scores, cost = _timed(scored, texts, args.repeats)
            out.append(_scored(name, lines, scores, cut, blocklist_flags, cost))
    if "judge" in wanted:
        fits = [line for line in exemplars if line.fit and line.kind == "villager"][:4]
        bad = [line for line in exemplars if not line.fit][::97][:4]
        shots = [(line.text, line.fit) for pair in zip(fits, bad, strict=True) for line in pair]
        judge = Judge(llm, shots)
        taken = {text for text, _ in shots}
        sample = [
            line
            for line in exemplars[::3]
            if line.text not in taken and (not line.fit or line.kind != "corpus")
        ]
        own = [judge.log_odds(line.text) for line in sample]
        cut = threshold_at(own, [not line.fit for line in sample], args.fp_target)
        scores, cost = _timed(judge.log_odds, texts, args.repeats)
        judge.close()
        out.append(_scored("judge", lines, scores, cut, blocklist_flags, cost))
    return out


def _scored(
    name: str,
    lines: Sequence[LabelledLine],
    scores: Sequence[float],
    cut: float,
    blocklist_flags: Sequence[bool],
    cost: Cost,
) -> Arm:
    alone = [s > cut for s in scores]
    arm = _arm(
        f"{name} (with the word list)",
        lines,
        [a or b for a, b in zip(alone, blocklist_flags, strict=True)],
    )
    arm.cost = cost
    arm.threshold = round(cut, 4)
    arm.by_source["alone"] = _rates(lines, alone)
    return arm


if __name__ == "__main__":
    raise SystemExit(main())
