"""Distances, durations and thresholds that every villager's brain runs on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Tuning:
    """Distances (world units), durations (ticks) and thresholds for every brain."""

    notice_radius: float = 320.0
    talk_radius: float = 140.0
    leave_radius: float = 230.0
    notice_delay: int = 12
    notice_timeout: int = 240
    notice_slack: float = 40.0
    renotice_ticks: int = 60
    greet_hold: int = 300
    greet_cooldown: int = 900
    offer_delay: int = 40
    react_ticks: int = 90
    flee_ticks: int = 180
    flee_impulse: float = 1800.0
    flee_repeat_hits: int = 2
    hit_memory: int = 300
    down_ticks: int = 120
    knockdown_tilt: float = 1.05
    knockdown_impulse: float = 2000.0
    upright_tilt: float = 0.1
    arrive_eps: float = 14.0
    personal_gap: float = 56.0
    """How near (middle to middle) a villager on their rounds comes to the player: a step
    short of touching, so the one whose spot the player stands on waits there."""
    personal_height: float = 40.0
    """The player counts as in the way only if no higher than this above the villager (not
    up on a roof, a crate or their head), nor twice as far below (a villager hopping over
    something on the way is still in the street)."""
    walk_speed: float = 80.0
    run_speed: float = 190.0
    ambient_gap: int = 1200
    ambient_jitter: int = 900


DEFAULT_TUNING = Tuning()
