"""An adapter is used only when it is whole and made for the loaded model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ai.adapter import AdapterRefusedError, check_adapter

BASE = "a" * 64


def _adapter(tmp_path: Path, payload: bytes = b"GGUF adapter bytes", base: str = BASE) -> Path:
    path = tmp_path / "village-lora.gguf"
    path.write_bytes(payload)
    manifest = {
        "version": 1,
        "adapter_sha256": hashlib.sha256(payload).hexdigest(),
        "base_sha256": base,
        "prompt_style": "village",
    }
    path.with_suffix(".json").write_text(json.dumps(manifest))
    return path


def test_a_whole_adapter_for_this_model_passes(tmp_path: Path) -> None:
    manifest = check_adapter(_adapter(tmp_path), BASE)
    assert manifest.prompt_style == "village"


def test_a_missing_adapter_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AdapterRefusedError, match="missing"):
        check_adapter(tmp_path / "village-lora.gguf", BASE)


def test_a_missing_manifest_is_refused(tmp_path: Path) -> None:
    path = _adapter(tmp_path)
    path.with_suffix(".json").unlink()
    with pytest.raises(AdapterRefusedError, match="manifest\\) is missing"):
        check_adapter(path, BASE)


def test_a_truncated_adapter_is_refused(tmp_path: Path) -> None:
    path = _adapter(tmp_path)
    path.write_bytes(path.read_bytes()[:5])
    with pytest.raises(AdapterRefusedError, match="does not match its manifest"):
        check_adapter(path, BASE)


def test_an_adapter_for_another_model_is_refused(tmp_path: Path) -> None:
    path = _adapter(tmp_path, base="b" * 64)
    with pytest.raises(AdapterRefusedError, match="trained for another base model"):
        check_adapter(path, BASE)


@pytest.mark.parametrize("manifest", ["{", "[]", '{"version": 1, "adapter_sha256": "x"}'])
def test_a_malformed_manifest_is_refused(tmp_path: Path, manifest: str) -> None:
    path = _adapter(tmp_path)
    path.with_suffix(".json").write_text(manifest)
    with pytest.raises(AdapterRefusedError):
        check_adapter(path, BASE)
