"""Read TOML tables into frozen dataclasses, checking every key and type once at start.

A mistake in a config file is a player's mistake, not a bug: it becomes a ``ConfigError``
whose message names the file, the key and the type that was expected, and the program
exits with that message instead of a traceback.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin

T = TypeVar("T")


class ConfigError(Exception):
    """A config file or override is wrong; the message is meant for the player."""


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file, turning a missing file or a syntax error into ConfigError."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except RecursionError:
        raise ConfigError(f"{path}: tables or lists nested too deeply") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror}") from None


def build(cls: type[T], table: dict[str, Any], source: str, prefix: str = "") -> T:
    """Build dataclass ``cls`` from ``table``; missing keys keep their defaults.

    ``source`` names the file in messages and ``prefix`` is the dotted path of the table.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    kwargs: dict[str, Any] = {}
    for key, value in table.items():
        if key not in fields:
            known = ", ".join(sorted(fields))
            raise ConfigError(f"{source}: unknown key '{prefix}{key}' (known keys: {known})")
        kwargs[key] = _convert(hints[key], value, source, f"{prefix}{key}")
    try:
        return cls(**kwargs)
    except ValueError as exc:
        raise ConfigError(f"{source}: {prefix.rstrip('.') or 'config'}: {exc}") from None


def apply_override(table: dict[str, Any], assignment: str) -> None:
    """Apply one ``section.key=value`` override (value in TOML syntax) to ``table`` in place.

    A bare word that is not valid TOML is taken as a string, so ``ai.backend=scripted``
    works without quotes.
    """
    path, sep, raw = assignment.partition("=")
    if not sep or not path.strip():
        raise ConfigError(f"--set {assignment!r}: expected section.key=value")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    except RecursionError:
        raise ConfigError(f"--set {assignment!r}: value nested too deeply") from None
    keys = [k.strip() for k in path.split(".")]
    node = table
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise ConfigError(f"--set {assignment!r}: '{key}' is not a table")
        node = child
    node[keys[-1]] = value


def _convert(hint: Any, value: Any, source: str, key: str) -> Any:
    origin = get_origin(hint)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if not isinstance(value, dict):
            _fail(source, key, "a table", value)
        return build(hint, value, source, f"{key}.")
    if origin is Literal:
        choices = get_args(hint)
        if value not in choices:
            _fail(source, key, "one of " + ", ".join(repr(c) for c in choices), value)
        return value
    if origin in (types.UnionType, typing.Union):
        options = get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _convert(option, value, source, key)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{source}: bad value for '{key}'")
    if origin is tuple:
        args = get_args(hint)
        if not isinstance(value, list):
            _fail(source, key, f"a list of {_name(args[0])}", value)
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(value)
        elif len(value) != len(args):
            _fail(source, key, f"a list of {len(args)} values", value)
        items = enumerate(zip(args, value, strict=True))
        return tuple(_convert(a, item, source, f"{key}[{i}]") for i, (a, item) in items)
    if hint is bool:
        if not isinstance(value, bool):
            _fail(source, key, "a boolean (true or false)", value)
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            _fail(source, key, "an integer", value)
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            _fail(source, key, "a number", value)
        if not math.isfinite(value):
            # inf would make a budget that never expires, nan one that never compares.
            _fail(source, key, "a finite number", value)
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            _fail(source, key, "a string", value)
        return value
    raise TypeError(f"unsupported config field type {hint!r} for '{key}'")


def _name(hint: Any) -> str:
    return {int: "integers", float: "numbers", str: "strings", bool: "booleans"}.get(
        hint, str(hint)
    )


def _fail(source: str, key: str, expected: str, value: Any) -> typing.NoReturn:
    raise ConfigError(f"{source}: '{key}' must be {expected}, got {value!r}")
