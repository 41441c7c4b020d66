"""llama.cpp's OpenAI-compatible server with the packaged model, started by the tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ai import AiConfig
from ai.model import resolve_model_path
from tests.support.loopback import LlamaServer
from tests.unit.ai.conftest import RecordingFallback


@pytest.fixture
def fallback() -> RecordingFallback:
    return RecordingFallback()


@pytest.fixture(scope="session")
def model_file() -> Path:
    """The packaged Gemma 3 270M GGUF, assembled by ``python -m ai.model``."""
    return resolve_model_path(AiConfig().model)


@pytest.fixture(scope="session")
def llama_server(model_file: Path) -> Iterator[LlamaServer]:
    """One server for the whole session, on 127.0.0.1 at a free port."""
    server = LlamaServer(model_file)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def own_llama_server(model_file: Path) -> Iterator[LlamaServer]:
    """A server this test may kill and restart."""
    server = LlamaServer(model_file)
    server.start()
    yield server
    server.stop()
