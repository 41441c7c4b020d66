"""Decisions without a model: what the traveller meant, read from keywords, then the policy.

The rules are what the game does when the model is off, loading, failing or too slow,
and the baseline the model is measured against. They read the player's line for the
words of an ask (bring, follow, where, call ...) and for a target among the options,
and for insults, threats, apologies and thanks; ``policy.decide`` does the rest.
"""

from __future__ import annotations

import re

from game.decisions.policy import (
    Event,
    Intent,
    Mood,
    Option,
    decide,
    kind_words,
)
from game.sim.orders import ActionKind

_WORD = re.compile(r"[a-z']+")
_THREAT = ("kill", "hurt", "punch", "smash your", "burn", "stab", "beat you", "hit you")
_INSULT = (
    "idiot",
    "stupid",
    "useless",
    "fool",
    "ugly",
    "shut up",
    "loser",
    "dumb",
    "moron",
    "pathetic",
    "stinks",
    "smell",
    "hate you",
)
_APOLOGY = ("sorry", "apolog", "forgive", "my bad", "didn't mean")
_THANKS = ("thank", "thanks", "cheers", "grateful", "you're great", "you are great", "kind of you")
_FETCH = ("bring", "fetch", "get me", "grab", "give me", "hand me", "pass me", "carry")
_PUT = ("basket",)
_FOLLOW = ("follow", "come with", "walk with", "come along", "accompany", "join me")
_WAY = ("where", "way to", "show me", "take me", "lead me", "how do i get", "directions", "find")
_CALL = ("call", "get the", "fetch the", "send for", "shout for", "need the")
_PROP_WORDS = {
    "apple": ("apple", "fruit"),
    "ball": ("ball",),
    "crate": ("crate", "box"),
}


def _has(text: str, words: tuple[str, ...]) -> bool:
    """Whether any of ``words`` starts a word of ``text`` ("thank" in "thanks", not
    "loser" in "closer")."""
    return any(re.search(rf"\b{re.escape(w)}", text) for w in words)


def _names(option: Option, lowered: str) -> bool:
    """Whether the line names the villager of a call option, by name or by trade."""
    name, _, role = option.text.removeprefix("call ").lower().partition(" the ")
    return any(re.search(rf"\b{re.escape(w)}\b", lowered) for w in (name, role))


def guess_intent(text: str, options: tuple[Option, ...]) -> tuple[Intent | None, str]:
    """What the traveller most likely asks, and its target, from keywords alone."""
    lowered = " ".join(_WORD.findall(text.lower()))
    if not lowered:
        return None, ""
    if _has(lowered, _THREAT):
        return "threat", ""
    if _has(lowered, _INSULT):
        return "insult", ""
    prop = next((k for k, words in _PROP_WORDS.items() if _has(lowered, words)), "")
    person = next(
        (
            o.target
            for o in options
            if o.kind is ActionKind.CALL
            and (
                o.text.split(" the ")[0][5:].lower() in lowered
                or o.text.split(" the ")[-1] in lowered
            )
        ),
        "",
    )
    place = next(
        (o.target for o in options if o.kind is ActionKind.SHOW_WAY and o.target in lowered), ""
    )
    if not place:
        place = next(
            (
                o.target
                for o in options
                if o.kind is ActionKind.SHOW_WAY and o.target.split()[-1] in lowered.split()
            ),
            "",
        )
    if prop == "apple" and _has(lowered, _PUT):
        return "put", "apple"
    if prop and _has(lowered, _FETCH):
        return "fetch", prop
    if person and _has(lowered, _CALL):
        return "call", person
    if place and _has(lowered, _WAY):
        return "show_way", place
    if _has(lowered, _FOLLOW):
        return "follow", ""
    if _has(lowered, _APOLOGY):
        return "apology", ""
    if _has(lowered, _THANKS):
        return "thanks", ""
    return "other", ""


def rules_decision(
    text: str, attitude: int, options: tuple[Option, ...], event: Event = "chat"
) -> tuple[Option, Mood]:
    """The rules' decision for a chat line (or an event) and the villager's attitude."""
    intent, target = guess_intent(text, options) if event == "chat" else (None, "")
    return decide(intent, target, attitude, options, event, kind_words(text))
