"""Decode speed with the village adapter against without, on the same prompts, interleaved.

Two llama.cpp backends on the packaged model, one with the adapter and one without, both
driven from this one thread (each ``Llama`` stays with one thread). Each round generates
the same held-out corpus prompts on both, alternating which goes first, greedy and to a
fixed length (no stop strings), and times the first token and the rest. Writes
``bench/adapter_speed.json``:

    python tools/train/bench_adapter_speed.py --rounds 3

``--also NAME=PATH`` adds another adapter as an arm (the same adapter written in f32,
say), in the same rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ai import AiConfig, GenerationParams, LlamaBackend, PromptSpec  # noqa: E402
from game.config.settings import VILLAGE_ADAPTER_PATH  # noqa: E402
from game.dialogue.corpus import corpus_world, load_corpus, record_spec, split  # noqa: E402
from game.sim.cast import load_cast  # noqa: E402
from game.sim.events import Trigger  # noqa: E402
from game.sim.level import load_level  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

TOKENS = 24


def _backend(adapter: str) -> LlamaBackend:
    config = AiConfig()
    backend = LlamaBackend(replace(config, model=replace(config.model, adapter=adapter)))
    backend.load(lambda _fraction, _stage: None)
    return backend


def _time(backend: LlamaBackend, spec: PromptSpec, params: GenerationParams) -> dict[str, float]:
    began = time.perf_counter()
    first = 0.0
    pieces = 0
    for _ in backend.generate(spec, params, lambda: False):
        pieces += 1
        if pieces == 1:
            first = time.perf_counter()
    end = time.perf_counter()
    return {"ttft_s": first - began, "rest_s": end - first, "pieces": pieces}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "adapter_speed.json")
    parser.add_argument(
        "--also", action="append", default=[], help="NAME=PATH: another adapter as an arm"
    )
    args = parser.parse_args()
    cast = load_cast()
    world = corpus_world(cast, load_level())
    _, held = split(load_corpus(cast))
    barks = [r for r in held if r.trigger is not Trigger.CHAT][: args.prompts]
    specs = [record_spec(record, world) for record in barks]
    config = AiConfig()
    params = replace(
        GenerationParams.from_config(config.generation, TOKENS),
        temperature=0.0, top_k=1, top_p=1.0, min_p=0.0, seed=0, stop=("<<none>>",),
    )  # fmt: skip
    arms = {"adapter": _backend(str(VILLAGE_ADAPTER_PATH)), "base": _backend("")}
    for also in args.also:
        name, _, path = also.partition("=")
        arms[name] = _backend(path)
    for name, backend in arms.items():
        if name != "base" and backend.prompt_style != "village":
            raise SystemExit(f"the adapter of arm {name} did not load")
    load = load_average()
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in arms}
    for round_ in range(args.rounds):
        for i, spec in enumerate(specs):
            # Each arm goes first in turn, so no arm always follows the same one.
            shift = (i + round_) % len(arms)
            order = list(arms)[shift:] + list(arms)[:shift]
            for name in order:
                samples[name].append(_time(arms[name], spec, params))
    for backend in arms.values():
        backend.close()

    def figures(rows: list[dict[str, float]]) -> dict[str, Any]:
        # Pieces after the first, over the time after the first: the decode rate.
        rates = [(r["pieces"] - 1) / r["rest_s"] for r in rows if r["rest_s"] > 0]
        return {
            "lines": len(rows),
            "tokens_per_s_median": round(statistics.median(rates), 1),
            "ttft_ms_median": round(statistics.median(r["ttft_s"] for r in rows) * 1000, 1),
        }

    arms_out = {name: figures(rows) for name, rows in samples.items()}
    result = {
        "version": 2,
        "machine": machine_header(load, model=config.model),
        "tokens_per_line": TOKENS,
        "arms": arms_out,
        "adapter_over_base_tokens_per_s": round(
            arms_out["adapter"]["tokens_per_s_median"] / arms_out["base"]["tokens_per_s_median"], 3
        ),
        "over_base_tokens_per_s": {
            name: round(
                figures_["tokens_per_s_median"] / arms_out["base"]["tokens_per_s_median"], 3
            )
            for name, figures_ in arms_out.items()
            if name != "base"
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
