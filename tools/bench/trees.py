"""Earlier commits to run beside this tree, so a change is measured against its base.

A benchmark that compares two versions of the code runs the game from each in turn, in
one sitting, so that machine noise hits both alike. :func:`checkout` gives the folder of
a commit's tree: a git worktree in the temporary folder, made once and reused.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def checkout(ref: str) -> Path:
    """A worktree of ``ref`` in the temporary folder (reused when it is already there).

    A ref git does not know ends the tool with one message."""
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", "--short", f"{ref}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        raise SystemExit(f"no commit {ref!r} to check out")
    commit = found.stdout.strip()
    where = Path(tempfile.gettempdir()) / f"zerostall-{commit}"
    if not where.exists():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(where), commit],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
    return where
