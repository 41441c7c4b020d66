"""Turn a :class:`PromptSpec` into model input.

Two shapes: a few-shot completion prompt for base models, and chat messages
for instruction-tuned models with a chat template. In both, the long shared
``context`` comes first and byte-identical across requests, so llama.cpp's
automatic prefix reuse skips re-evaluating it; only the short per-request tail
costs prompt-evaluation time. Chat messages ignore the opener: an instruction-tuned
model needs no help to start a line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from ai.requests import Exchange, PromptSpec

logger = logging.getLogger(__name__)

PLAYER_NAME = "Player"


def _single_line(text: str) -> str:
    # Per-request parts must not break the one-line-per-speaker format.
    return " ".join(text.replace('"', "'").split())


def _context_block(context: str) -> str:
    """The shared prefix, normalised to end with exactly one newline."""
    return context.rstrip() + "\n" if context.strip() else ""


def fit_prompt(spec: PromptSpec, fits: Callable[[PromptSpec], bool]) -> PromptSpec:
    """Trim ``spec`` until ``fits``: the oldest history first, then the oldest notes.

    Never fails: as a last resort the player's text is shortened, and a prompt that
    still does not fit is returned as is (the shared context alone is too long, which
    the load-time check reports).
    """
    if fits(spec):
        return spec
    while spec.history and not fits(spec):
        spec = replace(spec, history=spec.history[1:])
    while spec.notes and not fits(spec):
        spec = replace(spec, notes=spec.notes[1:])
    while len(spec.player_text) > 8 and not fits(spec):
        spec = replace(spec, player_text=spec.player_text[: len(spec.player_text) // 2])
    return spec


def history_before_ask(spec: PromptSpec, player_text: str) -> tuple[Exchange, ...]:
    """The history without the player's latest line when it is the ask itself.

    The game remembers the player's words as soon as they are said, so the history
    often holds the very line that ``player_text`` carries; it goes in once, as the ask.
    """
    history = [turn for turn in spec.history if turn.text.strip()]
    if player_text:
        asked = _single_line(player_text)
        for i in range(len(history) - 1, -1, -1):
            if history[i].speaker == PLAYER_NAME:
                if _single_line(history[i].text) == asked:
                    del history[i]
                break
    return tuple(history)


def build_completion_prompt(spec: PromptSpec, player_text: str) -> str:
    """Few-shot completion prompt ending in an open quote and the line's opener.

    Layout (context first, then the short per-request tail)::

        <context>
        Note: <note>
        <speaker>: "<history line>"
        Player: "<player text>"
        <speaker> (<situation>): "<opener>

    Generation should stop at ``"`` or a newline; the opener, when there is one, is the
    start of the line and the model continues it.
    """
    parts = [_context_block(spec.context)]
    parts.extend(f"Note: {_single_line(note)}\n" for note in spec.notes if note.strip())
    parts.extend(
        f'{_single_line(turn.speaker)}: "{_single_line(turn.text)}"\n'
        for turn in history_before_ask(spec, player_text)
    )
    if player_text:
        parts.append(f'{PLAYER_NAME}: "{_single_line(player_text)}"\n')
    speaker = _single_line(spec.speaker)
    situation = _single_line(spec.situation)
    parts.append(f'{speaker} ({situation}): "' if situation else f'{speaker}: "')
    parts.append(_single_line(spec.opener))
    return "".join(parts)


def build_chat_messages(spec: PromptSpec, player_text: str) -> list[dict[str, str]]:
    """Chat messages: system = context + notes, history as turns, then the ask.

    Lines by ``spec.speaker`` become assistant turns; everyone else's become
    user turns prefixed with their name, so the model keeps track of who spoke.
    """
    system = spec.context.strip()
    notes = "\n".join(f"- {_single_line(note)}" for note in spec.notes if note.strip())
    if notes:
        system = f"{system}\n\nFacts right now:\n{notes}"
    messages: list[dict[str, str]] = [{"role": "system", "content": system}]
    for turn in history_before_ask(spec, player_text):
        if turn.speaker == spec.speaker:
            messages.append({"role": "assistant", "content": _single_line(turn.text)})
        else:
            messages.append(
                {"role": "user", "content": f"{_single_line(turn.speaker)}: {turn.text.strip()}"}
            )
    ask = f"You are {_single_line(spec.speaker)}"
    if spec.situation.strip():
        ask += f" and {_single_line(spec.situation)}"
    ask += ". Reply with one short spoken line, no narration."
    if player_text:
        ask = f"{PLAYER_NAME}: {_single_line(player_text)}\n({ask})"
    messages.append({"role": "user", "content": ask})
    return _merge_consecutive(messages)


def _merge_consecutive(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    # Many chat templates reject two turns in a row from the same role.
    merged: list[dict[str, str]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message["role"]:
            merged[-1] = {
                "role": message["role"],
                "content": merged[-1]["content"] + "\n" + message["content"],
            }
        else:
            merged.append(message)
    return merged
