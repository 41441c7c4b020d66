"""Colours, in one place so the village reads as one picture."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

Rgb = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Material:
    """How a material looks: a fill, a darker outline and a detail colour (planks, hoops)."""

    fill: Rgb
    outline: Rgb
    detail: Rgb


MATERIALS: dict[str, Material] = {
    "grass": Material((112, 168, 76), (72, 120, 52), (136, 190, 92)),
    "ground": Material((112, 168, 76), (72, 120, 52), (136, 190, 92)),
    "dirt": Material((150, 112, 76), (104, 76, 52), (170, 132, 94)),
    "earth": Material((150, 112, 76), (104, 76, 52), (170, 132, 94)),
    "stone": Material((150, 148, 142), (98, 96, 92), (176, 174, 168)),
    "rock": Material((140, 136, 130), (92, 90, 86), (166, 162, 156)),
    "wood": Material((184, 134, 80), (118, 80, 44), (150, 104, 60)),
    "timber": Material((164, 116, 70), (104, 70, 40), (132, 92, 54)),
    "plaster": Material((238, 226, 200), (168, 152, 124), (214, 198, 170)),
    "metal": Material((146, 156, 168), (88, 96, 108), (196, 204, 214)),
    "rubber": Material((70, 130, 200), (40, 80, 140), (240, 240, 240)),
    "fruit": Material((206, 40, 44), (132, 22, 28), (250, 120, 110)),
    "cloth": Material((200, 70, 60), (130, 40, 36), (246, 240, 226)),
    "straw": Material((222, 190, 108), (160, 130, 62), (240, 214, 140)),
    "brick": Material((172, 84, 64), (116, 54, 42), (196, 112, 90)),
    "water": Material((90, 150, 210), (50, 100, 160), (150, 200, 240)),
    "oak": Material((150, 100, 58), (96, 62, 34), (122, 80, 46)),
    "leather": Material((196, 112, 52), (120, 64, 28), (246, 226, 190)),
    "apple": Material((206, 40, 44), (132, 22, 28), (250, 120, 110)),
    "thatch": Material((214, 178, 96), (150, 116, 54), (180, 144, 70)),
    "tile": Material((176, 72, 56), (112, 40, 32), (140, 52, 42)),
    "slate": Material((92, 100, 116), (56, 60, 72), (72, 78, 92)),
    "leaves": Material((88, 150, 72), (60, 110, 50), (112, 176, 90)),
    "net": Material((222, 200, 150), (150, 120, 76), (238, 222, 180)),
    "wicker": Material((196, 150, 86), (128, 92, 46), (164, 120, 62)),
}

#: Materials whose top surface is the ground: the earth beneath is filled down to the
#: level's bottom so slopes read as hills rather than floating ribbons.
GROUND_MATERIALS = frozenset({"grass", "ground", "dirt", "earth"})
EARTH = (126, 92, 62)
EARTH_DARK = (104, 76, 52)
PEBBLE = (150, 128, 104)

SKY_TOP = (120, 176, 228)
SKY_BOTTOM = (214, 234, 246)
HILLS_FAR = (164, 198, 176)
HILLS_NEAR = (132, 180, 120)

SKIN = (240, 200, 160)
SKIN_OUTLINE = (150, 108, 80)
INK = (34, 30, 36)
WHITE = (255, 255, 255)
PLAYER_HAT = (60, 64, 160)
PLAYER_MARKER = (255, 214, 64)

TAG_TEXT = (250, 248, 240)
TAG_BG = (30, 30, 40)
#: The name tag's edge by attitude: cross, wary, (neutral has none), friendly, fond.
ATTITUDE_EDGE = {-2: (214, 72, 60), -1: (226, 160, 60), 1: (120, 196, 110), 2: (90, 210, 120)}
EMOTE_BG = (250, 246, 232)
EMOTE_INK = (60, 52, 44)
ZONE_LINE = (255, 244, 180)

HUD_TEXT = (236, 236, 236)
HUD_DIM = (170, 172, 180)
HUD_PANEL = (18, 20, 28)
HUD_GOOD = (96, 220, 120)
HUD_WARN = (250, 196, 64)
HUD_BAD = (246, 82, 72)


def material(name: str) -> Material:
    """Look a material up; an unknown name gets a stable muted colour from its name's hash."""
    found = MATERIALS.get(name)
    if found is not None:
        return found
    # crc32, not hash(): str hashes are salted per process and colours should not change.
    h = zlib.crc32(name.encode("utf-8"))
    base = (120 + h % 90, 110 + (h >> 8) % 90, 100 + (h >> 16) % 90)
    return Material(base, darken(base, 0.65), lighten(base, 0.2))


def darken(color: Rgb, factor: float) -> Rgb:
    """Scale a colour toward black; ``factor`` 1 keeps it, 0 makes it black."""
    return (int(color[0] * factor), int(color[1] * factor), int(color[2] * factor))


def lighten(color: Rgb, amount: float) -> Rgb:
    """Blend a colour toward white by ``amount`` (0..1)."""
    return (
        int(color[0] + (255 - color[0]) * amount),
        int(color[1] + (255 - color[1]) * amount),
        int(color[2] + (255 - color[2]) * amount),
    )


def mix(a: Rgb, b: Rgb, t: float) -> Rgb:
    """Linear blend from ``a`` (t=0) to ``b`` (t=1)."""
    return (
        int(a[0] + (b[0] - a[0]) * t),
        int(a[1] + (b[1] - a[1]) * t),
        int(a[2] + (b[2] - a[2]) * t),
    )
