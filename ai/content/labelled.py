"""Labelled lines: the classifier's exemplars and the evaluation set share one format.

One JSON object a line: ``text``, ``fit`` (true or false), ``kind`` (why it is unfit, or
what sort of fit line it is) and ``source`` (``villager`` for model output, ``player``
for typed text). :func:`load_labelled` validates every record and names the file and
line of the first error.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

logger = logging.getLogger(__name__)

Source = Literal["villager", "player"]
UNFIT_KINDS = frozenset(
    {
        "insult",
        "threat",
        "sexual",
        "innuendo",
        "hate",
        "profanity",
        "breaking_character",
        "prompt_leak",
        "injection",
        "swear_request",
        # Self-harm and cruelty to animals: first written in the sixth held-out set.
        "cruelty",
    }
)
FIT_KINDS = frozenset({"villager", "corpus", "tricky", "grumpy", "player"})
_FIELDS = frozenset({"text", "fit", "kind", "source"})


class LabelledError(ValueError):
    """A labelled file is malformed; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class LabelledLine:
    """One line, and whether a villager may say it (or the player's text may be used)."""

    text: str
    fit: bool
    kind: str
    source: Source


def key(text: str) -> str:
    """How two lines are compared for being the same line: case and spacing ignored."""
    return " ".join(text.lower().split())


def load_labelled(path: Path) -> list[LabelledLine]:
    """Read and validate a labelled ``.jsonl`` file."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelledError(f"cannot read {path}: {exc}") from exc
    out: list[LabelledLine] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise LabelledError(f"{where}: not JSON: {exc.msg}") from exc
        if not isinstance(record, dict) or set(record) != _FIELDS:
            raise LabelledError(f"{where}: expected exactly the fields {sorted(_FIELDS)}")
        text, fit, kind, source = record["text"], record["fit"], record["kind"], record["source"]
        if not isinstance(text, str) or not text.strip():
            raise LabelledError(f"{where}: text must be a non-empty string")
        if not isinstance(fit, bool):
            raise LabelledError(f"{where}: fit must be true or false")
        kinds = FIT_KINDS if fit else UNFIT_KINDS
        if kind not in kinds:
            raise LabelledError(f"{where}: kind {kind!r} is not one of {sorted(kinds)}")
        if source not in ("villager", "player"):
            raise LabelledError(f"{where}: source must be villager or player")
        earlier = seen.setdefault(key(text), number)
        if earlier != number:
            raise LabelledError(f"{where}: the same line as line {earlier}")
        out.append(LabelledLine(text, fit, kind, source))
    if not out:
        raise LabelledError(f"{path}: no lines")
    return out
