"""Collision categories, masks and collision types shared by every body in the world."""

from __future__ import annotations

from enum import IntEnum

import pymunk

STATIC = 0b000001
PLAYER = 0b000010
NPC = 0b000100
PROP = 0b001000
SENSOR = 0b010000
HELD = 0b100000
"""A prop the player just let go of: it keeps hitting the world but passes through the player."""
NET = 0b1000000
"""Static netting that people stand on and props fall through (over the basket's mouth)."""
CARRIED = 0b10000000
"""A prop in the player's hands: as ``HELD``, and it also passes in front of (in depth) the
crates of the stack being rebuilt, so aiming a crate at the top knocks nothing off."""


class CollisionType(IntEnum):
    """Collision types that select the pymunk collision callbacks."""

    STATIC = 1
    PLAYER = 2
    NPC = 3
    PROP = 4
    ZONE = 5


STATIC_FILTER = pymunk.ShapeFilter(categories=STATIC, mask=PLAYER | NPC | PROP | HELD | CARRIED)
PLAYER_FILTER = pymunk.ShapeFilter(categories=PLAYER, mask=STATIC | NET | NPC | PROP)
PLAYER_GHOST_FILTER = pymunk.ShapeFilter(categories=PLAYER, mask=STATIC | NET | PROP)
"""The player briefly passes through villagers after bumping one, so nobody blocks the street."""
# Villagers pass each other as if in depth; a crowd that shoves itself jams the street.
NPC_FILTER = pymunk.ShapeFilter(categories=NPC, mask=STATIC | NET | PLAYER | PROP | HELD | CARRIED)
NPC_ASIDE_FILTER = pymunk.ShapeFilter(categories=NPC, mask=STATIC | NET | PROP)
"""A villager stepping aside (back, in depth) to let the player pass, or to get down from
their head: they pass the player and what the player carries."""
PROP_FILTER = pymunk.ShapeFilter(
    categories=PROP, mask=STATIC | PLAYER | NPC | PROP | HELD | CARRIED | SENSOR
)
STACKED_FILTER = pymunk.ShapeFilter(
    categories=PROP, mask=STATIC | PLAYER | NPC | PROP | HELD | SENSOR
)
"""A crate counting towards the stack being rebuilt: solid to all but a carried prop."""
CARRIED_FILTER = pymunk.ShapeFilter(categories=CARRIED, mask=STATIC | NPC | PROP | SENSOR)
HELD_FILTER = pymunk.ShapeFilter(categories=HELD, mask=STATIC | NPC | PROP | SENSOR)
INTO_FILTER = pymunk.ShapeFilter(categories=HELD, mask=STATIC | PROP | SENSOR)
"""A prop the player put down over a basket: it falls past people into it."""
NPC_HELD_FILTER = pymunk.ShapeFilter(categories=HELD, mask=SENSOR)
"""A prop a villager carries is in their hands: it passes through people, shelves and
other props (as villagers pass each other, in depth), and zones still see it."""
DROPPED_FILTER = pymunk.ShapeFilter(categories=PROP, mask=STATIC | PROP | HELD | CARRIED | SENSOR)
"""A prop a villager has just let go of: it falls past people (off their head, into the
basket) before it collides with them again."""
ZONE_FILTER = pymunk.ShapeFilter(categories=SENSOR, mask=PROP | HELD | CARRIED)
NET_FILTER = pymunk.ShapeFilter(categories=NET, mask=PLAYER | NPC)

SIGHT_FILTER = pymunk.ShapeFilter(mask=STATIC)
"""Line-of-sight queries see only static geometry (pymunk 7 queries include sensors)."""

FOOTING_FILTER = pymunk.ShapeFilter(mask=STATIC | NET | PROP | NPC)
"""What the player can stand on."""

GRAB_FILTER = pymunk.ShapeFilter(mask=PROP)
"""What the player can pick up."""

STACK_FILTER = pymunk.ShapeFilter(mask=PROP)
"""What a prop being set down can be squared up on."""

NPC_QUERY_FILTER = pymunk.ShapeFilter(mask=NPC)
"""Villager bodies only."""
