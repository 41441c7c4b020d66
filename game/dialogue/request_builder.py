"""Turning a villager's wish to speak into a model request: snapshot, prompt, priority.

Everything here reads the live world on the main thread and produces immutable data
that can cross to the AI worker.
"""

from __future__ import annotations

from collections.abc import Mapping

from ai import LineRequest, Priority, SchedulerConfig
from ai.selection import echoes
from game.dialogue.line_plan import LineAskParts, LinePlanner, priority_of
from game.dialogue.line_source import LineAsk
from game.dialogue.memory import Memories, Memory
from game.dialogue.persona_prompt import Persona, PromptStyle
from game.dialogue.validation import LineSnapshot, RefSnapshot
from game.sim.attitude import attitude_word
from game.sim.errands import Errand
from game.sim.events import Trigger
from game.sim.world import World


class RequestBuilder:
    """Builds snapshots and requests for asks, from the live world and memory."""

    def __init__(
        self,
        world: World,
        personas: Mapping[int, Persona],
        planner: LinePlanner,
        memories: Memories,
        scheduler: SchedulerConfig,
    ) -> None:
        self.world = world
        self.personas = personas
        self._planner = planner
        self._memories = memories
        # Looked up once per class here rather than per request.
        self._budgets = {priority: scheduler.budget(priority) for priority in Priority}
        self._player_id = world.player_status().id
        self._errand_titles: dict[int, str] | None = None
        self.built_tick = -1
        """The tick of the last request built: each costs the main thread a few tenths of
        a millisecond, so lines prepared ahead wait for a tick that built none."""

    def use_budgets(self, scheduler: SchedulerConfig) -> None:
        """Give the requests built from now on ``scheduler``'s deadlines and timeouts."""
        self._budgets = {priority: scheduler.budget(priority) for priority in Priority}

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

    def situation_key(self, npc_id: int, trigger: Trigger) -> tuple[object, ...]:
        """What a villager's ``trigger`` bark is written from besides the trigger: how
        they feel, their errand, the memories its prompt names. A line prepared under
        another key is out of date; a memory the prompt leaves out (a bump, in the
        village style) does not change it."""
        memory = self._memories.of(npc_id)
        facts = self._planner.bark_memories(memory.facts, trigger)
        return (attitude_word(memory.attitude), self._errand_state(npc_id), facts)

    def echoes_recent(self, npc_id: int, text: str) -> bool:
        """Whether ``text`` would repeat a line the villager said or heard lately."""
        return echoes(text, self._memories.of(npc_id).recent_lines)

    def reply_request(self, ask: LineAsk, player: str) -> LineRequest:
        """The request a chat ask will make once ``player`` has said its text.

        Built from a copy of the villager's memory with the line added, as the dialogue
        will remember it when it is sent, so the prompt comes out the same.
        """
        memory = self._memories.of(ask.npc_id).with_line(player, ask.player_text)
        return self.request(ask, memory=memory)

    def request(
        self,
        ask: LineAsk,
        predictive: bool = False,
        memory: Memory | None = None,
        priority: Priority | None = None,
    ) -> LineRequest:
        """The model request for an ask: snapshot, grounded prompt, priority and deadlines.

        ``priority`` replaces the class the trigger would give (and its budgets)."""
        self.built_tick = ask.tick
        snapshot = self.snapshot(ask, predictive)
        subject = errand = ""
        recall = ask.trigger is Trigger.CHAT and self._planner.recalls(ask.player_text)
        errand_line = (Trigger.ERRAND_OFFER, Trigger.ERRAND_DONE, Trigger.ERRAND_HINT)
        if ask.trigger in errand_line or recall:
            # An answer to "do you remember me?" may recall the errand by its words.
            errand = self._errand_title(ask.npc_id)
        elif ask.refs:
            subject = self.world.entity_kind(ask.refs[0]) or ""
        if priority is None:
            priority = priority_of(ask.trigger, predictive)
        if memory is None:
            memory = self._memories.of(ask.npc_id)
        parts = LineAskParts(
            ask.npc_id,
            ask.trigger,
            priority,
            self.listener_name(ask.listener_id),
            subject,
            errand,
            ask.player_text,
            attitude=attitude_word(memory.attitude),
            errand_state=self._errand_state(ask.npc_id),
            errand_id=self._errand_id(ask.npc_id) if errand else "",
        )
        prompt, plan = self._planner.build(parts, memory)
        deadline, timeout = self._budgets[priority]
        signature = (
            f"{ask.npc_id}:{ask.trigger.value}:{ask.listener_id}:{ask.refs}:{ask.player_text}"
        )
        return LineRequest(
            ask.npc_id,
            priority,
            signature,
            prompt,
            snapshot,
            deadline,
            timeout,
            # Only chat replies type into their bubble; other lines are validated whole,
            # and so is the answer to "do you remember me?": one that names nothing
            # remembered must give way to the template before any of its words show.
            stream=ask.trigger is Trigger.CHAT and not recall,
            plan=plan,
        )

    def deadline_s(self, priority: Priority) -> float:
        """The latest start after submit of a request of ``priority``."""
        return self._budgets[priority][0]

    def use_style(self, style: PromptStyle) -> None:
        """Build every later prompt in ``style`` (see :class:`LinePlanner`)."""
        self._planner.use_style(style)

    @property
    def style(self) -> PromptStyle:
        """The style prompts are built in now."""
        return self._planner.style

    def listener_name(self, listener_id: int | None) -> str:
        """How a line's listener is named in prompts and templates."""
        if listener_id is None or listener_id == self._player_id:
            return "traveller"
        persona = self.personas.get(listener_id)
        return "a neighbour" if persona is None else persona.label

    def _errand_of(self, giver_id: int) -> Errand | None:
        """The villager's own errand, if they give one."""
        return next((e for e in self.world.errands.errands if e.giver_id == giver_id), None)

    def _errand_state(self, giver_id: int) -> str:
        """Where the villager's own errand stands: "done", "asked" once under way, or ""."""
        errand = self._errand_of(giver_id)
        if errand is None:
            return ""
        return "done" if errand.done else "asked" if errand.progress > 0 else ""

    def _errand_id(self, giver_id: int) -> str:
        errand = self._errand_of(giver_id)
        return "" if errand is None else errand.spec.id

    def _errand_title(self, giver_id: int) -> str:
        if self._errand_titles is None:  # errands never change giver or title
            errands = self.world.snapshot().errands
            self._errand_titles = {e.giver_id: e.title for e in reversed(errands)}
        return self._errand_titles.get(giver_id, "")
