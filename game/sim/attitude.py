"""How a villager feels about the traveller: an attitude from -2 (cross) to +2.

It changes with what happens (a hit, an errand done) and with what the villager decides
after a chat; it decides whether they oblige, and prompts say it in a word.
"""

from __future__ import annotations

ATTITUDE_MIN = -2
ATTITUDE_MAX = 2


def clamp_attitude(attitude: int) -> int:
    """Keep an attitude within its scale."""
    return max(ATTITUDE_MIN, min(ATTITUDE_MAX, attitude))


def attitude_word(attitude: int) -> str:
    """How prompts say an attitude: "friendly", "" (neutral), "wary" or "cross"."""
    if attitude >= 1:
        return "friendly"
    if attitude == 0:
        return ""
    return "wary" if attitude == -1 else "cross"
