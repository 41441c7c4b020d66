"""Checks run once, right after the model loads, before any request.

- A self-test (run by the llama.cpp backend as the last step of loading): one fixed
  prompt of one example line, greedy, a few tokens. A damaged model file that still parses writes
  garbage ("DukeDukeDuke...", "NANNAN..."); that marks the model unusable, with a clear
  message, and the game plays on with template lines.
- Prompt sizes: the game hands over its largest prompts (the shared prefix plus each
  villager's longest tail); one that leaves no room for a line names its villager.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ai.backend import Backend, GenerationParams
from ai.config import AiConfig
from ai.hygiene import clean_line, is_garbage
from ai.requests import PromptSpec

logger = logging.getLogger(__name__)

SELF_TEST_TOKENS = 10
# One example line: on one thread the prompt's reading is most of the test's cost (about
# 6 ms a token here), and a damaged file writes garbage after any prompt.
SELF_TEST_PROMPT = PromptSpec(
    context=(
        "Lines spoken by characters in a fantasy village game.\n"
        'Guard (a stranger walks past): "Keep your hands where I can see them."\n'
    ),
    speaker="Blacksmith",
    situation="a crate falls next to him",
)

#: A labelled worst-case prompt: ("Bess the baker", her longest prompt).
Probe = tuple[str, PromptSpec]


def self_test(backend: Backend, config: AiConfig) -> str | None:
    """Generate the fixed line greedily; return a problem for a human, or None if it reads."""
    params = GenerationParams.from_config(config.generation, SELF_TEST_TOKENS)
    params = GenerationParams(
        max_tokens=SELF_TEST_TOKENS,
        temperature=0.0,
        top_p=1.0,
        top_k=1,
        min_p=0.0,
        repeat_penalty=1.0,
        seed=0,
        stop=params.stop,
        chat_stop=params.chat_stop,
    )
    raw = "".join(backend.generate(SELF_TEST_PROMPT, params, lambda: False))
    text = clean_line(raw, config.hygiene)
    if is_garbage(text, config.hygiene.min_letters):
        return (
            f"the model writes garbage ({raw[:40]!r} for a test line); "
            "the file may be damaged: delete it to unpack it again, or pick another model"
        )
    logger.info("model self-test wrote %r", text)
    return None


def check_prompt_sizes(backend: Backend, probes: Sequence[Probe], max_tokens: int) -> str | None:
    """The first probe that leaves less than ``max_tokens`` of context, described; or None."""
    for label, prompt in probes:
        room = backend.prompt_room(prompt)
        if room < max_tokens:
            return (
                f"the prompt for {label} leaves {room} tokens of context for a "
                f"{max_tokens}-token line: shorten that persona or raise ai.model.n_ctx"
            )
    return None
