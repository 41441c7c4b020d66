"""What a villager's line should be: its prompt, its openers, and how to choose it.

One function of the speaker, the trigger and their memory gives both the prompt and the
:class:`CandidatePlan` the AI worker draws and judges candidates by. The game's request
builder and the dialogue evaluation harness both call it, so what is measured is what
the player gets.

Which lines may draw several candidates: prepared greetings and ambient lines are asked
for seconds ahead and keep the best of several; reactions stop at the first good one and
draw a second only while their short budget allows; a chat reply is re-drawn only when
it echoes the question or the history, so the player never waits behind a selection.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from ai import CandidatePlan, GenerationConfig, LineCriteria, Priority, PromptSpec
from ai.requests import PlanSource
from ai.selection import names_in, words
from game.assets import AssetError, asset_path
from game.dialogue.facts import answer_words, matching_facts, question_words
from game.dialogue.memory import BUMPED_FACT, THREW_FACT, Memory, Recollection
from game.dialogue.persona_prompt import Moment, Persona, PromptStyle, build_prompt
from game.dialogue.recall import (
    TRAVELLER_DEEDS,
    greeting_words,
    is_recall_question,
    made_up_deeds,
    recall_within,
    recall_words,
)
from game.dialogue.templates import fill
from game.sim.cast import Fact
from game.sim.events import Trigger
from game.sim.props import PROP_KINDS

if TYPE_CHECKING:
    from game.dialogue.examples import Example, ExampleBank

logger = logging.getLogger(__name__)

DEFAULT_KEYWORDS = "dialogue/keywords.toml"

# Seconds after submit past which no new candidate starts, by request class.
_BUDGET_S: dict[Priority, float] = {
    Priority.PLAYER_CHAT: 4.0,
    Priority.REACTIVE: 0.9,
    Priority.PREDICTIVE: 1.0,
    Priority.AMBIENT: 3.0,
}
_CHAT_REDRAWS = 2
# A reply that should pass on a fact does best sampled close to the likeliest words.
_CHAT_TEMPERATURE = 0.3
_REACTION_DRAWS = 3
# The village adapter's barks: a second draw only when the first fails a check, sampled
# cooler than the base model's (its first guess is already in the villager's voice).
_VILLAGE_DRAWS = 2
# A line prepared ahead (a greeting, a farewell) has time for more draws. With two, a
# greeting that must greet (generation.on_topic) failed both in 13% of greetings, which
# then fell to the template (docs/design.md). Past the second, a draw waits for an idle
# worker: in the crowd of 31, greetings that failed four draws took a third of the
# worker's time while other villagers' lines waited (docs/design.md).
_VILLAGE_PREPARED_DRAWS = 4
# A bark's first draw, greetings and goodbyes included. Drawn at 0.8 instead (at 0.4 a
# greeting's likeliest line is often the villager's last greeting again, or a corpus
# line), greetings read worse: preferred in blind pairs in 5 of 68 readings against 13
# of 62 (docs/dialogue.md).
_VILLAGE_TEMPERATURE = 0.4
# ... and the second hotter: at 0.4 it was the first line again, word for word, in four
# of seven greetings that failed both draws ("Good day, citizen." twice, an echo twice).
_VILLAGE_REDRAW_TEMPERATURE = 0.8
# Its bark ends at the first sentence that closes this many words: "Ow!" goes on,
# "Good day!" is a line. Read in village runs, the second sentence is where it wanders:
# over every blind run, readers rated bad 26-28% of one-sentence greetings against 42-47%
# of those that went on after a short first sentence ("Good day! Your goat's gone."),
# 18% of one-sentence goodbyes against 39-40% (the ratings tools/eval/line_quality.py
# gathers; docs/dialogue.md).
VILLAGE_SENTENCE_WORDS = 2
# A chat answer's first sentence must close three words: "The forge, dear?" goes on to
# give the place.
_ANSWER_SENTENCE_WORDS = 3
# What a villager did to the traveller's face, by verb stem: a bark to the traveller in
# which the speaker did it ("I bumped you") has the roles the wrong way round.
_TRAVELLER_ACTS = ("bump", "throw", "threw", "push")
#: ... and in a farewell, the leaving: the traveller goes, not the villager ("Bye! I'm
#: back!", "Bye! I'll be back soon, dear." were rated bad by both readers of a sitting).
_LEAVING = ("leav", "be back", "back")
# Words that say something was thrown (see _props_in_a_bump).
_THROWING = ("throw", "throws", "throwing", "threw", "thrown", "thrower")
# ... and words beside which a line may still speak of the throw in a bump: the bump
# itself, or a word that sets the throw apart from it ("First a crate, now elbows.").
_BUMP_NOW = (
    *("now", "first", "again", "earlier", "before", "after", "then", "too"),
    *("bump", "bumps", "bumped", "bumping", "shove", "shoves", "shoving", "shover"),
    *("elbow", "elbows", "shoulder", "shoulders", "walk", "walked", "knock"),
)
# Words of a bark that lean on an earlier meeting (see _claimed_past).
_PAST_WORDS = (
    *("still", "again", "waiting", "remember", "remembers", "last time"),
    *("welcome back", "you're back", "you are back"),
)
#: Words that claim an errand is waiting: no memory of what the traveller did licenses them.
_WAITING_WORDS = ("waiting",)
#: Ways of addressing someone that say whose voice it is ("citizen" is Sela's, "child"
#: Old Wen's) or take the traveller for a man, a woman or a youngster ("son", "kid",
#: "sister"). A villager may use only those their own persona or template lines use:
#: readers of village games marked Brann's "Morning, citizen.", Pip's "Bye, kid!" and
#: Odo's "You're the one, dear." bad, and each time it was the address that jarred.
_ADDRESS_TERMS = (
    *("dear", "citizen", "child", "kid", "son", "sister", "brother", "lad", "lass"),
    *("girl", "boy", "mister", "sir", "madam", "young man", "old man", "young lady"),
    *("old woman", "darling", "sweetheart"),
)
#: Number words a reply may use only when what it was told uses them (see _made_up_numbers).
_NUMBER_WORDS = (
    *("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"),
    *("twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen"),
    *("nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty"),
    *("ninety", "hundred", "thousand", "dozen"),
)


# Everything else is reactive. A farewell to someone already walking off matters less
# than the greeting prepared for the next villager they are about to meet.
_PRIORITY: dict[Trigger, Priority] = {
    Trigger.CHAT: Priority.PLAYER_CHAT,
    Trigger.AMBIENT: Priority.AMBIENT,
    Trigger.FAREWELL: Priority.AMBIENT,
}


def priority_of(trigger: Trigger, predictive: bool = False) -> Priority:
    """The scheduling class of a line: prepared ahead, chat, reaction or ambient."""
    return Priority.PREDICTIVE if predictive else _PRIORITY.get(trigger, Priority.REACTIVE)


@dataclass(frozen=True, slots=True)
class TriggerWords:
    """The keyword map: words that show a line is about its trigger, and, by errand id,
    the words that name what the errand wants (``errand_words``) and phrases that say it
    is done (``done_claims``)."""

    version: int
    by_trigger: Mapping[Trigger, tuple[str, ...]]
    done_claims: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    errand_words: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def of(self, trigger: Trigger) -> tuple[str, ...]:
        """The keywords of one trigger (none for chat)."""
        return self.by_trigger.get(trigger, ())


def load_trigger_words(name: str | Path = DEFAULT_KEYWORDS) -> TriggerWords:
    """Read the keyword map; raise AssetError naming the file and key on bad data."""
    path = asset_path(name)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AssetError(f"{path}: cannot read keyword map: {exc}") from exc
    table = raw.get("keywords")
    if not isinstance(table, dict):
        raise AssetError(f"{path}: missing table [keywords]")
    out: dict[Trigger, tuple[str, ...]] = {}
    for key, value in table.items():
        if key not in {t.value for t in Trigger}:
            raise AssetError(f"{path} at keywords.{key}: unknown trigger")
        out[Trigger(key)] = _phrases(value, f"{path} at keywords.{key}", "words")
    version = raw.get("version", 0)
    return TriggerWords(
        version if isinstance(version, int) else 0,
        MappingProxyType(out),
        _by_errand(raw, "errand_done_claims", path, "phrases"),
        _by_errand(raw, "errand_words", path, "words"),
    )


def _by_errand(
    raw: Mapping[str, object], key: str, path: Path, what: str
) -> Mapping[str, tuple[str, ...]]:
    """The table ``key`` of phrase lists by errand id (empty when absent)."""
    table = raw.get(key, {})
    if not isinstance(table, dict):
        raise AssetError(f"{path}: {key} must be a table of errand ids")
    return MappingProxyType(
        {
            errand_id: _phrases(value, f"{path} at {key}.{errand_id}", what)
            for errand_id, value in table.items()
        }
    )


def _phrases(value: object, where: str, what: str) -> tuple[str, ...]:
    """A TOML list of non-empty strings, lower-cased; AssetError naming ``where`` if not."""
    if not isinstance(value, list) or not all(isinstance(w, str) and w for w in value):
        raise AssetError(f"{where}: expected a list of {what}")
    return tuple(w.lower() for w in value)


@dataclass(frozen=True, slots=True)
class LineAskParts:
    """Everything about one line the planner needs besides the speaker's memory."""

    npc_id: int
    trigger: Trigger
    priority: Priority
    listener: str = "traveller"
    subject: str = ""
    errand: str = ""
    player_text: str = ""
    attitude: str = ""
    errand_state: str = ""
    errand_id: str = ""


@dataclass(frozen=True, slots=True)
class _Drawing:
    """How a line is to be drawn, as the planner had it when the line was asked for."""

    style: PromptStyle
    count: int
    contrast: bool
    openers: tuple[str, ...]
    shown: tuple[str, ...] = ()
    """The corpus lines the prompt shows, which the line may not copy."""


class LinePlanner:
    """Builds the prompt and the candidate plan of each line; see the module docstring.

    ``style`` starts as "fewshot" and becomes "village" once the model has loaded with the
    village adapter (:meth:`use_style`): the tuned model needs neither the shared context
    nor openers.
    """

    def __init__(
        self,
        context: str,
        personas: Mapping[int, Persona],
        trigger_words: TriggerWords,
        generation: GenerationConfig,
        shared_facts: Sequence[Fact] = (),
        examples: ExampleBank | None = None,
    ) -> None:
        self._context = context
        self._personas = personas
        self._words = trigger_words
        self._count = generation.candidates
        self._contrast = generation.contrast
        self._bank = examples
        self._shown = generation.examples
        self._on_topic = frozenset(generation.on_topic)
        self._shared_facts = tuple(shared_facts)
        self._names = tuple(dict.fromkeys(p.name for p in personas.values()))
        # Names and trades may stand around "do you remember me?" ("Marta, remember me?").
        self._addresses = tuple(
            dict.fromkeys(w for p in personas.values() for w in (p.name, p.role))
        )
        self._examples = tuple(
            dict.fromkeys(
                fill(line, name=p.name, listener="traveller")
                for p in personas.values()
                for lines in p.lines.values()
                for line in lines
            )
        )
        self._turns: dict[tuple[int, Trigger], int] = {}
        self._example_turns: dict[tuple[int, Trigger], int] = {}
        self._foreign_addresses = {p.name: _foreign_addresses(p) for p in personas.values()}
        self.style: PromptStyle = "fewshot"

    def use_generation(self, generation: GenerationConfig) -> None:
        """Plan the lines asked from now on with ``generation``'s candidates, contrast,
        examples and on-topic triggers."""
        self._count = generation.candidates
        self._contrast = generation.contrast
        self._shown = generation.examples
        self._on_topic = frozenset(generation.on_topic)

    @property
    def context(self) -> str:
        """The shared prompt prefix of the current style ("" for the village style)."""
        return self._context if self.style == "fewshot" else ""

    def use_style(self, style: PromptStyle) -> None:
        """Build every later prompt in ``style``."""
        if style != self.style:
            logger.info("prompts in the %s style", style)
        self.style = style

    def bark_memories(self, facts: Sequence[str], trigger: Trigger) -> tuple[str, ...]:
        """The remembered facts a ``trigger`` bark's prompt names in the current style."""
        return bark_memories(facts, trigger) if self.style == "village" else tuple(facts)

    def recalls(self, player_text: str) -> bool:
        """Whether the player asks if the villager remembers them (``game.dialogue.recall``)."""
        return is_recall_question(player_text, self._addresses)

    def build(self, ask: LineAskParts, memory: Memory) -> tuple[PromptSpec, PlanSource]:
        """The prompt and the candidate plan for one line.

        The plan comes as a function the worker calls when the line starts: gathering
        its checks' word lists was about 40% of a line's cost on the game's thread. It
        is made from the memory as it is now, and from the style and settings now.
        """
        speaker = self._personas[ask.npc_id]
        chat = ask.trigger is Trigger.CHAT
        recall = chat and self.recalls(ask.player_text)
        if self.style == "village" and not chat:
            memory = memory.with_facts(bark_memories(memory.facts, ask.trigger))
        known: tuple[Fact, ...] = ()
        if chat and not recall:
            # "Do you remember me?" asks for no fact: Old Wen's "I remember when the
            # market hall was built" is not the answer.
            known = matching_facts(ask.player_text, speaker.facts, self._shared_facts)
        prompt = build_prompt(
            self.context,
            speaker,
            ask.trigger,
            ask.listener,
            memory,
            subject=ask.subject,
            errand=ask.errand,
            player_text=ask.player_text,
            known=known,
            style=self.style,
            attitude=ask.attitude,
            errand_state=ask.errand_state,
            recall=recall,
        )
        shown = () if chat else self._examples_for(ask, speaker, memory, prompt)
        if shown:
            prompt = replace(prompt, context="\n".join(e.text for e in shown))
        # Openers take turns, so they are chosen here, on the game's thread.
        openers = () if chat or self.style == "village" else self._openers(ask, speaker, memory)
        if recall:
            # The answer starts in the villager's voice and the right frame ("You're the
            # one who"), and the model says what they remember.
            openers = speaker.recall_openers if memory.facts else speaker.stranger_openers
        drawing = _Drawing(
            self.style, self._count, self._contrast, openers, tuple(e.line for e in shown)
        )
        return prompt, partial(
            self._plan, ask, speaker, memory.recollection(), known, recall, drawing
        )

    def _examples_for(
        self, ask: LineAskParts, speaker: Persona, memory: Memory, prompt: PromptSpec
    ) -> tuple[Example, ...]:
        """The corpus lines a village-style bark's prompt opens with.

        They take turns among the best matches, so two lines of one villager in one
        moment are not written after the same examples.
        """
        if self.style != "village" or self._bank is None or not self._shown:
            return ()
        moment = Moment(
            speaker.label,
            ask.trigger,
            ask.listener,
            ask.subject,
            ask.errand_state,
            tuple(memory.facts),
            ask.attitude,
        )
        key = (ask.npc_id, ask.trigger)
        turn = self._example_turns.get(key, 0)
        self._example_turns[key] = turn + 1
        return self._bank.pick(moment, self._shown, turn, prompt)

    def _plan(
        self,
        ask: LineAskParts,
        speaker: Persona,
        memory: Recollection,
        known: Sequence[Fact],
        recall: bool,
        drawing: _Drawing,
    ) -> CandidatePlan:
        """The candidate plan; runs on the worker (see :meth:`build`)."""
        chat = ask.trigger is Trigger.CHAT
        criteria = self._criteria(ask, speaker, memory, known, recall, drawing.shown, drawing.style)
        openers = drawing.openers
        if ask.priority is Priority.PLAYER_CHAT:
            # The tuned model gives the fact in its first sentence and wanders in the
            # second ("...east of the well. Warm water makes a forge."): its answer ends
            # at the first full sentence by which it has used the words of a fact asked
            # for, or at its first full sentence when none was. "Do you remember me?" is
            # answered as before: its check wants the memory named in its first words.
            village = drawing.style == "village" and not recall
            return CandidatePlan(
                criteria,
                openers,
                _CHAT_REDRAWS,
                "first_pass",
                False,
                _BUDGET_S[ask.priority],
                _CHAT_TEMPERATURE,
                _ANSWER_SENTENCE_WORDS if village else 0,
                answer_words=answer_words(known) if village else (),
            )
        if drawing.style == "village":
            # The tuned model's first line that passes the checks is shown: best-of-three
            # and the contrastive score cost the worker three times the time and, in
            # village runs, late greetings, for lines a reader did not prefer.
            budget = _BUDGET_S[ask.priority]
            return CandidatePlan(
                criteria,
                (),
                _VILLAGE_PREPARED_DRAWS if ask.priority is Priority.PREDICTIVE else _VILLAGE_DRAWS,
                "first_pass",
                False,
                budget,
                _VILLAGE_TEMPERATURE,
                0 if chat else VILLAGE_SENTENCE_WORDS,
                redraw_temperature=_VILLAGE_REDRAW_TEMPERATURE,
                busy_count=_VILLAGE_DRAWS,
            )
        if ask.priority is Priority.REACTIVE or ask.trigger is Trigger.FAREWELL:
            count = min(drawing.count, _REACTION_DRAWS)
            budget = _BUDGET_S[Priority.REACTIVE]
            return CandidatePlan(criteria, openers, count, "first_good", False, budget)
        return CandidatePlan(
            criteria, openers, drawing.count, "best", drawing.contrast, _BUDGET_S[ask.priority]
        )

    def _criteria(
        self,
        ask: LineAskParts,
        speaker: Persona,
        memory: Recollection,
        known: Sequence[Fact],
        recall: bool,
        shown: tuple[str, ...],
        style: PromptStyle,
    ) -> LineCriteria:
        """What the line must and must not say. Runs on the worker: besides its arguments
        it reads only what the planner was made with, which nothing changes."""
        chat = ask.trigger is Trigger.CHAT
        listener_names = words_of_names(ask.listener, self._names)
        present = {*_own_names(speaker.name), *listener_names}
        remembered = memory.facts if recall else ()
        mentioned = " ".join((ask.player_text, *(fact.text for fact in known), *remembered))
        absent = tuple(
            name for name in self._names if name not in present and name not in mentioned
        )
        keywords = self._keywords(ask, known)
        return LineCriteria(
            keywords=keywords,
            # A reply to the player may say who is talking ("I'm Marta, the baker"); a bark
            # that names its own speaker or their trade reads like a stage label, or like
            # a villager who took themself for someone else ("Ah, the baker!" from Marta).
            speaker_names=() if chat else _speaker_names(speaker, ask.listener, listener_names),
            absent_names=absent,
            examples=self._examples + shown if shown else self._examples,
            remembered=memory.recent_lines,
            player_text=ask.player_text,
            foreign_words=(
                made_up_deeds(memory.facts)
                if recall
                else (
                    *_other_props(ask),
                    *_claimed_past(ask, memory, chat),
                    *_unless_said(self._foreign_addresses[speaker.name], mentioned),
                    *self._claimed_done(ask),
                    *(_made_up_numbers(speaker, memory, mentioned, ask.errand) if chat else ()),
                )
            ),
            listener_acts=_listener_acts(ask, chat, recall),
            # The answer to "do you remember me?" names what they remember, or says they
            # do not know the traveller, in its first words; any other answer gives way
            # to the template.
            # With ``generation.on_topic``, a village bark of those triggers must also
            # name its moment: a greeting that greets, a bump that is a bump.
            must_mention=(
                recall_words(memory.facts, ask.errand)
                if recall
                else self._on_topic_words(ask, keywords, memory.facts)
                if style == "village" and ask.trigger.value in self._on_topic
                else ()
            ),
            mention_within=recall_within(memory.facts) if recall else 0,
            # Meeting the traveller for the first time, a villager may say who they are.
            introduces=ask.trigger is Trigger.GREET and _first_meeting(memory),
            # ... and never that they are a prop: Pip's welcome "I'm the ball!".
            things=tuple(PROP_KINDS),
            # A bump after a throw is not a throw: "Throwing a ball at me?" when bumped.
            past_only=_props_in_a_bump(ask, speaker, memory),
            now_words=_BUMP_NOW,
            # The village model's bark may not be a corpus line word for word.
            written=(
                self._bank.written(speaker.label)
                if self._bank is not None and style == "village" and not chat
                else frozenset()
            ),
        )

    def _claimed_done(self, ask: LineAskParts) -> tuple[str, ...]:
        """Phrases that would say the villager's errand is done, while it is not.

        Pip asking for her ball with "Oh my, the ball's down!" while it sits on the roof
        tells the player the errand needs nothing more: a line the world contradicts.
        """
        if ask.trigger not in (Trigger.ERRAND_OFFER, Trigger.ERRAND_HINT):
            return ()
        if ask.errand_state == "done":
            return ()
        return self._words.done_claims.get(ask.errand_id, ())

    def _on_topic_words(
        self, ask: LineAskParts, keywords: tuple[str, ...], told: Sequence[str]
    ) -> tuple[str, ...]:
        """What a village bark of an on-topic trigger must use one of: an errand's offer
        names what the errand wants; a greeting greets or names what the villager was
        told they remember of the traveller (``told``); any other bark, a word of its
        moment."""
        if ask.trigger is Trigger.ERRAND_OFFER:
            return self._words.errand_words.get(ask.errand_id, keywords)
        if ask.trigger is Trigger.GREET:
            recalled = (word for fact in told for word in greeting_words(fact, ask.errand))
            return tuple(dict.fromkeys((*keywords, *recalled)))
        return keywords

    def _keywords(self, ask: LineAskParts, known: Sequence[Fact]) -> tuple[str, ...]:
        if ask.trigger is Trigger.CHAT:
            return tuple(dict.fromkeys(w for fact in known for w in fact.about))
        extra = [ask.subject] if ask.subject else []
        extra.extend(question_words(ask.errand))
        return (*self._words.of(ask.trigger), *(w.lower() for w in extra if len(w) > 2))

    def _openers(self, ask: LineAskParts, speaker: Persona, memory: Memory) -> tuple[str, ...]:
        """The villager's openers for the trigger, turned so they take turns leading."""
        openers = speaker.openers.get(ask.trigger, ())
        if not openers:
            return ()
        key = (ask.npc_id, ask.trigger)
        turn = self._turns.get(key, 0)
        self._turns[key] = turn + 1
        ordered = openers[turn % len(openers) :] + openers[: turn % len(openers)]
        last = next((t.text for t in reversed(memory.exchanges) if t.speaker == speaker.name), "")
        if len(ordered) > 1 and last.startswith(ordered[0]):
            ordered = ordered[1:] + ordered[:1]
        return ordered


def bark_memories(facts: Sequence[str], trigger: Trigger) -> tuple[str, ...]:
    """The one remembered fact a village-style bark is told of, if any.

    A bump is too small to recall aloud: told of one, the tuned model brings it into
    every later line, and swaps who bumped whom. A thrown prop is not recalled in the
    reaction to a hit or a near miss, which is about the prop that just flew.
    """
    kept = [fact for fact in facts if fact != BUMPED_FACT]
    if trigger in (Trigger.HIT, Trigger.NEAR_MISS):
        kept = [fact for fact in kept if not fact.startswith(THREW_FACT)]
    return tuple(kept[-1:])


def _speaker_names(
    speaker: Persona, listener: str, listener_names: Sequence[str]
) -> tuple[str, ...]:
    """The speaker's names and trade a bark may not use, but for those the listener shares:
    in a crowd, Pip may call "Pip 4 the child" Pip, and a child another child."""
    shared = {*listener_names, *words(listener)}
    return tuple(name for name in (*_own_names(speaker.name), speaker.role) if name not in shared)


def _listener_acts(ask: LineAskParts, chat: bool, recall: bool) -> tuple[str, ...]:
    """What the traveller did that the speaker must not say they did."""
    if recall:
        return TRAVELLER_DEEDS
    if chat or ask.listener != "traveller":
        return ()
    return (*_TRAVELLER_ACTS, *_LEAVING) if ask.trigger is Trigger.FAREWELL else _TRAVELLER_ACTS


def _foreign_addresses(persona: Persona) -> tuple[str, ...]:
    """The terms of address (see _ADDRESS_TERMS) that are not ``persona``'s own."""
    own = " ".join((persona.persona, *(line for lines in persona.lines.values() for line in lines)))
    return _unless_said(_ADDRESS_TERMS, own)


def _unless_said(terms: Sequence[str], said: str) -> tuple[str, ...]:
    """``terms`` without those ``said`` uses (the player's "my sister" may be answered)."""
    used = set(names_in(said.lower(), terms))
    return tuple(term for term in terms if term not in used)


def _props_in_a_bump(ask: LineAskParts, speaker: Persona, memory: Recollection) -> tuple[str, ...]:
    """For a bump by a traveller who threw something earlier, the props and throwing:
    nothing flew now. Told of the throw, the model wrote the bump as one ("Throwing a
    ball at me?", "Oof, what a ball!"), and readers rated each such line bad; the corpus
    sets the throw apart ("First a crate, now elbows."). A prop the speaker's persona
    names stays theirs to speak of (Pip's ball)."""
    if ask.trigger is not Trigger.BUMPED or not any(
        fact.startswith(THREW_FACT) for fact in memory.facts
    ):
        return ()
    return (*_unless_said(_prop_words(PROP_KINDS), speaker.persona), *_THROWING)


def _other_props(ask: LineAskParts) -> tuple[str, ...]:
    """For a hit or a near miss by one kind of prop, the other kinds (and their plurals)."""
    if ask.trigger not in (Trigger.HIT, Trigger.NEAR_MISS) or ask.subject not in PROP_KINDS:
        return ()
    return _prop_words(kind for kind in PROP_KINDS if kind != ask.subject)


def _prop_words(kinds: Iterable[str]) -> tuple[str, ...]:
    """Each kind of prop and its plural: "crate", "crates"."""
    return tuple(word for kind in kinds for word in (kind, kind + "s"))


def _claimed_past(ask: LineAskParts, memory: Recollection, chat: bool) -> tuple[str, ...]:
    """Words that claim a past the bark's prompt does not give it.

    Told of nothing the traveller did and with no errand waiting, a bark that says
    "still", "again" or "waiting" makes up a history ("I'm still waiting on your apples,
    dear" before Marta asked; "I'm still waiting for you" as the errand is done): the
    failure readers of village games marked bad most often, with "Welcome back,
    citizen." from a Sela who had never met the traveller. A memory, or an earlier
    meeting, licenses "again", "back" and "remember", never "waiting": Corvin, hit by a
    crate, greeted with "I'm still waiting on the crates." before he had asked for them.
    """
    if chat or ask.errand_state == "asked":
        return ()
    return _WAITING_WORDS if memory.facts or memory.met else _PAST_WORDS


def _made_up_numbers(
    speaker: Persona, memory: Recollection, mentioned: str, errand: str
) -> tuple[str, ...]:
    """Number words a reply was not told: every other one of ``_NUMBER_WORDS``.

    Asked how long she has lived in Millbrook, Old Wen, whose fact says eighty years,
    answered "Eight years", "Eighteen years" and "Eighty years" in turn: a number the
    prompt does not give is made up, and a wrong one reads as a villager who forgot.
    """
    told = " ".join((speaker.persona, mentioned, errand, *memory.facts, *memory.recent_lines))
    given = set(words(told.lower()))
    return tuple(number for number in _NUMBER_WORDS if number not in given)


def _first_meeting(memory: Recollection) -> bool:
    """Whether the villager has not met the traveller yet, nor learned anything of them
    (what they said to other villagers does not count)."""
    return not (memory.met or memory.facts)


def _own_names(name: str) -> tuple[str, ...]:
    """A villager's name and, for "Old Wen", the short "Wen" too; a crowd's numbered
    "Pip 2" is Pip as well."""
    parts = name.split()
    if len(parts) > 1 and parts[-1].isdigit():
        return (name, *_own_names(" ".join(parts[:-1])))
    return (name, parts[-1]) if len(parts) > 1 else (name,)


def words_of_names(text: str, names: Sequence[str]) -> tuple[str, ...]:
    """The names from ``names`` that ``text`` contains ("Brann the blacksmith" has Brann)."""
    found = set(words(text))
    return tuple(name for name in names if set(words(name)) <= found)
