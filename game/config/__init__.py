"""The settings: ``config/*.toml`` read into frozen dataclasses and checked once at start."""
