""" "Do you remember me?" asked in a real village, with the packaged model, as a player would.

Each case (``tools/eval/data/dialogue/recall.json``) gives a villager what they remember
of the traveller (and how they feel), puts the player beside them for two seconds of play,
opens a chat, types the question for half a second (the chat box reads the reply ahead)
and sends it; the game runs paced at 60 Hz until the answer is up. Writes each answer,
where it came from (the model, or the template when no draw passed the checks) and the
candidates drawn, to ``bench/recall.json``. Reading them is left to a reader.

    python tools/eval/recall.py
    python tools/eval/recall.py --tree /tmp/old --out /tmp/recall_old.json  # another checkout
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ai import AiEvent
    from game.core.session import Session
    from game.dialogue.line_source import LineEvent

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tools" / "eval" / "data" / "dialogue" / "recall.json"
_HZ = 60


def _pace(village: Session, ticks: int, done: Callable[[], bool] | None = None) -> None:
    from game.sim.player import PlayerIntent

    for _ in range(ticks):
        village.step(PlayerIntent())
        time.sleep(1 / _HZ)
        if done is not None and done():
            return


def run(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ask every case's question in one village; what each villager answered."""
    from ai.events import FallbackUsed, LineCompleted, LineFailed
    from game.app import build_village
    from game.config.settings import load_settings
    from game.dialogue.line_source import LineReady
    from game.dialogue.model_line_source import ModelLineSource
    from game.sim.events import Trigger

    overrides = ("ai.model.n_threads=1", "game.dialogue.greet_ahead=false")
    village = build_village(load_settings(overrides=overrides))
    if village.ai.wait_ready(120.0) != "ready":
        raise SystemExit("tools/eval/recall.py: the model did not load")
    world, source = village.world, village.dialogue.source
    if not isinstance(source, ModelLineSource):
        raise SystemExit("tools/eval/recall.py: the AI is off in the settings")
    answers: list[LineReady] = []
    drawn: list[dict[str, Any]] = []
    poll, runtime_poll = source.poll, source.runtime.poll

    def tapped(tick: int) -> list[LineEvent]:
        events = poll(tick)
        answers.extend(
            e for e in events if isinstance(e, LineReady) and e.ask.trigger is Trigger.CHAT
        )
        return events

    def runtime_tapped() -> list[AiEvent]:
        events = runtime_poll()
        for event in events:
            chat = event.request.prompt.situation.startswith("replying")
            if chat and isinstance(event, LineCompleted | LineFailed):
                drawn.extend({"text": v.text, "faults": list(v.faults)} for v in event.candidates)
            elif chat and isinstance(event, FallbackUsed):
                drawn.append({"fallback": event.reason})
        return events

    source.poll = tapped  # type: ignore[method-assign]
    source.runtime.poll = runtime_tapped  # type: ignore[method-assign]
    me = world.player_status().id
    out = []
    try:
        for case in cases:
            npc = next(i for i in world.npc_ids() if (n := world.npc(i)) and n.name == case["npc"])
            memory = village.dialogue.memories.of(npc)
            memory.restore((), tuple(case["facts"]))
            memory.attitude = int(case.get("attitude", 0))
            x = (world.entity_position(npc) or (0.0, 0.0))[0] + 50.0
            world.place_player(x, world.level.ground_y(x) + 31.0)
            _pace(village, 2 * _HZ)
            world.set_talking(npc, True)
            _pace(village, 1)
            answers.clear()
            drawn.clear()
            village.dialogue.typing(village.tick, npc, me, case["q"])
            _pace(village, _HZ // 2)
            village.dialogue.say(village.tick, npc, me, case["q"])
            _pace(village, 20 * _HZ, lambda: bool(answers))
            ready = answers[0] if answers else None
            out.append(
                {
                    **case,
                    "origin": ready.origin if ready else "none",
                    "text": ready.text if ready else "",
                    # What the bubble shows: a refusal of the player's words shows the
                    # villager's refusal, not the line the answer carried.
                    "shown": village.dialogue.board.text_of(npc) or "",
                    "drawn": list(drawn),
                }
            )
            print(f"{case['npc']:<8} {case['q']!r:<36} {out[-1]['origin']:<9} {out[-1]['shown']}")
            world.set_talking(npc, False)
            _pace(village, _HZ)
    finally:
        village.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose game runs")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "recall.json")
    args = parser.parse_args(argv)
    for path in (ROOT, args.tree.resolve()):  # the tree's game, the tools of this one
        sys.path.insert(0, str(path))
    from game.config.settings import CONFIG_DIR, load_settings
    from tools.bench.machine import load_average, machine_header

    start = load_average()
    answers = run(json.loads(CASES.read_text()))
    document = {
        "what": '"do you remember me?" asked in one paced village, with the packaged model',
        # The checkout under test, as the repository names it, not as this disk does.
        "tree": "." if args.tree.resolve() == ROOT.resolve() else args.tree.name,
        "machine": machine_header(start, model=load_settings(CONFIG_DIR).ai.model),
        "answers": answers,
        "from_the_model": sum(a["origin"] == "model" for a in answers),
        "from_the_template": sum(a["origin"] == "fallback" for a in answers),
        "refused": sum(a["origin"] == "refusal" for a in answers),
    }
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
