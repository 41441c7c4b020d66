"""Level and cast loading: good data loads, bad data fails with a message that says where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from game.assets import AssetError
from game.sim.cast import Cast, load_cast
from game.sim.events import Trigger
from game.sim.level import Level, load_level

ASSETS = Path(__file__).resolve().parents[3] / "assets"


def test_default_level_has_at_least_sixty_props(level: Level) -> None:
    stacked = sum(s.count for s in level.stacks)
    assert len(level.props) + stacked >= 60
    kinds = {p.kind for p in level.props}
    assert {"apple", "crate", "barrel", "ball"} <= kinds
    assert level.width >= 3500
    assert any(p.tag == "roof_ball" for p in level.props)
    assert {z.id for z in level.zones} >= {"basket", "stack_zone"}
    assert len(level.errands) >= 3


def test_default_level_view_has_ground_and_houses(level: Level) -> None:
    view = level.view()
    assert view.width == level.width
    assert len(view.statics) > len(level.ground)
    assert any(d.kind == "house" for d in view.decor)


def test_default_cast_has_six_villagers_with_varied_lines(cast: Cast) -> None:
    assert len(cast.npcs) >= 6
    assert len({n.id for n in cast.npcs}) == len(cast.npcs)
    for spec in cast.npcs:
        assert spec.persona.count(".") >= 2
        for trigger in Trigger:
            lines = spec.lines_for(trigger)
            assert len(lines) >= 3, (spec.id, trigger)
            assert len(set(lines)) == len(lines)


def test_missing_level_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(AssetError, match="nowhere.json"):
        load_level(tmp_path / "nowhere.json")


def test_malformed_level_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json", encoding="utf-8")
    with pytest.raises(AssetError, match=r"bad\.json: not valid JSON"):
        load_level(bad)


def _level_data() -> dict[str, object]:
    data: dict[str, object] = json.loads((ASSETS / "levels" / "village.json").read_text())
    return data


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "level.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_level_missing_key_says_which(tmp_path: Path) -> None:
    data = _level_data()
    del data["width"]
    with pytest.raises(AssetError, match=r"level\.json at level: missing key 'width'"):
        load_level(_write(tmp_path, data))


def test_level_unknown_prop_kind_says_where(tmp_path: Path) -> None:
    data = _level_data()
    props = data["props"]
    assert isinstance(props, list)
    props[2] = {"kind": "anvil", "x": 1, "y": 2}
    with pytest.raises(AssetError, match=r"props\[2\]\.kind: unknown prop kind 'anvil'"):
        load_level(_write(tmp_path, data))


def test_level_bad_point_says_where(tmp_path: Path) -> None:
    data = _level_data()
    data["spawns"] = {"player": [1, "up"]}
    with pytest.raises(AssetError, match=r"spawns\.player: expected a point"):
        load_level(_write(tmp_path, data))


def test_level_errand_with_unknown_zone(tmp_path: Path) -> None:
    data = _level_data()
    errands = data["errands"]
    assert isinstance(errands, list)
    errands[0]["zone"] = "pond"
    with pytest.raises(AssetError, match=r"errands\[0\]\.zone: no zone called 'pond'"):
        load_level(_write(tmp_path, data))


def test_missing_cast_file(tmp_path: Path) -> None:
    with pytest.raises(AssetError, match="nobody.toml"):
        load_cast(tmp_path / "nobody.toml")


def _cast_text() -> str:
    return (ASSETS / "npcs" / "villagers.toml").read_text(encoding="utf-8")


def test_cast_missing_persona_names_villager_and_key(tmp_path: Path) -> None:
    text = _cast_text().replace('persona = "Brann', 'biography = "Brann', 1)
    path = tmp_path / "cast.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(
        AssetError, match=r"cast\.toml at villager 'blacksmith': missing key 'persona'"
    ):
        load_cast(path)


def test_cast_unknown_trigger_is_rejected(tmp_path: Path) -> None:
    text = _cast_text().replace("ambient = [", "gossip = [", 1)
    path = tmp_path / "cast.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AssetError, match=r"villager 'baker'\.lines\.gossip: unknown trigger"):
        load_cast(path)


def test_cast_too_few_lines(tmp_path: Path) -> None:
    text = _cast_text()
    start = text.index("chat = [", text.index('id = "guard"'))
    end = text.index("\n", start)
    text = text[:start] + 'chat = ["Report."]' + text[end:]
    path = tmp_path / "cast.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AssetError, match=r"villager 'guard'\.lines\.chat: needs at least 2 lines"):
        load_cast(path)


def test_cast_bad_toml(tmp_path: Path) -> None:
    path = tmp_path / "cast.toml"
    path.write_text("[[villager]\nid = ", encoding="utf-8")
    with pytest.raises(AssetError, match="not valid TOML"):
        load_cast(path)
