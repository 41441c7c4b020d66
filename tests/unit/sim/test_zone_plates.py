"""Which zones the level view marks as holding a stack (their plate goes below them)."""

from __future__ import annotations

from game.sim.level import load_level


def test_only_the_stacks_zone_is_marked_stacked() -> None:
    view = load_level().view()
    stacked = {zone.id for zone in view.zones if zone.stacked}
    assert stacked == {"stack_zone"}
