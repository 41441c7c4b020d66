"""Every test run keeps its saves in a temporary folder, never in the user's data folder,
and property tests have no per-example deadline: on two busy cores a first example that
imports numpy took 265 ms against hypothesis's default 200 ms, and failed a run that was
right."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import settings

from game.persist.paths import DATA_DIR_ENV

settings.register_profile("zerostall", deadline=None)
settings.load_profile("zerostall")

_made_here: str | None = None
if DATA_DIR_ENV not in os.environ:
    _made_here = tempfile.mkdtemp(prefix="zerostall-test-data-")
    os.environ[DATA_DIR_ENV] = _made_here


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Remove the run's data folder, if this run made it."""
    del session, exitstatus
    if _made_here is not None:
        shutil.rmtree(_made_here, ignore_errors=True)
