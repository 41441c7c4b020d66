"""Turn what travellers say into decision situations for training the village model.

    python tools/train/make_decision_corpus.py

Reads ``assets/dialogue/decisions/requests.jsonl`` (utterances labelled with what they
mean) and writes ``assets/dialogue/decisions/corpus.jsonl``: each utterance said to a
villager picked at random, with a random attitude, memories and props within reach,
and the answer the policy gives (``game.decisions.policy.decide``). Event situations
(hit again, errand done) are added for every villager. Seeded: the same input gives
the same file.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from game.assets import ASSETS_DIR  # noqa: E402
from game.decisions.policy import (  # noqa: E402
    FETCHABLE,
    INTENTS,
    Intent,
    decide,
    kind_words,
    place_name,
)
from game.decisions.situations import SituationWorld  # noqa: E402
from game.sim.cast import load_cast  # noqa: E402
from game.sim.level import load_level  # noqa: E402

DECISIONS = ASSETS_DIR / "dialogue" / "decisions"
ATTITUDES = (-2, -1, -1, 0, 0, 0, 0, 1, 1, 2)
PROPS_THROWN = ("a crate", "an apple", "a ball", "a barrel")
ERRAND_GIVERS = ("baker", "merchant", "child")
EVENT_RECORDS_PER_VILLAGER = 14
ASKS = frozenset({"fetch", "put", "follow", "show_way", "call"})


def _memory(rng: random.Random, attitude: int, topics: list[str]) -> list[str]:
    pool: list[str] = []
    if attitude < 0 or rng.random() < 0.2:
        pool.append(f"the traveller threw {rng.choice(PROPS_THROWN)} at them")
    if rng.random() < 0.3:
        pool.append("the traveller bumped into them")
    if attitude > 0 or rng.random() < 0.2:
        pool.append("the traveller helped with their errand")
    if topics and rng.random() < 0.4:
        pool.append(f"the traveller asked them about {rng.choice(topics)}")
    rng.shuffle(pool)
    return pool[: rng.randint(0, 2)]


def _props(rng: random.Random, intent: str, target: str) -> list[str]:
    props = [p for p in FETCHABLE if rng.random() < 0.5]
    if intent in ("fetch", "put") and target in FETCHABLE:
        if rng.random() < 0.85 and target not in props:
            props.append(target)
        elif rng.random() < 0.15 and target in props:
            props.remove(target)
    return [p for p in FETCHABLE if p in props]


def build(seed: int) -> list[dict[str, object]]:
    """Every training situation, in a stable order."""
    cast = load_cast()
    level = load_level()
    places = [place_name(d.label) for d in level.decor if d.label]
    world = SituationWorld.of(cast)
    rng = random.Random(seed)
    ids = [s.id for s in cast.npcs]
    topics = {s.id: [f.topic for f in s.facts if f.topic] for s in cast.npcs}
    out: list[dict[str, object]] = []
    requests = (DECISIONS / "requests.jsonl").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(requests, 1):
        if not line.strip():
            continue
        raw = json.loads(line)
        intent, target, text = raw["intent"], raw["target"], raw["text"]
        if intent not in INTENTS:
            raise ValueError(f"requests.jsonl:{number}: unknown intent {intent!r}")
        # An ask that depends on the villager's attitude is said twice, to two villagers
        # who feel differently, so the attitude's part in the answer is learned.
        for copy in range(2 if intent in ASKS else 1):
            npc = rng.choice(ids)
            if intent == "call" and target == npc:
                npc = rng.choice([i for i in ids if i != target])
            attitude = rng.choice(ATTITUDES)
            rid = f"r{number}" + ("b" if copy else "")
            record = _record(
                rng, world, rid, npc, attitude, topics[npc], "chat", text, intent, target
            )
            record["places"] = [
                p
                for p in places
                if not (intent == "show_way" and p == target and rng.random() < 0.06)
            ]
            _label(world, record, intent, target, text)
            out.append(record)
    for npc in ids:
        for k in range(EVENT_RECORDS_PER_VILLAGER):
            event = "errand_done" if npc in ERRAND_GIVERS and k % 2 else "hit_again"
            attitude = rng.choice(ATTITUDES)
            record = _record(
                rng, world, f"e{npc}{k}", npc, attitude, topics[npc], event, "", "event", ""
            )
            record["places"] = places
            _label(world, record, None, "", "")
            out.append(record)
    return out


def _record(
    rng: random.Random,
    world: SituationWorld,
    rid: str,
    npc: str,
    attitude: int,
    topics: list[str],
    event: str,
    text: str,
    intent: str,
    target: str,
) -> dict[str, object]:
    others = [v for v in world.labels if v != npc and rng.random() > 0.05]
    return {
        "id": rid,
        "npc": npc,
        "attitude": attitude,
        "memory": _memory(rng, attitude, topics),
        "event": event,
        "text": text,
        "props": _props(rng, intent, target),
        "places": [],
        "villagers": others,
        "intent": intent,
        "target": target,
    }


def _label(
    world: SituationWorld, record: dict[str, object], intent: Intent | None, target: str, text: str
) -> None:
    from game.decisions.situations import Situation

    situation = Situation(
        "",
        str(record["id"]),
        str(record["npc"]),
        int(record["attitude"]),  # type: ignore[call-overload]
        tuple(record["memory"]),  # type: ignore[arg-type]
        record["event"],  # type: ignore[arg-type]
        text,
        tuple(record["props"]),  # type: ignore[arg-type]
        tuple(record["places"]),  # type: ignore[arg-type]
        tuple(record["villagers"]),  # type: ignore[arg-type]
        str(record["intent"]),
        target,
        "",
        "unmoved",
    )
    option, mood = decide(
        intent,
        target,
        situation.attitude,
        world.options(situation),
        situation.event,
        kind_words(text),
    )
    record["action"] = option.text
    record["mood"] = mood


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--out", default=str(DECISIONS / "corpus.jsonl"))
    args = parser.parse_args()
    records = build(args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"{len(records)} situations -> {args.out}")


if __name__ == "__main__":
    main()
