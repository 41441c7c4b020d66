"""Model file preparation: assembly, verification, damage recovery, clear errors."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from ai import ModelConfig, ModelLoadError
from ai import model as model_files


def _chunks(tmp_path: Path) -> tuple[list[Path], str]:
    parts = [b"GGUF" + b"a" * 1000, b"b" * 3000, b"c" * 17]
    paths = []
    for i, data in enumerate(parts):
        path = tmp_path / f"part{i}"
        path.write_bytes(data)
        paths.append(path)
    return paths, hashlib.sha256(b"".join(parts)).hexdigest()


def test_assembles_verifies_and_reuses(tmp_path: Path) -> None:
    chunks, sha = _chunks(tmp_path)
    target = tmp_path / "models" / "m.gguf"
    seen: list[tuple[float, str]] = []
    path = model_files.prepare_from_chunks(
        chunks, sha, target, "always", lambda f, s: seen.append((f, s))
    )
    assert path == target
    assert hashlib.sha256(target.read_bytes()).hexdigest() == sha
    assert seen[-1][0] == 1.0
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)
    assert not list(target.parent.glob("*.part"))
    mtime = target.stat().st_mtime_ns
    assert model_files.prepare_from_chunks(chunks, sha, target) == target
    assert target.stat().st_mtime_ns == mtime


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_damaged_copy_is_rebuilt(tmp_path: Path, damage: str) -> None:
    chunks, sha = _chunks(tmp_path)
    target = tmp_path / "m.gguf"
    model_files.prepare_from_chunks(chunks, sha, target)
    data = bytearray(target.read_bytes())
    if damage == "truncate":
        del data[-10:]
    else:
        data[2000] ^= 0xFF
    target.write_bytes(bytes(data))
    model_files.prepare_from_chunks(chunks, sha, target, "always")
    assert hashlib.sha256(target.read_bytes()).hexdigest() == sha


def test_stamp_mode_skips_hash_but_checks_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks, sha = _chunks(tmp_path)
    target = tmp_path / "m.gguf"
    model_files.prepare_from_chunks(chunks, sha, target, "stamp")
    calls: list[Path] = []
    real = model_files.sha256_file
    monkeypatch.setattr(model_files, "sha256_file", lambda p, *a: calls.append(p) or real(p, *a))
    model_files.prepare_from_chunks(chunks, sha, target, "stamp")
    assert calls == []
    with target.open("ab") as handle:
        handle.write(b"x")
    model_files.prepare_from_chunks(chunks, sha, target, "stamp")
    assert hashlib.sha256(target.read_bytes()).hexdigest() == sha


def test_corrupt_chunks_give_clear_error(tmp_path: Path) -> None:
    chunks, _ = _chunks(tmp_path)
    target = tmp_path / "m.gguf"
    with pytest.raises(ModelLoadError, match="corrupt"):
        model_files.prepare_from_chunks(chunks, "0" * 64, target)
    assert not target.exists()
    with pytest.raises(ModelLoadError, match="missing"):
        model_files.prepare_from_chunks([tmp_path / "nope"], "0" * 64, target)


def test_explicit_path_checks(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="not found"):
        model_files.resolve_model_path(ModelConfig(model_path=str(tmp_path / "x.gguf")))
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"\x00" * 100)
    with pytest.raises(ModelLoadError, match="bad magic"):
        model_files.resolve_model_path(ModelConfig(model_path=str(junk)))
    good = tmp_path / "ok.gguf"
    good.write_bytes(b"GGUF....")
    assert model_files.resolve_model_path(ModelConfig(model_path=str(good))) == good


def test_model_dir_resolution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(model_files.MODEL_DIR_ENV, str(tmp_path / "env"))
    assert model_files.default_model_dir(ModelConfig()) == tmp_path / "env"
    explicit = ModelConfig(model_dir=str(tmp_path / "cfg"))
    assert model_files.default_model_dir(explicit) == tmp_path / "cfg"
    monkeypatch.delenv(model_files.MODEL_DIR_ENV)
    assert model_files.default_model_dir(ModelConfig()).parts[-3:] == (
        ".cache",
        "zerostall",
        "models",
    )


def test_main_reports_failure_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(model_files.MODEL_DIR_ENV, str(blocker / "sub"))
    assert model_files.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert err.count("\n") == 1
    assert os.fspath(blocker) in err
