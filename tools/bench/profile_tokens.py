"""Per-token cost of each way to drive llama.cpp: native calls, native time, Python time.

Every native call through ctypes releases the GIL and takes it back, so the native
calls per token are the worker's GIL hand-offs per token, and the time between them
is Python that holds the GIL while the game's main thread may be waiting. Each path
generates the same prompts on one thread, with no game beside it:

- ``decode``: ``llama_decode`` alone, one token at a time, no sampling (the floor);
- ``token_loop``: :class:`ai.token_loop.TokenLoop`, as the backend runs it;
- ``generate``: ``Llama.generate`` with a stopping criterion and per-token
  detokenising, as the backend ran before;
- ``create_completion``: ``Llama.create_completion(stream=True)``, the plain peer.

Paths are interleaved round by round. Writes JSON.

    python tools/bench/profile_tokens.py --rounds 6 --out bench/profile_tokens.json
"""

from __future__ import annotations

import argparse
import codecs
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from llama_cpp import Llama

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import llama_cpp  # noqa: E402
import llama_cpp.llama_cpp as bindings  # noqa: E402

from ai import AiConfig  # noqa: E402
from ai.prompt import build_completion_prompt  # noqa: E402
from ai.streaming import StopFilter  # noqa: E402
from ai.token_loop import TokenLoop  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402
from tools.bench.runtime_alone import prompt_spec  # noqa: E402
from tools.peers.plain_runtime import load_llama  # noqa: E402

TOKENS = 40


class NativeMeter:
    """Counts and times every call into llama.cpp made through the ctypes bindings."""

    def __init__(self) -> None:
        self.calls = 0
        self.seconds = 0.0
        self._saved: dict[str, Callable[..., Any]] = {}

    def __enter__(self) -> NativeMeter:
        for name in dir(bindings):
            function = getattr(bindings, name)
            if name.startswith("llama_") and callable(function) and hasattr(function, "argtypes"):
                self._saved[name] = function
                wrapped = self._wrap(function)
                setattr(bindings, name, wrapped)
                if getattr(llama_cpp, name, None) is function:
                    setattr(llama_cpp, name, wrapped)
        return self

    def _wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.perf_counter

        def counted(*args: Any) -> Any:
            begin = clock()
            try:
                return function(*args)
            finally:
                self.seconds += clock() - begin
                self.calls += 1

        return counted

    def __exit__(self, *exc: object) -> None:
        for name, function in self._saved.items():
            setattr(bindings, name, function)
            if getattr(llama_cpp, name, None) is not None:
                setattr(llama_cpp, name, function)


def _llama(config: AiConfig) -> Llama:
    llm: Llama = load_llama(config.model)
    return llm


def _decode_only(llm: Llama, prompt: str, seed: int) -> int:
    """Feed TOKENS tokens one by one after the prompt, sampling nothing."""
    del seed
    loop = TokenLoop(llm)
    tokens = loop.tokenize(prompt)
    loop.prefill(tokens)
    one = (llama_cpp.llama_token * 1)()
    batch = llama_cpp.llama_batch_get_one(one, 1)
    for i in range(TOKENS):
        one[0] = tokens[i % len(tokens)]
        llama_cpp.llama_decode(llm.ctx, batch)
    loop.forget()
    return TOKENS


def _token_loop(llm: Llama, prompt: str, seed: int) -> int:
    gen = AiConfig().generation
    loop = TokenLoop(llm)
    count = 0
    with loop.sampler(
        temperature=gen.temperature,
        top_k=gen.top_k,
        top_p=gen.top_p,
        min_p=gen.min_p,
        repeat_penalty=gen.repeat_penalty,
        seed=seed,
    ) as chain:
        for _ in loop.tokens(loop.tokenize(prompt), chain, TOKENS, lambda: False):
            count += 1
    return count


def _generate(llm: Llama, prompt: str, seed: int) -> int:
    """The previous backend's loop: Llama.generate, a stop criterion, detokenising."""
    gen = AiConfig().generation
    llm.set_seed(seed)
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    stops = StopFilter(())
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    count = 0
    generator = llm.generate(
        llm.tokenize(prompt.encode()),
        top_k=gen.top_k,
        top_p=gen.top_p,
        min_p=gen.min_p,
        temp=gen.temperature,
        repeat_penalty=gen.repeat_penalty,
        stopping_criteria=llama_cpp.StoppingCriteriaList([_never]),
    )
    for token in generator:
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            break
        stops.feed(decoder.decode(llm.detokenize([token])))
        count += 1
        if count >= TOKENS:
            break
    generator.close()
    return count


def _never(input_ids: npt.NDArray[np.intc], logits: npt.NDArray[np.single]) -> bool:
    del input_ids, logits
    return False


def _create_completion(llm: Llama, prompt: str, seed: int) -> int:
    gen = AiConfig().generation
    count = 0
    for _ in llm.create_completion(
        prompt,
        stream=True,
        max_tokens=TOKENS,
        temperature=gen.temperature,
        top_p=gen.top_p,
        top_k=gen.top_k,
        min_p=gen.min_p,
        repeat_penalty=gen.repeat_penalty,
        seed=seed,
    ):
        count += 1
    return count


PATHS: dict[str, Callable[[Llama, str, int], int]] = {
    "decode": _decode_only,
    "token_loop": _token_loop,
    "generate": _generate,
    "create_completion": _create_completion,
}


def main() -> int:
    """Measure every path, interleaved, and write the JSON report."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "profile_tokens.json")
    args = parser.parse_args()
    config = AiConfig()
    llm = _llama(config)
    # Warm the shared prefix so every path pays the same short prompt tail.
    _token_loop(llm, build_completion_prompt(prompt_spec(0), ""), 0)
    samples: dict[str, list[tuple[int, float, int, float]]] = {name: [] for name in PATHS}
    load_before = load_average()
    for round_ in range(args.rounds):
        for i, (name, path) in enumerate(PATHS.items()):
            prompt = build_completion_prompt(prompt_spec(round_ * len(PATHS) + i + 1), "")
            # Prompt evaluation is not per-token work: time it apart.
            _prefill_only(llm, prompt)
            with NativeMeter() as meter:
                begin = time.perf_counter()
                tokens = path(llm, prompt, round_)
                wall = time.perf_counter() - begin
            samples[name].append((tokens, wall, meter.calls, meter.seconds))
    load_after = load_average()
    figures: dict[str, Any] = {}
    for name, runs in samples.items():
        runs = [run for run in runs if run[0]]
        ms = [1e3 * wall / tokens for tokens, wall, _, _ in runs]
        calls = [count / tokens for tokens, _, count, _ in runs]
        python = [1e3 * (wall - native) / tokens for tokens, wall, _, native in runs]
        figures[name] = {
            "ms_per_token_median": round(statistics.median(ms), 3),
            "tokens_per_s_median": round(1e3 / statistics.median(ms), 1),
            "native_calls_per_token_median": round(statistics.median(calls), 2),
            "python_ms_per_token_median": round(statistics.median(python), 3),
            "tokens_per_run": [run[0] for run in runs],
        }
    decode_ms = figures["decode"]["ms_per_token_median"]
    for entry in figures.values():
        entry["rate_over_raw_decode"] = round(decode_ms / entry["ms_per_token_median"], 3)
    report = {
        "machine": machine_header(load_before, model=config.model, load_at_end=load_after),
        "settings": {"rounds": args.rounds, "tokens_per_run": TOKENS, "n_threads": 1},
        "paths": figures,
        "note": (
            "python_ms_per_token: wall time not spent inside llama.cpp calls (the counting "
            "wrapper's own cost included); native calls per token = GIL releases per token"
        ),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))
    return 0


def _prefill_only(llm: Llama, prompt: str) -> None:
    loop = TokenLoop(llm)
    loop.prefill(loop.tokenize(prompt))


if __name__ == "__main__":
    raise SystemExit(main())
