"""The game's settings: frozen dataclasses loaded from ``config/*.toml`` once at start."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from ai.config import AiConfig
from game.assets import ASSETS_DIR
from game.config.loader import ConfigError, apply_override, build, read_toml

CONFIG_DIR = Path(__file__).resolve().parents[2] / "config"
#: ``ai.model.adapter = "village"`` names the adapter shipped with the game.
VILLAGE_ADAPTER = "village"
VILLAGE_ADAPTER_PATH = ASSETS_DIR / "models" / "village-lora.gguf"

AiMode = Literal["async", "sync", "off"]
Scenario = Literal["village", "ambush", "crowd"]
AdmissionMode = Literal["value", "queue"]


@dataclass(frozen=True, slots=True)
class LoopConfig:
    """Fixed-step loop settings. The step itself is fixed: see ``game.sim.ticks``."""

    max_frame_s: float = 0.25
    max_steps_per_frame: int = 5

    def __post_init__(self) -> None:
        if not 0.0 < self.max_frame_s <= 1.0:
            raise ValueError(f"max_frame_s must be in (0, 1], got {self.max_frame_s}")
        if not 1 <= self.max_steps_per_frame <= 30:
            raise ValueError(
                f"max_steps_per_frame must be between 1 and 30, got {self.max_steps_per_frame}"
            )


@dataclass(frozen=True, slots=True)
class WorldConfig:
    """Which level and villagers to load, and how to seed them."""

    seed: int = 7
    level: str = "levels/village.json"
    cast: str = "npcs/villagers.toml"
    extra_npcs: int = 0
    extra_props: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.extra_npcs <= 200:
            raise ValueError(f"extra_npcs must be between 0 and 200, got {self.extra_npcs}")
        if not 0 <= self.extra_props <= 2000:
            raise ValueError(f"extra_props must be between 0 and 2000, got {self.extra_props}")


@dataclass(frozen=True, slots=True)
class WindowConfig:
    """The desktop window."""

    width: int = 1280
    height: int = 720
    vsync: bool = True
    max_fps: int = 144
    fullscreen: bool = False

    def __post_init__(self) -> None:
        if self.width < 320 or self.height < 240:
            raise ValueError(f"window must be at least 320x240, got {self.width}x{self.height}")
        if not 0 <= self.max_fps <= 1000:
            raise ValueError(f"max_fps must be between 0 (no cap) and 1000, got {self.max_fps}")


@dataclass(frozen=True, slots=True)
class DialogueConfig:
    """How villagers' lines are requested, checked and shown."""

    ai_mode: AiMode = "async"
    bubble_s: float = 4.0
    chat_bubble_s: float = 7.0
    sync_wait_s: float = 5.0
    admission: AdmissionMode = "value"
    """"value": asks are judged by what their line is worth (game/dialogue/worth.py),
    greetings are never late; "queue": every ask is submitted and waited for, in
    priority order (the scheduler before value admission, kept for comparison)."""
    greet_ahead: bool = True
    """With value admission, the idle worker writes the greeting of the nearest villager
    in view ahead of any approach (game/dialogue/greetings.py)."""

    def __post_init__(self) -> None:
        if not 0.5 <= self.bubble_s <= 30.0:
            raise ValueError(f"bubble_s must be between 0.5 and 30, got {self.bubble_s}")
        if not 0.5 <= self.chat_bubble_s <= 60.0:
            raise ValueError(f"chat_bubble_s must be between 0.5 and 60, got {self.chat_bubble_s}")
        if not 0.1 <= self.sync_wait_s <= 60.0:
            raise ValueError(f"sync_wait_s must be between 0.1 and 60, got {self.sync_wait_s}")


@dataclass(frozen=True, slots=True)
class HeadlessConfig:
    """Defaults for runs without a window."""

    ticks: int = 600
    scenario: Scenario = "village"

    def __post_init__(self) -> None:
        if self.ticks < 1:
            raise ValueError(f"ticks must be at least 1, got {self.ticks}")


@dataclass(frozen=True, slots=True)
class SaveConfig:
    """Where and how often the game saves (window play; headless runs only with --save)."""

    enabled: bool = True
    path: str = ""
    interval_s: float = 10.0

    def __post_init__(self) -> None:
        if not 0.05 <= self.interval_s <= 3600.0:
            raise ValueError(f"interval_s must be between 0.05 and 3600, got {self.interval_s}")


@dataclass(frozen=True, slots=True)
class GameConfig:
    """All of the game's settings."""

    loop: LoopConfig = field(default_factory=LoopConfig)
    world: WorldConfig = field(default_factory=WorldConfig)
    window: WindowConfig = field(default_factory=WindowConfig)
    dialogue: DialogueConfig = field(default_factory=DialogueConfig)
    headless: HeadlessConfig = field(default_factory=HeadlessConfig)
    save: SaveConfig = field(default_factory=SaveConfig)


@dataclass(frozen=True, slots=True)
class Settings:
    """The game's and the AI runtime's settings, loaded together."""

    game: GameConfig
    ai: AiConfig


def load_settings(config_dir: Path = CONFIG_DIR, overrides: tuple[str, ...] = ()) -> Settings:
    """Load ``game.toml`` and ``ai.toml`` from ``config_dir`` and apply ``--set`` overrides.

    Overrides look like ``game.world.seed=3`` or ``ai.model.n_threads=2``. Raises ConfigError.
    """
    tables: dict[str, dict[str, Any]] = {
        "game": read_toml(config_dir / "game.toml"),
        "ai": read_toml(config_dir / "ai.toml"),
    }
    for assignment in overrides:
        head, _, rest = assignment.partition(".")
        if head not in tables or not rest:
            raise ConfigError(
                f"--set {assignment!r}: must start with 'game.' or 'ai.', e.g. game.world.seed=3"
            )
        apply_override(tables[head], rest)
    ai = build(AiConfig, tables["ai"], source=str(config_dir / "ai.toml"))
    if ai.model.adapter == VILLAGE_ADAPTER:
        ai = replace(ai, model=replace(ai.model, adapter=str(VILLAGE_ADAPTER_PATH)))
    return Settings(
        game=build(GameConfig, tables["game"], source=str(config_dir / "game.toml")),
        ai=ai,
    )
