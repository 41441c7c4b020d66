"""Live bodies as immutable views: the actors and props of a tick's snapshot, and the
statuses of villagers and the player that the dialogue and decisions ask for."""

from __future__ import annotations

from collections.abc import Sequence

from game.sim.player import PLAYER_H, PLAYER_W, Player
from game.sim.props import Prop
from game.sim.snapshot import ActorView, PropView
from game.sim.status import NpcStatus, PlayerStatus
from game.sim.villager import NPC_H, NPC_W, Villager

PLAYER_COLOR = (70, 170, 230)


def actor_views(player: Player, villagers: Sequence[Villager]) -> tuple[ActorView, ...]:
    """The player, then every villager, as they stand this tick."""
    return (player_view(player), *(villager_view(v) for v in villagers))


def player_view(player: Player) -> ActorView:
    """The player: walking, carrying or standing, and whether in the air."""
    pvx = player.body.velocity.x
    pstate = "carry" if player.carrying else ("walk" if abs(pvx) > 20 else "idle")
    if not player.grounded:
        pstate += "_air"
    return ActorView(
        player.id,
        "Player",
        "player",
        player.body.position.x,
        player.body.position.y,
        0.0,
        PLAYER_W,
        PLAYER_H,
        player.facing,
        pstate,
        True,
        PLAYER_COLOR,
        is_player=True,
    )


def villager_view(v: Villager) -> ActorView:
    """A villager: where, which way, in what state, doing what, and their mood."""
    return ActorView(
        v.id,
        v.spec.name,
        v.spec.role,
        v.x,
        v.y,
        v.angle,
        NPC_W,
        NPC_H,
        v.brain.facing,
        v.brain.state.value,
        v.brain.conscious,
        v.spec.color,
        aside=v.aside,
        action=v.brain.order.kind.value if v.brain.order is not None else "",
        attitude=v.brain.attitude,
    )


def prop_view(p: Prop) -> PropView:
    """A prop where it lies (or is held) this tick."""
    x, y = p.body.position
    k = p.kind
    return PropView(p.id, k.name, x, y, p.body.angle, k.shape, k.w, k.h, k.material, p.held)


def npc_status(v: Villager, tick: int) -> NpcStatus:
    """A villager's live status on ``tick``."""
    b = v.brain
    return NpcStatus(
        v.id,
        v.spec.name,
        v.spec.role,
        v.x,
        v.y,
        v.vx,
        v.vy,
        b.state.value,
        b.epoch,
        b.conscious,
        b.can_talk,
        v.persona_id,
        b.would_greet(tick),
        b.order.kind.value if b.order is not None else "",
    )


def player_status(player: Player) -> PlayerStatus:
    """The player's id, position, velocity and carried prop id."""
    body = player.body
    carrying = player.carrying.id if player.carrying is not None else None
    return PlayerStatus(
        player.id, body.position.x, body.position.y, body.velocity.x, body.velocity.y, carrying
    )
