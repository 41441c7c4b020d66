"""``python -m game [--headless ...]``: the launch time, the stop signal and ``main``; the
flags are parsed in ``cli`` and ``app`` does the rest."""

from __future__ import annotations

import time

# Taken before the heavy imports below, so "first frame after X ms" counts them.
LAUNCHED_AT = time.perf_counter()

from game.core.shutdown import StopRequest  # noqa: E402

# Installed before the heavy imports, so that Ctrl+C at any moment ends the run cleanly.
STOP = StopRequest()
if __name__ == "__main__":
    STOP.install()

import sys  # noqa: E402

from game import cli  # noqa: E402
from game.app import run  # noqa: E402


def parse_args(argv: list[str] | None = None) -> cli.Options:
    """Turn command-line flags into ``Options``, with this program's launch time and stop."""
    return cli.parse_args(argv, launched_at=LAUNCHED_AT, stop=STOP)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code.

    With no ``argv`` this is the real command line, which takes over SIGINT and SIGTERM;
    in-process callers (tests) keep their own handlers.
    """
    if argv is None:
        STOP.install()
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
