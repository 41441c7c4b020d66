"""A LoRA adapter and its manifest: which base model it was trained for, and its hash.

The adapter (a GGUF file) comes with ``<name>.json`` beside it, written by the training
tool. Before llama.cpp sees the adapter, :func:`check_adapter` holds it against the
manifest and the loaded model: a missing, truncated or foreign adapter is refused with
one sentence for the player, and the model runs without it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ai.model import sha256_file

MANIFEST_VERSION = 1
_HEX = frozenset("0123456789abcdef")


class AdapterRefusedError(Exception):
    """The adapter cannot be used; the message says why, for the player."""


@dataclass(frozen=True, slots=True)
class AdapterManifest:
    """What the training tool wrote about an adapter."""

    adapter_sha256: str
    base_sha256: str
    prompt_style: str


def manifest_path(adapter: Path) -> Path:
    """Where the manifest of ``adapter`` lives: the same name, ending in ``.json``."""
    return adapter.with_suffix(".json")


def read_manifest(adapter: Path) -> AdapterManifest:
    """The adapter's manifest; raise AdapterRefusedError when it is missing or malformed."""
    path = manifest_path(adapter)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AdapterRefusedError(f"{path.name} (the adapter's manifest) is missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AdapterRefusedError(f"{path.name} cannot be read: {exc}") from None
    if not isinstance(raw, dict) or raw.get("version") != MANIFEST_VERSION:
        raise AdapterRefusedError(f"{path.name} is not a version-{MANIFEST_VERSION} manifest")
    fields = {}
    for key in ("adapter_sha256", "base_sha256"):
        value = raw.get(key)
        if not isinstance(value, str) or len(value) != 64 or not set(value) <= _HEX:
            raise AdapterRefusedError(f"{path.name}: {key} must be 64 hex digits")
        fields[key] = value
    style = raw.get("prompt_style", "")
    if not isinstance(style, str):
        raise AdapterRefusedError(f"{path.name}: prompt_style must be a string")
    return AdapterManifest(fields["adapter_sha256"], fields["base_sha256"], style)


def check_adapter(adapter: Path, base_sha256: str) -> AdapterManifest:
    """Check ``adapter`` against its manifest and the base model's hash.

    Raises AdapterRefusedError with the reason: no file, no manifest, a file whose hash is
    not the manifest's (truncated or damaged), or one trained for another model.
    """
    if not adapter.is_file():
        raise AdapterRefusedError(f"{adapter} is missing")
    manifest = read_manifest(adapter)
    try:
        actual = sha256_file(adapter)
    except OSError as exc:
        raise AdapterRefusedError(f"{adapter.name} cannot be read: {exc}") from None
    if actual != manifest.adapter_sha256:
        raise AdapterRefusedError(
            f"{adapter.name} does not match its manifest (damaged or truncated?)"
        )
    if base_sha256 != manifest.base_sha256:
        raise AdapterRefusedError(
            f"{adapter.name} was trained for another base model "
            f"(sha256 {manifest.base_sha256[:12]}, this one {base_sha256[:12]})"
        )
    return manifest
