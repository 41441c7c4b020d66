"""Shared fixtures for the simulation tests: the default level and cast, loaded once."""

from __future__ import annotations

import pytest

from game.sim.cast import Cast, load_cast
from game.sim.level import Level, load_level


@pytest.fixture(scope="session")
def level() -> Level:
    return load_level()


@pytest.fixture(scope="session")
def cast() -> Cast:
    return load_cast()
