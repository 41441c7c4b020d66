"""Audit a bubble log: did any bubble appear that no longer fit the world?

``python -m game --headless --bubble-log log.jsonl`` writes one record per bubble with
the line's snapshot and the raw facts of the live world at the tick it appeared. This
audit re-derives each rule from those raw facts, independently of the validator's own
code, so a bug in the validator shows up here as a violation.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from game.dialogue.validation import Limits, reach
from game.sim.events import Trigger

# A reaction may still be said once its villager is back to their day or still reacting.
_REACTIONS = {"hit", "near_miss", "bumped", "toppled"}
_AFTER_REACTION = {"idle", "routine", "wander", "react", "flee"}


def violations(record: dict[str, Any]) -> list[str]:
    """The rules a logged bubble broke at the tick it appeared (empty if none)."""
    snap, live = record.get("snapshot"), record.get("live")
    if snap is None or live is None or record.get("origin") == "unfinished":
        # A template line written at its own tick has nothing to hold it against; a reply
        # cut after its first words keeps what the player had already read.
        return []
    found = []
    if not live["conscious"] or not live["can_talk"]:
        found.append("speaker_cannot_talk")
    if snap["predictive"]:
        if live["last_disruption_tick"] >= snap["tick"]:
            found.append("disrupted_since_prepared")
    elif live["epoch"] != snap["epoch"]:
        outlived = snap["trigger"] in _REACTIONS and live.get("state") in _AFTER_REACTION
        if not outlived:
            found.append("epoch_changed")
        elif live["last_disruption_tick"] > snap["tick"]:
            found.append("disrupted_since_asked")
    if snap["listener_id"] is not None:
        distance = live["listener_distance"]
        limit = reach(Trigger(snap["trigger"]), live["talk_radius"])
        if distance is None or distance > limit:
            found.append("out_of_range")
    drift = Limits(talk_radius=0.0, ttl_ticks=0).ref_drift
    for ref in snap["refs"]:
        where = live["refs"].get(str(ref["id"]))
        if where is None:
            found.append("ref_gone")
        elif abs(where[0] - ref["x"]) + abs(where[1] - ref["y"]) > drift:
            found.append("ref_moved")
    if record["tick"] - snap["tick"] > live["ttl_ticks"]:
        found.append("too_old")
    return found


def audit(path: Path) -> dict[str, Any]:
    """Check every record of a bubble log; return counts."""
    checked = 0
    replacement = 0
    broken: Counter[str] = Counter()
    origins: Counter[str] = Counter()
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            origins[record["origin"]] += 1
            replacement += "\ufffd" in record.get("text", "")
            if record.get("snapshot") is not None:
                checked += 1
            for reason in violations(record):
                broken[reason] += 1
    return {
        "bubbles": sum(origins.values()),
        "checked": checked,
        "violations": sum(broken.values()),
        "by_rule": dict(broken),
        "origins": dict(origins),
        "replacement_chars": replacement,
    }


def main() -> int:
    """Print the audit of a bubble log; exit 1 if any bubble broke a rule."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("log", type=Path)
    result = audit(parser.parse_args().log)
    print(json.dumps(result, indent=2))
    return 1 if result["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
