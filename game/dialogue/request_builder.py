"""Turning a villager's wish to speak into a model request: snapshot, prompt, priority.

Everything here reads the live world on the main thread and produces immutable data
that can cross to the AI worker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ai import LineRequest, Priority, SchedulerConfig
from game.dialogue.line_source import LineAsk
from game.dialogue.memory import Memories
from game.dialogue.persona_prompt import Persona, build_prompt
from game.dialogue.templates import TemplateLines
from game.dialogue.validation import Limits, LineSnapshot, RefSnapshot
from game.sim.events import Trigger
from game.sim.world import World

# Everything else is reactive. A farewell to someone already walking off matters less
# than the greeting prepared for the next villager they are about to meet.
_PRIORITY: dict[Trigger, Priority] = {
    Trigger.CHAT: Priority.PLAYER_CHAT,
    Trigger.AMBIENT: Priority.AMBIENT,
    Trigger.FAREWELL: Priority.AMBIENT,
}


@dataclass(frozen=True, slots=True)
class Timing:
    """Time limits, in ticks, for each kind of line."""

    hz: int = 60
    chat_ttl_s: float = 10.0
    reactive_ttl_s: float = 3.0
    ambient_ttl_s: float = 4.0
    prepared_ttl_s: float = 5.0

    def ttl_ticks(self, trigger: Trigger, predictive: bool) -> int:
        """How old a line may be, in ticks, when it appears."""
        if predictive:
            seconds = self.prepared_ttl_s
        elif trigger is Trigger.CHAT:
            seconds = self.chat_ttl_s
        elif trigger is Trigger.AMBIENT:
            seconds = self.ambient_ttl_s
        else:
            seconds = self.reactive_ttl_s
        return round(seconds * self.hz)


class TemplateFallback:
    """The runtime's fallback: the speaker's template line for the request's trigger."""

    def __init__(self, templates: TemplateLines) -> None:
        self._templates = templates

    def fallback_line(self, request: LineRequest) -> str:
        """A template line for the villager and trigger the request was for."""
        snapshot = request.snapshot
        trigger = snapshot.trigger if isinstance(snapshot, LineSnapshot) else Trigger.CHAT
        return self._templates.line(request.npc_id, trigger, "traveller")


class Asker:
    """Builds snapshots and requests for asks, from the live world and memory."""

    def __init__(
        self,
        world: World,
        personas: Mapping[int, Persona],
        context: str,
        memories: Memories,
        scheduler: SchedulerConfig,
    ) -> None:
        self.world = world
        self.personas = personas
        self._context = context
        self._memories = memories
        self._deadlines = _deadlines(scheduler)
        self._player_id = world.player_status().id
        self._errand_titles: dict[int, str] | None = None

    def snapshot(self, ask: LineAsk, predictive: bool) -> LineSnapshot:
        """The world as this ask sees it, to check the line against later."""
        world = self.world
        npc = world.npc(ask.npc_id)
        refs = []
        for ref_id in ask.refs:
            where = world.entity_position(ref_id)
            if where is not None:
                refs.append(RefSnapshot(ref_id, where[0], where[1]))
        distance = None if ask.listener_id is None else world.distance(ask.npc_id, ask.listener_id)
        return LineSnapshot(
            tick=ask.tick,
            npc_id=ask.npc_id,
            epoch=-1 if npc is None else npc.epoch,
            state="gone" if npc is None else npc.state,
            trigger=ask.trigger,
            listener_id=ask.listener_id,
            distance=distance,
            refs=tuple(refs),
            predictive=predictive,
        )

    def request(
        self, ask: LineAsk, snapshot: LineSnapshot, predictive: bool = False
    ) -> LineRequest:
        """The model request for an ask: grounded prompt, priority class and deadlines."""
        subject = errand = ""
        if ask.trigger in (Trigger.ERRAND_OFFER, Trigger.ERRAND_DONE):
            errand = self._errand_title(ask.npc_id)
        elif ask.refs:
            subject = self.world.entity_kind(ask.refs[0]) or ""
        prompt = build_prompt(
            self._context,
            self.personas[ask.npc_id],
            ask.trigger,
            self.listener_name(ask.listener_id),
            self._memories.of(ask.npc_id),
            subject=subject,
            errand=errand,
            player_text=ask.player_text,
        )
        priority = (
            Priority.PREDICTIVE if predictive else _PRIORITY.get(ask.trigger, Priority.REACTIVE)
        )
        deadline, timeout = self._deadlines[priority]
        signature = (
            f"{ask.npc_id}:{ask.trigger.value}:{ask.listener_id}:{ask.refs}:{ask.player_text}"
        )
        return LineRequest(ask.npc_id, priority, signature, prompt, snapshot, deadline, timeout)

    def listener_name(self, listener_id: int | None) -> str:
        """How a line's listener is named in prompts and templates."""
        if listener_id is None or listener_id == self._player_id:
            return "traveller"
        persona = self.personas.get(listener_id)
        return "a neighbour" if persona is None else persona.label

    def _errand_title(self, giver_id: int) -> str:
        if self._errand_titles is None:  # errands never change giver or title
            errands = self.world.snapshot().errands
            self._errand_titles = {e.giver_id: e.title for e in reversed(errands)}
        return self._errand_titles.get(giver_id, "")


def live_facts(world: World, snapshot: LineSnapshot, limits: Limits) -> dict[str, object]:
    """The raw facts a check reads at the tick a line appears, for the bubble log."""
    npc = world.npc(snapshot.npc_id)
    listener_distance = (
        None
        if snapshot.listener_id is None
        else world.distance(snapshot.npc_id, snapshot.listener_id)
    )
    return {
        "tick": world.tick,
        "epoch": None if npc is None else npc.epoch,
        "conscious": None if npc is None else npc.conscious,
        "can_talk": None if npc is None else npc.can_talk,
        "listener_distance": listener_distance,
        "refs": {str(r.id): world.entity_position(r.id) for r in snapshot.refs},
        "talk_radius": limits.talk_radius,
        "ttl_ticks": limits.ttl_ticks,
        "last_disruption_tick": limits.last_disruption_tick,
    }


def _deadlines(config: SchedulerConfig) -> dict[Priority, tuple[float, float]]:
    """The start deadline and whole-request timeout, in seconds, for each priority class."""
    return {
        Priority.PLAYER_CHAT: (config.deadline_player_chat_s, config.timeout_player_chat_s),
        Priority.REACTIVE: (config.deadline_reactive_s, config.timeout_reactive_s),
        Priority.PREDICTIVE: (config.deadline_predictive_s, config.timeout_predictive_s),
        Priority.AMBIENT: (config.deadline_ambient_s, config.timeout_ambient_s),
    }
