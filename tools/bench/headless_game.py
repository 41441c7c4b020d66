"""Run the headless game exactly as ``python -m game`` does, on a chosen runtime design.

``--runtime ai`` is the game's own (``build_router`` over ``AiRuntime``); ``--runtime
plain`` is the textbook peer (``tools.peers.plain_runtime.PlainRuntime``).
``--back-to-back`` (``tools/peers/back_to_back.py``) keeps the worker generating the whole
time with filler lines the game never sees. Every other flag is the game's.

    python tools/bench/headless_game.py --runtime plain --back-to-back --headless --ai async
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from ai import build_router  # noqa: E402
from game.__main__ import parse_args  # noqa: E402
from game.app import RuntimeFactory, run  # noqa: E402
from tools.peers.back_to_back import QueuedFactory, busy  # noqa: E402
from tools.peers.plain_runtime import plain_runtime  # noqa: E402



def main(argv: list[str] | None = None) -> int:
    """Split off this tool's flags, pass the rest to the game."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0], add_help=False)
    parser.add_argument("--runtime", choices=("ai", "plain"), default="ai")
    parser.add_argument("--back-to-back", action="store_true")
    ns, rest = parser.parse_known_args(argv)
    peer: QueuedFactory = build_router if ns.runtime == "ai" else plain_runtime
    factory: RuntimeFactory = busy(peer) if ns.back_to_back else peer
    return run(parse_args(rest), runtime_factory=factory)


if __name__ == "__main__":
    sys.exit(main())
