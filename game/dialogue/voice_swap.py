"""Changing the model's voice while the game runs: the village adapter on or off.

The pause menu asks for it; the router brings the new model up beside the serving one
(``ai.swap``), and the serving model keeps writing lines until the new one has loaded,
passed a test line and warmed up. Then queued requests move over, the old model is
freed, and prompts are built in the new model's style from the same poll on.
"""

from __future__ import annotations

from dataclasses import replace

from ai import LineRequest, ModelConfig, ModelSwapped, SwapEvent, SwappableRuntime
from game.dialogue.line_source import LineAsk
from game.dialogue.persona_prompt import PromptStyle
from game.dialogue.request_builder import RequestBuilder
from game.sim.events import Trigger
from game.sim.world import World

_STYLES: tuple[tuple[str, PromptStyle], ...] = (("", "fewshot"), ("village", "village"))
"""Each prompt style a model may report, and the style prompts are then built in."""


class VoiceSwap:
    """The runtime that can change its model, the model it serves, and the adapter."""

    def __init__(self, runtime: SwappableRuntime, model: ModelConfig, village_adapter: str):
        self._runtime = runtime
        self.model = model
        self._adapter = village_adapter
        self._to: ModelConfig | None = None
        self._notices: list[str] = []

    def toggle(self, builder: RequestBuilder, world: World) -> str:
        """Bring up the model with the village adapter on if it is off, else off."""
        if self._to is not None:
            return "A model is still loading"
        on = not self.model.adapter
        self._to = replace(self.model, adapter=self._adapter if on else "")
        self._runtime.swap_model(self._to, _warm_ups(builder, world))
        return f"Loading the {'village voice' if on else 'base model'}; villagers talk on"

    def drain(self, builder: RequestBuilder) -> None:
        """After each poll: take in a swap that ended (the new style, a message)."""
        for event in self._runtime.swap_events():
            self._ended(event, builder)

    def take_notices(self) -> list[str]:
        """Messages for the player since the last call."""
        notices, self._notices = self._notices, []
        return notices

    def _ended(self, event: SwapEvent, builder: RequestBuilder) -> None:
        if isinstance(event, ModelSwapped):
            if self._to is not None:
                self.model = self._to
            builder.use_style("village" if event.prompt_style == "village" else "fewshot")
            voice = "the village voice" if self.model.adapter else "the base model"
            self._notices.append(f"Villagers now speak with {voice} ({event.seconds:.1f} s)")
        else:
            self._notices.append(f"Could not switch models: {event.reason}")
        self._to = None


def _warm_ups(builder: RequestBuilder, world: World) -> dict[str, LineRequest]:
    """A warm-up for each prompt style the new model may report, as the game's own is."""
    ask = LineAsk(world.tick, world.npc_ids()[0], Trigger.AMBIENT, None)
    current = builder.style
    out: dict[str, LineRequest] = {}
    for style, builder_style in _STYLES:
        builder.use_style(builder_style)
        out[style] = replace(builder.request(ask), signature="warm-up", max_tokens=1, plan=None)
    builder.use_style(current)
    return out
