"""The village corpus as the game uses it in play: lines a village-model bark may not
repeat, and lines its prompt may show.

- **Not repeated.** Trained on the corpus, the village adapter says some of its lines
  word for word ("Good day, friend."); a bark that is one of its speaker's corpus
  lines, whole or cut to its first sentence, is refused (:meth:`ExampleBank.written`,
  the ``copy`` check).
- **Shown** (``generation.examples``, 0 by default). With an adapter trained that way
  (``make train ARGS="--examples 2"``), a bark's prompt opens with two of the speaker's
  hand-written lines for the same trigger, chosen for how much their situation shares
  with this one (who listens, the prop, what is remembered, the errand, the attitude).
  Training always aims at a line of another situation than the ones shown, so the
  model learns to write in that voice rather than to repeat; a line that copies a
  shown one is refused. Readers did not prefer the lines and each bark's first token
  came 2.5 times later, so it is off (docs/dialogue.md, "Corpus lines in the prompt").
  Only the training split is ever shown, so a held-out situation's line never reaches
  a prompt.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ai import PromptSpec
from ai.selection import words
from game.assets import AssetError
from game.dialogue.corpus import (
    CorpusRecord,
    CorpusWorld,
    corpus_world,
    game_asks,
    is_held_out,
    load_corpus,
    record_spec,
    training_line,
)
from game.dialogue.persona_prompt import Moment
from game.sim.cast import Cast
from game.sim.events import Trigger
from game.sim.level import Level

logger = logging.getLogger(__name__)

#: How many of the best-matching lines the shown ones are drawn from, in turn.
CHOICES = 4
_UNTRUE = 20
_OTHER_MOOD = 2
#: The most words a bark's prompt may have with its examples: about 1.5 tokens a word
#: here, so the prompt stays under 100 tokens.
PROMPT_WORDS = 60


@dataclass(frozen=True, slots=True)
class Example:
    """One corpus line as a prompt shows it, with the moment it was written for."""

    moment: Moment
    line: str
    text: str
    """``Marta the baker (hit by a crate): "Ow! Who's throwing crates?"``"""


def _likeness(moment: Moment, example: Moment) -> int:
    """How much an example's moment shares with ``moment``: the listener and the prop
    most, then what is remembered, the errand's state and the attitude.

    An example that remembers what this moment does not, or speaks of an errand in
    another state, comes last: its line tells of a past that did not happen here
    ("First a barrel, now your shoulder!" to a traveller who threw nothing). One said
    in another mood comes after those said in none ("Still cross. Don't say hi." to a
    friend).
    """
    score = (
        4 * (moment.listener == example.listener)
        + 6 * (moment.prop == example.prop)
        + 3 * (set(moment.memory) == set(example.memory))
        + 2 * (moment.errand == example.errand)
        + (moment.attitude == example.attitude)
    )
    if not set(example.memory) <= set(moment.memory):
        score -= _UNTRUE
    if example.errand and example.errand != moment.errand:
        score -= _UNTRUE
    if example.attitude and example.attitude != moment.attitude:
        score -= _OTHER_MOOD
    return score


def record_moment(record: CorpusRecord, world: CorpusWorld) -> Moment:
    """The moment a bark record was written for."""
    listener = (
        "traveller" if record.listener == "traveller" else world.personas[record.listener].label
    )
    return Moment(
        world.personas[record.npc].label,
        record.trigger,
        listener,
        record.prop,
        record.errand,
        record.memory,
        record.attitude,
    )


class ExampleBank:
    """The corpus's barks as the game uses them: the training split's, by speaker and
    trigger, ready to show in a prompt; and every bark line of each speaker, which the
    model may not say word for word."""

    def __init__(self, records: Iterable[CorpusRecord], world: CorpusWorld) -> None:
        pools: dict[tuple[str, Trigger], list[Example]] = {}
        written: dict[str, set[str]] = {}
        for record in records:
            if record.trigger is Trigger.CHAT:
                continue
            label = world.personas[record.npc].label
            lines = written.setdefault(label, set())
            # As ai.selection.normalized gives them, without filling its cache (kept for
            # the lines checked again and again) with some 3,800 lines read once here.
            lines.update(" ".join(words(text)) for text in (record.line, training_line(record)))
            if is_held_out(record) or not game_asks(record):
                continue
            moment = record_moment(record, world)
            spec = record_spec(record, world)
            line = training_line(record)
            text = f'{spec.speaker} ({spec.situation}): "{line}"'
            pools.setdefault((moment.speaker, moment.trigger), []).append(
                Example(moment, line, text)
            )
        self._pools = {key: tuple(pool) for key, pool in pools.items()}
        self._written = {label: frozenset(lines) for label, lines in written.items()}
        # A game meets few moments, again and again: each is ranked once.
        self._choices: dict[Moment, tuple[Example, ...]] = {}

    def __len__(self) -> int:
        return sum(len(pool) for pool in self._pools.values())

    def written(self, speaker: str) -> frozenset[str]:
        """The speaker's corpus barks, whole and cut to their first sentence as the
        adapter was trained on them (:func:`ai.selection.normalized`).

        Trained on these, the adapter says some of them word for word ("Good day,
        friend."): a line of the village model that is one is no line of its own.
        """
        return self._written.get(speaker, frozenset())

    def choices(self, moment: Moment) -> tuple[Example, ...]:
        """The best-matching lines for ``moment``, best first, never of the same situation.

        A line written for this very situation is left out, as in training, where the
        target's own situation is never shown: the model learns to write, not to copy.
        Lines already chosen are not repeated.
        """
        known = self._choices.get(moment)
        if known is not None:
            return known
        pool = self._pools.get((moment.speaker, moment.trigger), ())
        key = moment.key
        ranked = sorted(
            (e for e in pool if e.moment.key != key),
            key=lambda e: -_likeness(moment, e.moment),
        )
        seen: set[str] = set()
        out: list[Example] = []
        for example in ranked:
            if example.line not in seen:
                seen.add(example.line)
                out.append(example)
            if len(out) == CHOICES:
                break
        choices = self._choices[moment] = tuple(out)
        return choices

    def pick(self, moment: Moment, count: int, turn: int, spec: PromptSpec) -> tuple[Example, ...]:
        """``count`` of the best choices for ``moment``, taking turns with ``turn``, as
        many as ``spec``'s prompt has room for (:func:`fitting`)."""
        choices = self.choices(moment)
        if count <= 0 or not choices:
            return ()
        count = min(count, len(choices))
        return fitting([choices[(turn + i) % len(choices)] for i in range(count)], spec)

    def draw(
        self, moment: Moment, count: int, rng: random.Random, spec: PromptSpec
    ) -> tuple[Example, ...]:
        """``count`` of the best choices for ``moment`` at random (for training), as many
        as ``spec``'s prompt has room for."""
        choices = self.choices(moment)
        return fitting(rng.sample(choices, min(count, len(choices))), spec)


def spec_words(spec: PromptSpec) -> int:
    """The words of a prompt without its examples (notes, speaker and situation)."""
    parts = (*spec.notes, spec.speaker, spec.situation, spec.player_text)
    return sum(len(part.split()) for part in parts)


def fitting(examples: Sequence[Example], spec: PromptSpec) -> tuple[Example, ...]:
    """The first of ``examples`` that keep ``spec``'s prompt within :data:`PROMPT_WORDS`.

    A finished errand with a long title, told in the situation of each example too,
    would take a prompt past 100 tokens with two.
    """
    words = spec_words(spec)
    out: list[Example] = []
    for example in examples:
        words += len(example.text.split())
        if words > PROMPT_WORDS:
            break
        out.append(example)
    return tuple(out)


def example_block(examples: Sequence[Example]) -> str:
    """The examples as the lines that open a prompt."""
    return "\n".join(example.text for example in examples)


def load_example_bank(cast: Cast, level: Level) -> ExampleBank | None:
    """The bank of the packaged corpus for ``cast`` (about 0.1 s), or None with one
    warning when the corpus does not fit it (a cast of other villagers): barks are then
    not checked against it, and prompts show no examples."""
    try:
        return ExampleBank(load_corpus(cast), corpus_world(cast, level))
    except AssetError as exc:
        logger.warning("village corpus not used for this cast's lines: %s", exc)
        return None
