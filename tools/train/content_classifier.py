"""Train layer 2 of the content filter: a network on the model's hidden states, and one on words.

Reads the labelled exemplars (``assets/content/exemplars.jsonl``) and the held-out sets
that have measured the filter once each (:data:`MEASURED_SETS`; never the evaluation set
``tools/eval/data/content.jsonl`` nor the thirty-fourth to thirty-seventh held-out sets),
reads each line's hidden state at several layers of the packaged model (the one the
classifier is for) on one thread, exactly as the game will (``ai.content.hidden``, the
line read as :func:`ai.content.filter.read_form` writes it), pooled as ``--pooling`` says
(``mean+last``: the mean over the tokens and the last token's state), and for each layer
and regularisation strength runs repeated k-fold cross-validation on those lines alone.
The model is one hidden layer of ``--hidden`` rectified units trained by Adam with
weight decay (``--hidden 0``: the logistic regression by Newton's method that shipped
before). Beside it, a logistic regression on each line's hashed words, word pairs and
letter runs (:mod:`ai.content.lexical`, ``--words-lams``; ``--words-lams ''`` for none),
cross-validated on the same folds; their log-odds are mixed, ``--mixes`` of the
network's. For each mix, the words' floor is the highest log-odds of the words alone
below which at most ``--floor-lost`` unfit lines that the mix refuses scored out of fold,
over all repeats: a line below it passes without the model reading it (with none allowed,
two unfit lines whose words read as plain held the floor at log-odds -6, not -1.5).
Among the candidates within ``--read-slack`` of the best recall, the one that leaves the
most fit lines unread is chosen. The threshold is the one at which ``--fp-target`` of
the hard fit exemplars (tricky words, grumpy villagers, player chat: not the lines drawn
from the village corpus, which are easy) are refused in cross-validation; on fresh sets
the share refused comes out about half a point higher, so it aims at 2.5% for 3%.
Recall "with the word list" counts the lines layer 1 (the word list and the patterns,
``assets/content/patterns.txt``) refuses as caught. The game's semantic layer reads only
the lines layer 1 lets by; ``--residual`` learns from those exemplars alone (measured,
and not adopted: ``assets/content/README.md``). The layer is 0 unless ``--layer`` says
otherwise: a read's cost grows with the layer (each of the model's 18 costs about the
same), and on the exemplars the deeper layers caught no more than layer 0 with the last
token beside the mean (``bench/content_classifier.json``). ``--layer -1`` takes the
shallowest layer within ``--slack`` of the best cross-validated recall. The final
weights are fitted on all the lines it learns from and written, with the layer, the
pooling, the threshold and the model's sha256, to ``assets/content/classifier.npz``; the
table of every candidate goes to ``bench/content_classifier.json``.

    python tools/train/content_classifier.py
    python tools/train/content_classifier.py --layers 0,1,2 --hidden 0 --pooling mean
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ai.config import ModelConfig  # noqa: E402
from ai.content.filter import read_form  # noqa: E402
from ai.content.hidden import LlamaHiddenStates  # noqa: E402
from ai.content.labelled import load_labelled  # noqa: E402
from ai.content.lexical import BUCKETS, feature_scale, hashed_features  # noqa: E402
from ai.content.meaning import Classifier  # noqa: E402
from ai.content.patterns import PatternList  # noqa: E402
from ai.content.words import WordList  # noqa: E402
from ai.model import resolve_model_path, verified_sha256  # noqa: E402

EXEMPLARS = ROOT / "assets" / "content" / "exemplars.jsonl"
_DATA = ROOT / "tools" / "eval" / "data"
#: Held-out sets that measured the filter once each and then joined what it learns from:
#: the first thirty-three. The thirty-fourth to thirty-seventh measured what it trains.
MEASURED_SETS = tuple(
    _DATA / f"content_holdout{n}.jsonl" for n in ("", *(str(k) for k in range(2, 34)))
)
OUT = ROOT / "assets" / "content" / "classifier.npz"
REPORT = ROOT / "bench" / "content_classifier.json"

Matrix = np.ndarray[Any, np.dtype[np.float64]]
#: Line numbers, or a mask over the lines.
Lines = np.ndarray[Any, Any]
Scorer = Callable[[Matrix], Matrix]
Fit = Callable[[Matrix, Matrix], tuple[Scorer, dict[str, Matrix | float]]]


def fit_logistic(x: Matrix, y: Matrix, lam: float, steps: int = 20) -> tuple[Matrix, float]:
    """L2-regularised logistic regression by Newton's method; the bias is not penalised."""
    n, size = x.shape
    design = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(size + 1)
    penalty = lam * np.eye(size + 1)
    penalty[-1, -1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(design @ w)))
        gradient = design.T @ (p - y) + penalty @ w
        hessian = (design * (p * (1.0 - p))[:, None]).T @ design + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-5:
            break
    return w[:-1], float(w[-1])


class Adam:
    """Adam's updates to ``params`` in place, at ``rate`` (its other settings the usual)."""

    def __init__(self, params: list[Matrix], rate: float) -> None:
        self.params = params
        self.rate = rate
        self._first = [np.zeros_like(p) for p in params]
        self._second = [np.zeros_like(p) for p in params]
        self._t = 0

    def step(self, grads: list[Matrix]) -> None:
        """One step down ``grads``, one per parameter."""
        beta1, beta2 = 0.9, 0.999
        self._t += 1
        for i, grad in enumerate(grads):
            self._first[i] = beta1 * self._first[i] + (1 - beta1) * grad
            self._second[i] = beta2 * self._second[i] + (1 - beta2) * grad * grad
            m = self._first[i] / (1 - beta1**self._t)
            v = self._second[i] / (1 - beta2**self._t)
            self.params[i] = self.params[i] - self.rate * m / (np.sqrt(v) + 1e-8)


def fit_network(
    x: Matrix, y: Matrix, decay: float, hidden: int, steps: int = 400, seed: int = 0
) -> tuple[Matrix, Matrix, Matrix, float]:
    """One hidden layer of rectified units, a logistic output, by full-batch Adam.

    ``decay`` is an L2 penalty on the weights (not the biases). Returns the hidden
    weights and biases, the output weights and the output bias.
    """
    rng = np.random.default_rng(seed)
    n, size = x.shape
    params = [
        rng.normal(0.0, 1.0 / np.sqrt(size), (size, hidden)),
        np.zeros(hidden),
        rng.normal(0.0, 1.0 / np.sqrt(hidden), hidden),
        np.zeros(1),
    ]
    adam = Adam(params, 3e-3)
    for _ in range(steps):
        w1, b1, w2, b2 = params
        h = np.maximum(x @ w1 + b1, 0.0)
        p = 1.0 / (1.0 + np.exp(-(h @ w2 + b2[0])))
        g = (p - y) / n
        gh = np.outer(g, w2) * (h > 0)
        grads = [x.T @ gh + decay * w1, gh.sum(axis=0), h.T @ g + decay * w2, np.array([g.sum()])]
        adam.step(grads)
    w1, b1, w2, b2 = params
    return w1, b1, w2, float(b2[0])


def fitter(hidden: int, strength: float) -> Fit:
    """How to fit one model on standardised features: a network, or hidden=0 a regression."""

    def fit(x: Matrix, y: Matrix) -> tuple[Scorer, dict[str, Matrix | float]]:
        if hidden == 0:
            w, b = fit_logistic(x, y, strength)
            return (lambda q: q @ w + b), {"weights": w, "bias": b}
        w1, b1, w2, b2 = fit_network(x, y, strength, hidden)
        parts: dict[str, Matrix | float] = {
            "hidden_weights": w1,
            "hidden_bias": b1,
            "weights": w2,
            "bias": b2,
        }
        return (lambda q: np.maximum(q @ w1 + b1, 0.0) @ w2 + b2), parts

    return fit


def standardisation(x: Matrix) -> tuple[Matrix, Matrix]:
    """Per-feature mean and spread of ``x`` (spread never zero)."""
    return x.mean(axis=0), x.std(axis=0) + 1e-6


def splits(n: int, folds: int, repeats: int, seed: int) -> list[list[tuple[Lines, Lines]]]:
    """For each repeat, each fold's (training, held-out) line numbers: the same for every
    model, so that their out-of-fold scores can be mixed line by line."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(repeats):
        parts = np.array_split(rng.permutation(n), folds)
        out.append(
            [
                (np.concatenate([p for j, p in enumerate(parts) if j != k]), held)
                for k, held in enumerate(parts)
            ]
        )
    return out


def cross_validated(x: Matrix, y: Matrix, fit: Fit, folds: int, repeats: int, seed: int) -> Matrix:
    """Out-of-fold scores (logits), one row per repeat."""
    out = np.zeros((repeats, len(y)))
    for r, repeat in enumerate(splits(len(y), folds, repeats, seed)):
        for train, held in repeat:
            mean, scale = standardisation(x[train])
            score, _ = fit((x[train] - mean) / scale, y[train])
            out[r, held] = score((x[held] - mean) / scale)
    return out


class WordFeatures:
    """The lines' hashed words (:mod:`ai.content.lexical`), as a sparse matrix."""

    def __init__(self, texts: list[str]) -> None:
        buckets = [hashed_features(text) for text in texts]
        self.rows = np.concatenate([np.full(len(b), i) for i, b in enumerate(buckets)])
        self.cols = np.concatenate(buckets)
        self.vals = np.concatenate([np.full(len(b), feature_scale(len(b))) for b in buckets])
        self.lines = len(texts)

    def _part(self, lines: Lines) -> tuple[Lines, Lines, Matrix]:
        at = np.full(self.lines, -1)
        at[lines] = np.arange(len(lines))
        keep = at[self.rows] >= 0
        return at[self.rows[keep]], self.cols[keep], self.vals[keep]

    def fit(self, lines: Lines, y: Matrix, lam: float, steps: int) -> tuple[Matrix, float]:
        """L2-regularised logistic regression on ``lines`` by full-batch Adam."""
        rows, cols, vals = self._part(lines)
        n, target = len(lines), y[lines]
        params = [np.zeros(BUCKETS), np.zeros(1)]
        adam = Adam(params, 0.05)
        for _ in range(steps):
            w, b = params
            z = np.bincount(rows, weights=vals * w[cols], minlength=n) + b[0]
            g = (1.0 / (1.0 + np.exp(-z)) - target) / n
            grad = np.bincount(cols, weights=vals * g[rows], minlength=BUCKETS) + lam * w
            adam.step([grad, np.array([g.sum()])])
        return params[0], float(params[1][0])

    def score(self, lines: Lines, w: Matrix, b: float) -> Matrix:
        """The logits of ``lines``."""
        rows, cols, vals = self._part(lines)
        logits = np.bincount(rows, weights=vals * w[cols], minlength=len(lines)) + b
        return np.asarray(logits, dtype=np.float64)

    def cross_validated(
        self, y: Matrix, lam: float, steps: int, folds: int, repeats: int, seed: int
    ) -> Matrix:
        """Out-of-fold logits, one row per repeat, on the folds of :func:`cross_validated`."""
        out = np.zeros((repeats, len(y)))
        for r, repeat in enumerate(splits(len(y), folds, repeats, seed)):
            for train, held in repeat:
                w, b = self.fit(train, y, lam, steps)
                out[r, held] = self.score(held, w, b)
        return out


def floor_for(
    mixed: Matrix, by_words: Matrix, cuts: list[float], y: Matrix, words: Lines, lost: int
) -> float:
    """The highest log-odds of the words alone below which a line may pass unread.

    Out of fold, at most ``lost`` unfit lines (over all repeats) that the mix refuses and
    layer 1 does not may score below it on their words.
    """
    best = -np.inf
    for floor in np.arange(-10.0, 0.01, 0.25):
        missed = sum(
            int(((row > cut) & (w < floor) & (y == 1) & ~words).sum())
            for row, w, cut in zip(mixed, by_words, cuts, strict=True)
        )
        if missed <= lost:
            best = float(floor)
    return best


def threshold_for(
    scores: Matrix, y: Matrix, hard: Matrix, words: Matrix, fp_target: float
) -> dict[str, Any]:
    """The logit above which ``fp_target`` of the hard fit lines fall, and the rates there.

    ``hard`` marks the fit lines written for the filter (tricky words, grumpy villagers,
    player chat), not those drawn from the village corpus: these are what the threshold
    must let through. ``words`` marks the lines the word list already refuses, for the
    recall of both layers together.
    """
    cuts, recall, layered, fp, fp_all = [], [], [], [], []
    for row in scores:
        fit = np.sort(row[hard])
        index = min(len(fit) - 1, int(np.ceil(len(fit) * (1.0 - fp_target))) - 1)
        cut = float(fit[max(index, 0)])
        flagged = row > cut
        cuts.append(cut)
        recall.append(float(flagged[y == 1].mean()))
        layered.append(float((flagged | words)[y == 1].mean()))
        fp.append(float(flagged[hard].mean()))
        fp_all.append(float(flagged[y == 0].mean()))
    return {
        "cuts": cuts,
        "threshold_logit": round(float(np.mean(cuts)), 4),
        "cv_recall": round(float(np.mean(recall)), 4),
        "cv_layered_recall": round(float(np.mean(layered)), 4),
        "cv_fp_hard": round(float(np.mean(fp)), 4),
        "cv_fp_all": round(float(np.mean(fp_all)), 4),
    }


def features(
    texts: list[str], layers: tuple[int, ...], pooling: str
) -> tuple[Matrix, str, dict[str, float]]:
    """Pooled hidden states, shape (lines, layers, features), the model's sha256, timings.

    Each line is read as the game reads it (:func:`ai.content.filter.read_form`).
    """
    from llama_cpp import Llama

    path = resolve_model_path(ModelConfig())
    llm = Llama(
        model_path=str(path),
        n_ctx=256,
        n_batch=64,
        n_threads=1,
        n_threads_batch=1,
        n_gpu_layers=0,
        verbose=False,
    )
    states = LlamaHiddenStates(llm, layers, pooling=pooling)
    rows = []
    began = time.perf_counter()
    for i, text in enumerate(texts):
        pooled = states.pooled_layers(read_form(text))
        if pooled is None:
            raise SystemExit(f"content_classifier: no tokens in exemplar {i + 1}")
        rows.append(pooled)
        if (i + 1) % 200 == 0:
            print(f"{i + 1}/{len(texts)}", file=sys.stderr)
    seconds = time.perf_counter() - began
    states.close()
    llm.close()
    sha = verified_sha256(ModelConfig(), path)
    return np.asarray(rows, dtype=np.float64), sha, {"seconds": round(seconds, 1)}


def rated(
    mixed: Matrix,
    by_words: Matrix | None,
    y: Matrix,
    hard: Lines,
    words: Lines,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """A candidate's threshold and cross-validated rates, from its out-of-fold log-odds;
    with the words' model, its floor and the share of fit lines that pass unread."""
    row = threshold_for(mixed, y, hard, words, args.fp_target)
    cuts = row.pop("cuts")
    if by_words is not None:
        row["words_floor"] = floor_for(mixed, by_words, cuts, y, words, args.floor_lost)
        row["cv_unread_fit"] = round(float((by_words < row["words_floor"])[:, y == 0].mean()), 4)
    return row


def machine_header(sha: str, load_start: list[float]) -> dict[str, Any]:
    """The same header as ``bench/content_filter.json``: machine, code, model, load."""
    import llama_cpp

    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "llama_cpp_python": str(llama_cpp.__version__),
        "model_sha256": sha,
        "commit": commit,
        "load_average_start": load_start,
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> int:
    """Train, choose and write the classifier."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--exemplars",
        type=Path,
        nargs="+",
        default=[EXEMPLARS, *MEASURED_SETS],
        help="the labelled lines it learns from (the exemplars and the measured sets)",
    )
    parser.add_argument("--layers", default="0,1,2,4", help="candidate layers")
    parser.add_argument("--layer", type=int, default=0, help="-1: choose by CV alone")
    parser.add_argument("--pooling", default="mean+last", choices=("mean", "mean+last"))
    parser.add_argument("--hidden", type=int, default=64, help="hidden units; 0: regression")
    parser.add_argument(
        "--lams", default="0.01,0.03,0.1", help="L2 strengths to try (weight decay, or lam)"
    )
    parser.add_argument(
        "--words-lams", default="1e-6", help="L2 strengths of the words' model ('': none)"
    )
    parser.add_argument("--words-steps", type=int, default=600)
    parser.add_argument(
        "--mixes", default="0.3,0.4,0.5", help="the network's shares of the mixed log-odds"
    )
    parser.add_argument(
        "--floor-lost", type=int, default=2, help="unfit lines let by unread, over all repeats"
    )
    parser.add_argument("--fp-target", type=float, default=0.025)
    parser.add_argument("--slack", type=float, default=0.02)
    parser.add_argument("--read-slack", type=float, default=0.005, help="recall for fewer reads")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--report", type=Path, default=REPORT)
    parser.add_argument("--cache", type=Path, help="reuse (or write) hidden states here")
    parser.add_argument(
        "--scores", type=Path, help="write the chosen candidate's out-of-fold log-odds here"
    )
    parser.add_argument(
        "--residual",
        action="store_true",
        help="learn only from the exemplars layer 1 lets by",
    )
    args = parser.parse_args()
    layers = tuple(sorted({int(x) for x in args.layers.split(",")} | ({args.layer} - {-1})))
    lams = [float(x) for x in args.lams.split(",")]
    load_start = [round(x, 2) for x in os.getloadavg()]
    lines = [line for path in args.exemplars for line in load_labelled(path)]
    texts = [line.text for line in lines]
    y = np.array([0.0 if line.fit else 1.0 for line in lines])
    hard = np.array([line.fit and line.kind != "corpus" for line in lines])
    word_list = WordList.load(ROOT / "assets" / "content" / "blocklist.txt")
    patterns = PatternList.load(ROOT / "assets" / "content" / "patterns.txt")
    words = np.array([word_list.find(t) is not None or patterns.find(t) is not None for t in texts])
    if args.cache is not None and args.cache.exists():
        with np.load(args.cache, allow_pickle=False) as cached:
            x_all, sha = cached["x"], str(cached["sha"])
            cached_layers = tuple(int(v) for v in cached["layers"])
            cached_pooling = str(cached["pooling"]) if "pooling" in cached.files else "mean"
        if cached_layers != layers or len(x_all) != len(texts) or cached_pooling != args.pooling:
            raise SystemExit("content_classifier: the cache holds other layers, lines or pooling")
        timing: dict[str, float] = {}
    else:
        x_all, sha, timing = features(texts, layers, args.pooling)
        if args.cache is not None:
            np.savez(
                args.cache,
                x=x_all,
                sha=np.array(sha),
                layers=np.array(layers),
                pooling=np.array(args.pooling),
            )
    # --residual: learn only from the lines layer 1 lets by, the only ones the semantic
    # layer reads; recall "with the word list" counts the rest as caught.
    read = ~words if args.residual else np.ones(len(texts), dtype=bool)
    caught_before = int((words & ~read & (y == 1)).sum())
    words_lams = [float(x) for x in args.words_lams.split(",") if x]
    mixes = [float(x) for x in args.mixes.split(",")] if words_lams else [1.0]
    by_words: dict[float, Matrix] = {}
    if words_lams:
        lexical = WordFeatures([read_form(t) for t, r in zip(texts, read, strict=True) if r])
        for strength in words_lams:
            by_words[strength] = lexical.cross_validated(
                y[read], strength, args.words_steps, args.folds, args.repeats, args.seed
            )
            print(f"words' model, strength {strength:g}: cross-validated", flush=True)
    table: list[dict[str, Any]] = []
    out_of_fold: list[tuple[Matrix, Matrix | None]] = []  # by row: the mix's, the words'
    for li, layer in enumerate(layers):
        x = x_all[read, li, :]
        for lam in lams:
            fit = fitter(args.hidden, lam)
            scores = cross_validated(x, y[read], fit, args.folds, args.repeats, args.seed)
            pairs: list[tuple[float | None, float]] = [(None, 1.0)]
            pairs += [(wl, m) for wl in words_lams for m in mixes]
            for words_lam, mix in pairs:
                own = None if words_lam is None else by_words[words_lam]
                mixed = scores if own is None else mix * scores + (1.0 - mix) * own
                row: dict[str, Any] = {"layer": layer, "lam": lam}
                if words_lam is not None:
                    row |= {"words_lam": words_lam, "mix": mix}
                row |= rated(mixed, own, y[read], hard[read], words[read], args)
                out_of_fold.append((mixed, own))
                row["cv_layered_recall"] = round(
                    (row["cv_layered_recall"] * float(y[read].sum()) + caught_before)
                    / float(y.sum()),
                    4,
                )
                table.append(row)
                print(
                    f"layer {layer} lam {lam:g}"
                    + ("" if words_lam is None else f" + words {words_lam:g} mix {mix:g}")
                    + f": cv recall {row['cv_recall']:.3f}"
                    f" (with the word list {row['cv_layered_recall']:.3f})"
                    f" at fp {row['cv_fp_hard']:.3f} on the hard fit lines,"
                    f" {row['cv_fp_all']:.3f} on all",
                    flush=True,
                )
    best = max(row["cv_layered_recall"] for row in table)
    if args.layer >= 0:
        pool = [row for row in table if row["layer"] == args.layer]
    else:
        near = [row for row in table if row["cv_layered_recall"] >= best - args.slack]
        shallowest = min(row["layer"] for row in near)
        pool = [row for row in near if row["layer"] == shallowest]
    # Within --read-slack of the best recall, the one that leaves the model the fewest
    # lines to read: each read is time the worker does not spend writing lines.
    top = max(row["cv_layered_recall"] for row in pool)
    close = [row for row in pool if row["cv_layered_recall"] >= top - args.read_slack]
    chosen = max(close, key=lambda row: (row.get("cv_unread_fit", 0.0), row["cv_layered_recall"]))
    if args.scores is not None:
        # For reading the threshold's and the floor's trade-offs without training again.
        mixed, own = out_of_fold[table.index(chosen)]
        args.scores.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            args.scores,
            scores=mixed,
            by_words=np.full_like(mixed, -np.inf) if own is None else own,
            unfit=y[read],
            hard=hard[read],
            words=words[read],
            player=np.array([line.source == "player" for line in lines])[read],
        )
    x = x_all[read, layers.index(int(chosen["layer"])), :]
    mean, scale = standardisation(x)
    _, parts = fitter(args.hidden, float(chosen["lam"]))((x - mean) / scale, y[read])
    threshold = 1.0 / (1.0 + np.exp(-float(chosen["threshold_logit"])))
    words_part: dict[str, Any] = {}
    if "words_lam" in chosen:
        everything = np.arange(int(read.sum()))
        w, b = lexical.fit(everything, y[read], float(chosen["words_lam"]), args.words_steps)
        words_part = {
            "words_weights": w.astype(np.float32),
            "words_bias": b,
            "mix": float(chosen["mix"]),
            "words_floor": float(chosen["words_floor"]),
        }
    hidden_weights, hidden_bias = parts.get("hidden_weights"), parts.get("hidden_bias")
    classifier = Classifier(
        layer=int(chosen["layer"]),
        model_sha256=sha,
        mean=mean.astype(np.float32),
        scale=scale.astype(np.float32),
        weights=np.asarray(parts["weights"], dtype=np.float32),
        bias=float(np.asarray(parts["bias"])),
        threshold=round(float(threshold), 4),
        source=str(args.out),
        pooling=args.pooling,
        hidden_weights=None if hidden_weights is None else np.asarray(hidden_weights, np.float32),
        hidden_bias=None if hidden_bias is None else np.asarray(hidden_bias, np.float32),
        **words_part,
    )
    classifier.save(args.out)
    report = {
        "version": 1,
        "machine": machine_header(sha, load_start),
        "exemplars": {
            "lines": len(lines),
            "unfit": int(y.sum()),
            "fit": int(len(y) - y.sum()),
            "hard_fit": int(hard.sum()),
            "read_by_the_semantic_layer": int(read.sum()),
            "unfit_refused_by_layer_1": int((words & (y == 1)).sum()),
        },
        "fp_target": args.fp_target,
        "pooling": args.pooling,
        "hidden_units": args.hidden,
        "words_steps": args.words_steps if words_lams else None,
        "floor_lost": args.floor_lost,
        "folds": args.folds,
        "repeats": args.repeats,
        "candidates": table,
        "chosen": chosen | {"threshold": classifier.threshold},
        "features": timing,
    }
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"layer {classifier.layer} ({args.pooling}, {args.hidden} hidden units),"
        f" strength {chosen['lam']:g}, threshold {classifier.threshold}"
        f" (cv recall with the word list {chosen['cv_layered_recall']:.3f},"
        f" fp {chosen['cv_fp_hard']:.3f} on the hard fit lines) -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
