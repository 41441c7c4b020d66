"""The lean token loop against llama-cpp-python's own ``Llama.generate`` (real model)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ai import AiConfig
from ai.model import resolve_model_path
from ai.token_loop import TokenLoop

pytestmark = pytest.mark.model

CONTEXT = (
    "Lines spoken by characters in a fantasy village game.\n"
    'Farmer (it starts raining): "Good for the turnips, bad for my knees."\n'
    'Guard (a stranger arrives at night): "State your business, traveller."\n'
)
FIRST = CONTEXT + "Blacksmith (a crate falls next to him): "
SECOND = CONTEXT + "Baker (a dog steals her bread): "
MAX_TOKENS = 24
GREEDY = {"temperature": 0.0, "top_k": 40, "top_p": 0.95, "min_p": 0.05, "repeat_penalty": 1.1}
SEEDED = {**GREEDY, "temperature": 0.8}


def _llama() -> Any:
    from llama_cpp import Llama

    model = AiConfig().model
    return Llama(
        model_path=str(resolve_model_path(model)),
        n_ctx=512,
        n_batch=model.n_batch,
        n_threads=1,
        n_threads_batch=1,
        swa_full=True,
        verbose=False,
    )


@pytest.fixture(scope="module")
def llms() -> Iterator[tuple[Any, Any]]:
    """Two models: one for the reference path, one for the lean loop."""
    reference, lean = _llama(), _llama()
    yield reference, lean
    reference.close()
    lean.close()


def _reference(llm: Any, prompt: str, sampling: dict[str, float], seed: int) -> str:
    """What llama-cpp-python's own generate() writes from an empty cache, token by token."""
    # From empty: after some histories generate()'s own prefix reuse wrote other text
    # (measured), and that path is not what is compared here.
    llm.reset()
    llm.set_seed(seed)
    out = b""
    for count, token in enumerate(
        llm.generate(
            llm.tokenize(prompt.encode()),
            top_k=int(sampling["top_k"]),
            top_p=sampling["top_p"],
            min_p=sampling["min_p"],
            temp=sampling["temperature"],
            repeat_penalty=sampling["repeat_penalty"],
        ),
        start=1,
    ):
        if llm.token_eos() == token or count > MAX_TOKENS:
            break
        out += llm.detokenize([token])
    return out.decode("utf-8", errors="replace")


def _lean(
    loop: TokenLoop,
    prompt: str,
    sampling: dict[str, float],
    seed: int,
    stops: tuple[str, ...] = (),
    stop_after: int | None = None,
) -> list[str]:
    pieces: list[str] = []
    with loop.sampler(
        temperature=sampling["temperature"],
        top_k=int(sampling["top_k"]),
        top_p=sampling["top_p"],
        min_p=sampling["min_p"],
        repeat_penalty=sampling["repeat_penalty"],
        seed=seed,
    ) as chain:
        for piece in loop.pieces(
            loop.tokenize(prompt),
            chain,
            MAX_TOKENS,
            stops,
            lambda: stop_after is not None and len(pieces) >= stop_after,
        ):
            pieces.append(piece)
    return pieces


@pytest.mark.parametrize(("sampling", "seed"), [(GREEDY, 0), (SEEDED, 11)], ids=["greedy", "seed"])
def test_same_text_as_llama_generate(
    llms: tuple[Any, Any], sampling: dict[str, float], seed: int
) -> None:
    reference, lean = llms
    loop = TokenLoop(lean)
    for prompt in (FIRST, SECOND):
        expected = _reference(reference, prompt, sampling, seed)
        assert len(expected) > 10
        # Both from an empty cache: sampled text follows logits that differ in their
        # last bits when the same prompt is split into other batches.
        loop.forget()
        assert "".join(_lean(loop, prompt, sampling, seed)) == expected


def test_prefix_reuse_keeps_the_shared_context(llms: tuple[Any, Any]) -> None:
    reference, lean = llms
    loop = TokenLoop(lean)
    context = len(loop.tokenize(CONTEXT))
    second = loop.tokenize(SECOND)
    _lean(loop, FIRST, GREEDY, 0)
    reused: list[int] = []
    original = loop.prefill
    loop.prefill = lambda tokens: reused.append(original(tokens)) or reused[-1]  # type: ignore[method-assign]
    # Reusing the cached context writes what a full evaluation writes.
    assert "".join(_lean(loop, SECOND, GREEDY, 0)) == _reference(reference, SECOND, GREEDY, 0)
    assert reused[0] >= context
    # The Llama object's own bookkeeping follows, so its methods can take turns.
    assert list(lean.input_ids[: len(second)]) == second
    assert lean.n_tokens > len(second)


def test_cancel_takes_effect_at_the_next_token(llms: tuple[Any, Any]) -> None:
    _, lean = llms
    pieces = _lean(TokenLoop(lean), FIRST, GREEDY, 0, stop_after=3)
    assert len(pieces) == 3


def test_stop_string_ends_the_text_before_it(llms: tuple[Any, Any]) -> None:
    reference, lean = llms
    full = _reference(reference, SECOND, GREEDY, 0)
    stop = full[len(full) // 2 : len(full) // 2 + 3]
    assert stop.strip()
    text = "".join(_lean(TokenLoop(lean), SECOND, GREEDY, 0, stops=(stop,)))
    assert text == full[: full.index(stop)]


def test_a_second_context_adopts_the_cache_and_keeps_it_apart(llms: tuple[Any, Any]) -> None:
    _, lean = llms
    main = TokenLoop(lean)
    talk = TokenLoop.second_context(lean)
    try:
        main.forget()
        _lean(main, FIRST, GREEDY, 0)
        second = main.tokenize(SECOND)
        assert talk.shared_prefix(second) == 0
        assert talk.adopt(main) == main.cached
        assert talk.shared_prefix(second) >= len(main.tokenize(CONTEXT))
        # From the same cache, the copy writes what the original writes.
        from_copy = "".join(_lean(talk, SECOND, GREEDY, 0))
        assert from_copy == "".join(_lean(main, SECOND, GREEDY, 0))
        # Other work on the main context leaves the second one's cache as it was.
        _lean(main, FIRST, GREEDY, 0)
        assert talk.shared_prefix(second) == len(second)
        assert main.shared_prefix(second) < len(second)
    finally:
        talk.close()
