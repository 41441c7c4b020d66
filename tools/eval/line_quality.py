"""Can a line's bad rating be foreseen? A score learned from every blind reader so far.

Gathers the model lines of every blind run in ``bench/`` (``village_pairs*.txt``, their
keys and the readers' answers), reads each line's hidden state as the content filter
does (layer 0 of the packaged model, the mean and the last token), adds its speaker,
trigger and length, and fits a logistic regression for "rated bad" in five folds split
by line (a line two readers rated stays in one fold). It reports the cross-validated
AUC and what refusing the worst-scored share would have left.

    python tools/eval/line_quality.py                    # bench/line_quality.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tools.train.content_classifier import (  # noqa: E402
    features,
    fit_logistic,
    standardisation,
)

BENCH = ROOT / "bench"
_PAIR = re.compile(r"^(\d+)\. ([^:\n]+): (.*)\n\s+A: (.*)\n\s+B: (.*)$", re.M)


def rated_lines(bench: Path = BENCH) -> list[dict[str, Any]]:
    """One row per (reader, model line): the line, its speaker, trigger and rating."""
    rows: list[dict[str, Any]] = []
    for key_path in sorted(bench.glob("village_pairs*_key.json")):
        stem = key_path.name[: -len("_key.json")]
        pairs = {
            int(n): (who, a, b)
            for n, who, _, a, b in _PAIR.findall((bench / f"{stem}.txt").read_text())
        }
        key = {k["pair"]: k for k in json.loads(key_path.read_text())}
        for answers in sorted(bench.glob(f"{stem}_answers*.txt")):
            for line in answers.read_text().splitlines():
                parts = line.split()
                if len(parts) < 4 or not parts[0].isdigit():
                    continue
                number = int(parts[0])
                who, a, b = pairs[number]
                model = key[number]["model"]
                rows.append(
                    {
                        "run": stem,
                        "who": who,
                        "trigger": key[number]["trigger"],
                        "line": a if model == "A" else b,
                        "rating": parts[2] if model == "A" else parts[3],
                    }
                )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lam", type=float, default=100.0, help="L2 strength")
    parser.add_argument("--refuse", type=float, default=0.3, help="share refused")
    parser.add_argument("--out", type=Path, default=BENCH / "line_quality.json")
    args = parser.parse_args()
    rows = rated_lines()
    lines = sorted({r["line"] for r in rows})
    index = {text: i for i, text in enumerate(lines)}
    states, _, _ = features(lines, (0,), "mean+last")
    triggers = sorted({r["trigger"] for r in rows})
    speakers = sorted({r["who"] for r in rows})

    def row_features(row: dict[str, Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
        one_hot = np.zeros(len(triggers) + len(speakers))
        one_hot[triggers.index(row["trigger"])] = 1.0
        one_hot[len(triggers) + speakers.index(row["who"])] = 1.0
        return np.concatenate([states[index[row["line"]], 0], one_hot, [len(row["line"].split())]])

    x = np.array([row_features(r) for r in rows])
    bad = np.array([r["rating"] == "bad" for r in rows])
    good = np.array([r["rating"] == "good" for r in rows])
    fold = np.random.default_rng(0).permutation(len(lines)) % 5
    fold_of = fold[[index[r["line"]] for r in rows]]
    scores = np.zeros(len(rows))
    for k in range(5):
        test = fold_of == k
        mean, scale = standardisation(x[~test])
        weights, bias = fit_logistic((x[~test] - mean) / scale, bad[~test].astype(float), args.lam)
        scores[test] = ((x[test] - mean) / scale) @ weights + bias
    positive, negative = scores[bad], scores[~bad]
    auc = float(
        (positive[:, None] > negative[None, :]).mean()
        + 0.5 * (positive[:, None] == negative[None, :]).mean()
    )
    kept = np.argsort(-scores)[int(args.refuse * len(rows)) :]
    result = {
        "ratings": len(rows),
        "lines": len(lines),
        "runs": sorted({r["run"] for r in rows}),
        "lam": args.lam,
        "auc_bad": round(auc, 3),
        "refused_share": args.refuse,
        "bad_share": {
            "all": round(float(bad.mean()), 3),
            "kept": round(float(bad[kept].mean()), 3),
        },
        "good_share": {
            "all": round(float(good.mean()), 3),
            "kept": round(float(good[kept].mean()), 3),
        },
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
