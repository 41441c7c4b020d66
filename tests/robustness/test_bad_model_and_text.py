"""Damaged models, over-long personas and hostile player text."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from ai import HygieneConfig
from ai import model as model_files
from ai.backend import ModelLoadError
from ai.config import ModelConfig
from ai.hygiene import is_garbage, sanitize_player_text
from ai.prompt import build_completion_prompt, fit_prompt
from ai.requests import Exchange, PromptSpec
from game.assets import ASSETS_DIR


@pytest.mark.parametrize(
    "text",
    ["DukeDukeDukeDukeDuke", "NANNANNANNANNAN", "Duke Duke Duke Duke Duke", "abcabcabcabcabc!"],
)
def test_repeated_fragments_are_garbage(text: str) -> None:
    assert is_garbage(text)


@pytest.mark.parametrize(
    "text",
    ["Hahaha, you fool!", "Well, well, well.", "No no no, not the crates!", "Good morning!"],
)
def test_real_lines_are_not_garbage(text: str) -> None:
    assert not is_garbage(text)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[31mred\x1b[0m alert", "red alert"),
        ("\x1b]0;title\x07hello", "hello"),
        ("nul\x00byte", "nul byte"),
        ("evil\u202etxt.exe", "eviltxt.exe"),
        ("zero\u200bwidth\u200d joiner\ufeff", "zerowidth joiner"),
        ("iso\u2066late\u2069d", "isolated"),
        ("  lots \t of\n\n  space\u3000here ", "lots of space here"),
        ('say "hi"', "say hi"),
        ("e\u0301\u0301\u0301\u0301\u0301", "e\u0301\u0301"),
    ],
)
def test_player_text_is_sanitised(raw: str, clean: str) -> None:
    assert sanitize_player_text(raw, 200) == clean


def test_player_text_is_capped_and_idempotent() -> None:
    text = sanitize_player_text("word " * 2000 + "\x1b[1m", 200)
    assert len(text) <= 200
    assert sanitize_player_text(text, 200) == text


def test_player_line_enters_the_prompt_once() -> None:
    said = "Where is the well?"
    spec = PromptSpec(
        "ctx", "Bess", "is spoken to", history=(Exchange("Player", said),), player_text=said
    )
    assert build_completion_prompt(spec, said).count(said) == 1


def test_fit_prompt_trims_oldest_history_then_notes() -> None:
    history = tuple(Exchange("Bess", f"line {i}") for i in range(6))
    spec = PromptSpec("ctx", "Bess", "x", notes=("note a", "note b"), history=history)

    def fits_when(history_left: int, notes_left: int):  # type: ignore[no-untyped-def]
        return lambda s: len(s.history) <= history_left and len(s.notes) <= notes_left

    trimmed = fit_prompt(spec, fits_when(2, 2))
    assert [t.text for t in trimmed.history] == ["line 4", "line 5"]
    assert trimmed.notes == spec.notes
    trimmed = fit_prompt(spec, fits_when(0, 1))
    assert trimmed.history == ()
    assert trimmed.notes == ("note b",)
    # Never fails: a prompt that cannot fit comes back as small as it gets.
    assert fit_prompt(spec, lambda s: False).history == ()


def test_hundred_kilobyte_persona_is_named_at_load(tmp_path: Path, run_game) -> None:
    cast = (ASSETS_DIR / "npcs" / "villagers.toml").read_text(encoding="utf-8")
    long_persona = "She talks. " * 10_000
    cast = cast.replace(
        'persona = "Brann is a gruff', f'persona = "{long_persona}Brann is a gruff', 1
    )
    path = tmp_path / "cast.toml"
    path.write_text(cast, encoding="utf-8")
    report = tmp_path / "report.json"
    outcome = run_game(
        "--ai",
        "async",
        "--backend",
        "scripted",
        "--report",
        str(report),
        "--set",
        f'game.world.cast="{path}"',
        "--log",
        "ERROR",
    )
    assert outcome.code == 0
    assert "Traceback" not in outcome.err
    assert "Brann" in outcome.err
    assert "shorten that persona" in outcome.err
    assert json.loads(report.read_text())["ai"]["load"] == "degraded"


def _gguf(tmp_path: Path, payload: bytes = b"weights" * 1000) -> tuple[Path, str]:
    path = tmp_path / "own.gguf"
    path.write_bytes(b"GGUF" + payload)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def test_model_sha256_pins_a_users_file(tmp_path: Path) -> None:
    path, sha = _gguf(tmp_path)
    config = ModelConfig(model_path=str(path), model_sha256=sha)
    assert model_files.resolve_model_path(config) == path
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelLoadError, match="does not match model_sha256"):
        model_files.resolve_model_path(config)


def test_stamp_rehashes_a_same_size_edit_with_restored_mtime_on_a_new_inode(
    tmp_path: Path,
) -> None:
    path, sha = _gguf(tmp_path)
    config = ModelConfig(model_path=str(path), model_sha256=sha, verify="stamp")
    model_files.resolve_model_path(config)
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[50] ^= 0xFF
    replacement = tmp_path / "new.gguf"
    replacement.write_bytes(bytes(data))
    os.utime(replacement, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(replacement, path)  # same size, same mtime, new inode
    with pytest.raises(ModelLoadError, match="does not match"):
        model_files.resolve_model_path(config)


def test_stamp_older_than_the_file_is_not_trusted(tmp_path: Path) -> None:
    path, sha = _gguf(tmp_path)
    config = ModelConfig(model_path=str(path), model_sha256=sha, verify="stamp")
    model_files.resolve_model_path(config)
    stamp = path.with_name(path.name + ".verified")
    data = bytearray(path.read_bytes())
    data[60] ^= 0xFF
    with path.open("r+b") as handle:  # in place: same inode and size
        handle.write(bytes(data))
    recorded = json.loads(stamp.read_text())
    os.utime(path, ns=(recorded["mtime_ns"] + 10**9, recorded["mtime_ns"] + 10**9))
    recorded["mtime_ns"] = path.stat().st_mtime_ns  # a forged stamp, older than the file
    stamp.write_text(json.dumps(recorded))
    os.utime(stamp, ns=(recorded["mtime_ns"] - 10**9, recorded["mtime_ns"] - 10**9))
    with pytest.raises(ModelLoadError, match="does not match"):
        model_files.resolve_model_path(config)


def test_bad_model_sha256_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="model_sha256"):
        ModelConfig(model_sha256="not-a-hash")


def test_hygiene_config_caps_player_text() -> None:
    assert HygieneConfig(player_text_max_chars=10).player_text_max_chars == 10


def test_leftover_part_files_are_removed_at_the_next_start(tmp_path: Path) -> None:
    parts = [b"GGUF" + b"a" * 1000, b"b" * 300]
    chunks = []
    for i, data in enumerate(parts):
        chunk = tmp_path / f"chunk{i}"
        chunk.write_bytes(data)
        chunks.append(chunk)
    sha = hashlib.sha256(b"".join(parts)).hexdigest()
    target = tmp_path / "models" / "m.gguf"
    target.parent.mkdir()
    dead = target.with_name(f"{target.name}.999999999.part")  # no such process
    dead.write_bytes(b"half a model")
    alive = target.with_name(f"{target.name}.{os.getppid()}.part")  # another start, unpacking
    alive.write_bytes(b"in progress")
    model_files.prepare_from_chunks(chunks, sha, target)
    assert not dead.exists()
    assert alive.exists()
    assert target.read_bytes() == b"".join(parts)
