"""The seam between villagers who want to speak and whatever writes their words.

Every line request in the game goes through a ``LineSource``. Template lines implement it
with answers that are ready at once; the language-model source answers some ticks later,
streams chat replies, prepares greetings ahead and checks every line against the world.
Every call returns at once: nothing here ever waits (except the deliberately naive sync
mode of the model source, which exists to show what waiting costs). What the HUD and
the report read of a source is a separate, smaller protocol: ``SourceStatus``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from game.dialogue.templates import TemplateLines
from game.dialogue.validation import LineSnapshot
from game.headless.report import ModelReport
from game.sim.events import Trigger
from game.ui.views import LoadView

LineOrigin = Literal["template", "model", "prepared", "fallback", "refusal", "unfinished"]
"""Where a line's words came from; "unfinished" is a streamed reply that had to stop
after the player began to read it: its words so far, ended with an ellipsis."""


@dataclass(frozen=True, slots=True)
class LineAsk:
    """A request for one line: who speaks, why, to whom, and about what."""

    tick: int
    npc_id: int
    trigger: Trigger
    listener_id: int | None
    refs: tuple[int, ...] = ()
    player_text: str = ""


@dataclass(frozen=True, slots=True)
class LineReady:
    """A finished line for an earlier ask, checked against the world when it has a snapshot.

    ``live`` holds the raw facts the check read at the tick the line appears, so a log
    reader can verify the verdict independently. ``tier`` names the model tier that
    wrote a model line ("" for template and fallback lines), and ``request_id`` is the
    id the AI layer's logs know the request by.
    """

    ask: LineAsk
    text: str
    origin: LineOrigin
    snapshot: LineSnapshot | None = None
    live: dict[str, object] | None = None
    tier: str = ""
    request_id: int | None = None


@dataclass(frozen=True, slots=True)
class LinePartial:
    """A line still arriving: show ``text`` so far ("" means still thinking)."""

    npc_id: int
    text: str


@dataclass(frozen=True, slots=True)
class LineCut:
    """A reply stopped before any of its words showed, because the world moved on; take
    its "thinking" bubble down. (One stopped after its first words ends "unfinished".)"""

    npc_id: int
    reason: str


LineEvent = LineReady | LinePartial | LineCut


class LineSource(Protocol):
    """Anything that turns asks into lines, later. Every call must return at once."""

    def request(self, ask: LineAsk) -> None:
        """Ask for a line; the answer arrives through ``poll``."""

    def prepare(self, ask: LineAsk) -> None:
        """The player is still typing this chat ask: get ready to answer it fast.

        Nothing is shown and nothing is remembered; the ask may never be sent.
        """

    def poll(self, tick: int) -> list[LineEvent]:
        """Return what happened to earlier asks since the last poll."""

    def close(self) -> None:
        """Release threads and models."""


@dataclass(frozen=True)
class ModelChoice:
    """A GGUF in the models folder the player can switch to, and whether it serves now."""

    path: Path
    serving: bool


class SourceStatus(Protocol):
    """What the HUD, the headless report and the demo's F5 switch ask of a source."""

    @property
    def mode(self) -> str:
        """How lines are written now: "async", "sync" or "off"."""

    def toggle_mode(self) -> str:
        """Switch to the other mode, if there is one; return the mode now on."""

    def load_view(self) -> LoadView | None:
        """Progress of anything still loading, for the HUD."""

    def load_error(self) -> str | None:
        """Why the model could not load, or None (loading, loaded, or no model at all)."""

    def voices_loading(self) -> bool:
        """Whether the model that will write the villagers' lines is still loading or
        warming up: False once it serves, and when there is none or it failed to load."""

    def hud_stats(self) -> tuple[tuple[str, str], ...]:
        """Rows for the HUD's statistics panel."""

    def report(self) -> ModelReport | None:
        """The model's figures for the headless report's ``ai`` section; None without one."""

    def wait_ready(self, timeout_s: float) -> str:
        """Block until loaded or ``timeout_s`` passes; for headless runs, never in a tick."""

    def toggle_adapter(self) -> str:
        """Swap the village adapter on or off while the game runs; say what happens."""

    def model_choices(self) -> list[ModelChoice]:
        """The models in the models folder the game can switch to while it runs."""

    def use_model_file(self, path: Path) -> str:
        """Switch to the GGUF at ``path`` while the game runs; say what happens."""

    def take_notices(self) -> list[str]:
        """Messages for the player since the last call (a model swap done or refused)."""


class TemplateLineSource:
    """Answers every ask from the persona's template lines, ready on the next poll."""

    def __init__(self, templates: TemplateLines, listener_names: dict[int, str]) -> None:
        self._templates = templates
        self._names = listener_names
        self._ready: list[LineEvent] = []

    def request(self, ask: LineAsk) -> None:
        """Pick a template line now; it is handed out by the next ``poll``."""
        listener = self._names.get(ask.listener_id, "friend") if ask.listener_id else "friend"
        text = self._templates.line(ask.npc_id, ask.trigger, listener, ask.player_text)
        self._ready.append(LineReady(ask, text, "template"))

    def prepare(self, ask: LineAsk) -> None:
        """Template lines need no head start."""
        del ask

    def poll(self, tick: int) -> list[LineEvent]:
        """Hand out every line picked since the last poll."""
        ready, self._ready = self._ready, []
        return ready

    def close(self) -> None:
        """Nothing to release."""

    @property
    def mode(self) -> str:
        """Template lines only."""
        return "off"

    def toggle_mode(self) -> str:
        """There is no other mode without a model."""
        return self.mode

    def load_view(self) -> LoadView | None:
        """Nothing to load."""
        return None

    def load_error(self) -> str | None:
        """Nothing to load, so nothing failed."""
        return None

    def voices_loading(self) -> bool:
        """Template lines are ready from the first tick."""
        return False

    def hud_stats(self) -> tuple[tuple[str, str], ...]:
        """No model, no statistics."""
        return ()

    def toggle_adapter(self) -> str:
        """There is no model to swap."""
        return "The model is off: villagers speak from their templates"

    def model_choices(self) -> list[ModelChoice]:
        """No model, nothing to switch to."""
        return []

    def use_model_file(self, path: Path) -> str:
        """There is no model to swap."""
        del path
        return self.toggle_adapter()

    def take_notices(self) -> list[str]:
        """Nothing ever changes here."""
        return []

    def report(self) -> ModelReport | None:
        """No model, no figures."""
        return None

    def wait_ready(self, timeout_s: float) -> str:
        """Always ready."""
        return "off"
