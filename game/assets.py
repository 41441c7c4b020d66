"""The one place that turns an asset name into a path."""

from __future__ import annotations

from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parent.parent / "assets"


class AssetError(Exception):
    """An asset file is missing or unreadable; the message is meant for the player."""


def asset_path(name: str | Path, root: Path = ASSETS_DIR) -> Path:
    """Return the path of asset ``name`` under ``root``, or raise AssetError if it is missing."""
    path = Path(name) if Path(name).is_absolute() else root / name
    if not path.is_file():
        raise AssetError(f"missing asset file: {path}")
    return path
