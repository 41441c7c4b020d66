"""A player's chat through the real window and the packaged model, paced in real time.

The player stands by Marta and asks her questions in one conversation, alternately
typed key by key (about 8 keys a second, then a short pause before Enter: the chat box
hands the text over while it is typed, so the reply's prompt is read ahead) and pasted
(sent at once: nothing read ahead). For each, it measures the time from Enter to the
reply's first words on screen, and keeps what she said. Writes
``bench/chat_latency.json``. Needs a display (``xvfb-run`` on a headless machine):

    xvfb-run -a -s "-screen 0 1280x720x24" .venv/bin/python tools/bench/chat_latency.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pygame  # noqa: E402

from game.app import build_village  # noqa: E402
from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from game.sim.player import PlayerIntent  # noqa: E402
from game.ui.window import GameWindow  # noqa: E402
from tools.bench.machine import load_average, machine_header  # noqa: E402

STAY = PlayerIntent()
QUESTIONS = (
    "What do you sell?",
    "How much is a loaf?",
    "Is the oven hot yet?",
    "Who is the blacksmith?",
    "Where is Pip's ball?",
    "Do you need apples?",
    "What is your name?",
    "Any news in the village?",
)
KEY_TICKS = 7  # about 8.5 keys a second
PAUSE_TICKS = 20  # a third of a second between the last key and Enter
REPLY_WAIT_S = 8.0


class Session:
    """A real window stepped tick by tick at 60 Hz of wall time."""

    def __init__(self) -> None:
        settings = load_settings(CONFIG_DIR, ())
        self.village = build_village(settings)
        pygame.display.init()
        pygame.font.init()
        self.window = GameWindow(self.village, settings.game)

    def tick(self, count: int = 1) -> None:
        for _ in range(count):
            start = time.perf_counter()
            self.window.step(STAY)
            time.sleep(max(0.0, 1 / 60 - (time.perf_counter() - start)))

    def close(self) -> None:
        self.village.close()
        pygame.quit()


def ask(session: Session, npc_id: int, question: str, typed: bool) -> dict[str, Any]:
    """Type or paste ``question``, press Enter, and wait for the reply on screen."""
    chat, board = session.window.chat, session.village.dialogue.board
    if typed:
        for key in question:
            chat.type(key)
            session.tick(KEY_TICKS)
        session.tick(PAUSE_TICKS)
    else:
        chat.type(question)
    sent = time.perf_counter()
    chat.submit()
    first_ms: float | None = None
    while time.perf_counter() - sent < REPLY_WAIT_S:
        session.tick()
        text = board.text_of(npc_id) or ""
        if first_ms is None and text and text != "...":
            first_ms = (time.perf_counter() - sent) * 1000.0
        if text and text != "..." and not board.is_streaming(npc_id):
            break
    session.tick(30)
    reply = board.text_of(npc_id) or ""
    return {"question": question, "typed": typed, "first_words_ms": first_ms, "reply": reply}


def main(argv: list[str] | None = None) -> int:
    """Run the conversation and write the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="times through the questions")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "chat_latency.json")
    args = parser.parse_args(argv)
    load_start = load_average()
    session = Session()
    records: list[dict[str, Any]] = []
    try:
        if session.village.ai.wait_ready(60.0) != "ready":
            print("the model is not ready; nothing measured", file=sys.stderr)
            return 1
        world = session.village.world
        marta = next(v for v in world.villagers if v.spec.id == "baker")
        world.player.body.position = (marta.x + 60.0, 40.0)
        world.player.body.velocity = (0.0, 0.0)
        session.tick(120)
        if not session.window.chat.open():
            print("could not open a chat with Marta", file=sys.stderr)
            return 1
        for n in range(args.rounds * len(QUESTIONS)):
            # Each round swaps which questions are typed, so every one is asked both ways.
            typed = n % 2 == (n // len(QUESTIONS)) % 2
            record = ask(session, marta.id, QUESTIONS[n % len(QUESTIONS)], typed)
            records.append(record)
            how = "typed " if record["typed"] else "pasted"
            shown = record["first_words_ms"]
            print(f"{how} {shown if shown is None else round(shown):>5} ms  "
                  f"{record['question']}  ->  {record['reply']}", flush=True)  # fmt: skip
    finally:
        session.close()

    def summary(typed: bool) -> dict[str, Any]:
        times = [r["first_words_ms"] for r in records if r["typed"] is typed]
        times = [t for t in times if t is not None]
        return {
            "count": len(times),
            "p50_ms": round(statistics.median(times), 1) if times else None,
            "max_ms": round(max(times), 1) if times else None,
        }

    document = {
        "what": "Enter to the reply's first words on screen, real window, real model, 60 Hz",
        "machine": machine_header(load_start, model=load_settings(CONFIG_DIR, ()).ai.model),
        "typed": summary(True),
        "pasted": summary(False),
        "records": records,
    }
    args.out.write_text(json.dumps(document, indent=1) + "\n")
    print(json.dumps({k: document[k] for k in ("typed", "pasted")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
