"""Changing the model's voice while the game runs: another GGUF, or the village adapter
on or off.

The pause menu asks for it, and so does an edit to ``ai.model`` in ``config/ai.toml``
(``game.config.live``); the router brings the new model up beside the serving one
(``ai.swap``), and the serving model keeps writing lines until the new one has loaded,
passed a test line and warmed up. Then queued requests move over, the old model is
freed, and prompts are built in the new model's style from the same poll on.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ai import LineRequest, ModelConfig, ModelSwapped, SwapEvent, SwappableRuntime
from ai.model import model_file, model_files
from ai.swap import model_label
from game.dialogue.line_source import LineAsk
from game.dialogue.persona_prompt import PromptStyle
from game.dialogue.request_builder import RequestBuilder
from game.sim.events import Trigger
from game.sim.world import World

_STYLES: tuple[tuple[str, PromptStyle], ...] = (("", "fewshot"), ("village", "village"))
"""Each prompt style a model may report, and the style prompts are then built in."""


class VoiceSwap:
    """The runtime that can change its model, the model it serves, and the adapter.

    ``village_adapter`` is the path of the game's own adapter ("" if none is shipped).
    """

    def __init__(self, runtime: SwappableRuntime, model: ModelConfig, village_adapter: str):
        self._runtime = runtime
        self.model = model
        self._adapter = village_adapter
        self._to: ModelConfig | None = None
        self._notices: list[str] = []

    def toggle(self, builder: RequestBuilder, world: World) -> str:
        """Bring up the model with the village adapter on if it is off, else off."""
        if not self._adapter:
            return "This game has no village voice to switch to"
        on = not self.model.adapter
        return self.use(replace(self.model, adapter=self._adapter if on else ""), builder, world)

    def choices(self) -> list[Path]:
        """The GGUF files in the models folder, the serving one among them."""
        return model_files(self.model)

    def serving(self, path: Path) -> bool:
        """Whether ``path`` is the GGUF the serving model was loaded from."""
        serving = model_file(self.model)
        return serving is not None and _same_file(serving, path)

    def use_file(self, path: Path, builder: RequestBuilder, world: World) -> str:
        """Bring up the GGUF at ``path``, the adapter kept as it is. The adapter is tied
        to its base model: on any other GGUF the backend leaves it out, with one log line."""
        return self.use(replace(self.model, model_path=str(path)), builder, world)

    def use(self, model: ModelConfig, builder: RequestBuilder, world: World) -> str:
        """Bring ``model`` up beside the serving one, which serves on until it is ready;
        what to tell the player."""
        if self._to is not None:
            return "A model is still loading"
        if _same_model(model, self.model):
            return f"Villagers already speak with {model_label(model)}"
        self._to = model
        self._runtime.swap_model(model, _warm_ups(builder, world))
        if model.model_path == self.model.model_path and model.adapter != self.model.adapter:
            voice = "village voice" if model.adapter else "base model"
            return f"Loading the {voice}; villagers talk on"
        return f"Loading {model_label(model)}; villagers talk on"

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


def _same_model(a: ModelConfig, b: ModelConfig) -> bool:
    """Whether loading ``a`` would give the model ``b`` loaded (the same file, same settings)."""
    file_a, file_b = model_file(a), model_file(b)
    same_file = a.model_path == b.model_path or (
        file_a is not None and file_b is not None and _same_file(file_a, file_b)
    )
    return same_file and replace(a, model_path="") == replace(b, model_path="")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return a == b


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
