"""A deterministic stand-in for the model, for tests and headless runs.

It streams scripted text word by word with configurable load time, time to
first token and time per token, and can be told to fail in the ways a real
model fails: raise, hang, emit garbage, or refuse to load.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from ai.backend import GenerationParams, ModelLoadError, ProgressCallback, StopCheck
from ai.config import ScriptedConfig
from ai.content.filter import ContentFilter
from ai.content.hidden import HiddenStates
from ai.prompt import build_completion_prompt
from ai.requests import PromptSpec
from ai.selection import words

logger = logging.getLogger(__name__)

# Sleeps are cut into slices so a cancel is noticed within one slice.
_SLICE_S = 0.005
_WORD = re.compile(r"\S+\s*")
_TEMPLATES = (
    "Well, {situation}? That is not something you see every day.",
    "{name} here. I saw it: {situation}.",
    "Hm. {situation}, you say? Best keep moving.",
    "By the old mill! {situation}!",
    "Not now, friend. {situation} is trouble enough.",
)


@dataclass(frozen=True, slots=True)
class ScriptedError:
    """Makes ``generate`` raise ``RuntimeError(message)`` after ``after_words`` words."""

    message: str = "scripted failure"
    after_words: int = 0


@dataclass(frozen=True, slots=True)
class ScriptedHang:
    """Makes ``generate`` stall for ``seconds`` (watching ``should_stop``) before any text."""

    seconds: float = 3600.0


ScriptedReply = str | ScriptedError | ScriptedHang
Script = Mapping[str, ScriptedReply] | Callable[[PromptSpec], ScriptedReply]
Chooser = Callable[[PromptSpec, Sequence[str]], tuple[float, ...] | None]
"""Scripted scores for :meth:`ScriptedBackend.choose`: a test decides what is chosen."""


def default_line(prompt: PromptSpec) -> str:
    """A deterministic line derived from the speaker and the situation."""
    name = prompt.speaker.split(" ")[0] if prompt.speaker else "Someone"
    situation = prompt.situation.strip().rstrip(".!?") or "all quiet"
    key = f"{prompt.speaker}|{prompt.situation}|{prompt.player_text}".encode()
    template = _TEMPLATES[zlib.crc32(key) % len(_TEMPLATES)]
    line = template.format(name=name, situation=situation)
    return line[0].upper() + line[1:]


class ScriptedBackend:
    """Backend that plays back scripted replies with realistic timing.

    ``script`` is a mapping looked up by situation, then by speaker, or a
    callable from :class:`PromptSpec` to a reply; anything unmatched gets
    :func:`default_line`. ``chooser`` scripts the scores of closed choices (decisions).
    ``load_error`` makes :meth:`load` raise. ``hidden`` stands in for the model's hidden
    states, which the content filter's semantic layer reads.
    """

    def __init__(
        self,
        timings: ScriptedConfig | None = None,
        script: Script | None = None,
        *,
        load_error: str | None = None,
        n_ctx: int = 2048,
        chooser: Chooser | None = None,
        prompt_style: str = "",
        hidden: HiddenStates | None = None,
    ) -> None:
        self._timings = timings if timings is not None else ScriptedConfig()
        self._script = script
        self._load_error = load_error
        self._calls_lock = threading.Lock()
        self._thread_ids: list[int] = []
        self.generate_calls = 0
        self.closed = False
        self._interrupted = threading.Event()
        self._n_ctx = n_ctx
        self._chooser = chooser
        self._style = prompt_style
        self._hidden = hidden
        self.choose_calls = 0

    @property
    def thread_ids(self) -> tuple[int, ...]:
        """Idents of the threads that called into this backend (for tests)."""
        with self._calls_lock:
            return tuple(dict.fromkeys(self._thread_ids))

    def _record_thread(self) -> None:
        with self._calls_lock:
            self._thread_ids.append(threading.get_ident())

    def load(self, progress: ProgressCallback) -> None:
        """Pretend to load for ``load_s``, reporting progress; fail if scripted to."""
        self._record_thread()
        steps = 4
        for step in range(steps):
            progress(step / steps, "loading scripted model")
            time.sleep(self._timings.load_s / steps)
        if self._load_error is not None:
            raise ModelLoadError(self._load_error)
        progress(1.0, "ready")

    def reply_for(self, prompt: PromptSpec) -> ScriptedReply:
        """The reply the script gives for ``prompt``."""
        script = self._script
        if script is None:
            return default_line(prompt)
        if callable(script):
            return script(prompt)
        for key in (prompt.situation, prompt.speaker):
            if key in script:
                return script[key]
        return default_line(prompt)

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        """Yield the scripted reply word by word, honouring ``should_stop`` per word."""
        self._record_thread()
        self.generate_calls += 1
        interrupted = self._interrupted.is_set
        asked_to_stop = should_stop

        def stopped() -> bool:
            return asked_to_stop() or interrupted()

        should_stop = stopped
        reply = self.reply_for(prompt)
        if isinstance(reply, str) and prompt.opener:
            reply = f"{prompt.opener} {reply}"
        if isinstance(reply, ScriptedHang):
            if not _sleep(reply.seconds, should_stop):
                return
            reply = default_line(prompt)
        failure: ScriptedError | None = None
        if isinstance(reply, ScriptedError):
            failure = reply
            if failure.after_words <= 0:
                raise RuntimeError(failure.message)
            reply = default_line(prompt)
        delay = self._timings.ttft_s
        for count, word in enumerate(_WORD.findall(reply)[: params.max_tokens]):
            if failure is not None and count == failure.after_words:
                raise RuntimeError(failure.message)
            if not _sleep(delay, should_stop):
                return
            delay = self._timings.token_s
            yield word

    def contrast(self, prompt: PromptSpec, neutral: PromptSpec, continuation: str) -> float | None:
        """Deterministic stand-in: words the line shares with the situation, less those
        it shares with the neutral prompt's situation, per word of the line."""
        self._record_thread()
        line = set(words(continuation))
        if not line:
            return None
        situated = set(words(f"{prompt.situation} {prompt.player_text}"))
        plain = set(words(f"{neutral.situation} {neutral.player_text}"))
        return (len(line & situated) - len(line & plain)) / len(line)

    def choose(self, prompt: PromptSpec, options: Sequence[str]) -> tuple[int, float] | None:
        """Deterministic stand-in for the model's choice: the best of the scripted
        chooser's scores, else of the words each option shares with the player's text
        (the earlier option wins a tie). Takes the scripted time of two output rows."""
        self._record_thread()
        self.choose_calls += 1
        if not _sleep(self._timings.ttft_s + self._timings.token_s * 2, _never):
            return None
        if self._chooser is not None:
            scores = self._chooser(prompt, options)
        else:
            said = set(words(prompt.player_text))
            scores = tuple(len(set(words(text)) & said) for text in options)
        if scores is None or not scores:
            return None
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        return best, float(scores[best])

    def meaning_reader(self, content: ContentFilter) -> HiddenStates | None:
        """The scripted stand-in for the model's hidden states, if one was given."""
        self._record_thread()
        del content
        return self._hidden

    def close(self) -> None:
        """Nothing native to free; remembered so tests can check it was called."""
        self.closed = True

    def prompt_room(self, prompt: PromptSpec) -> int:
        """Context left after ``prompt``, counting four characters to a token."""
        text = build_completion_prompt(prompt, prompt.player_text)
        return self._n_ctx - (len(text) // 4 + 1)

    @property
    def prompt_style(self) -> str:
        """The style it stands in for: "" (a base model) unless told "village"."""
        return self._style

    def interrupt(self) -> None:
        """Stop a scripted hang or reply at once, as llama.cpp's abort callback would."""
        self._interrupted.set()

    def resume(self) -> None:
        """Let the next reply run."""
        self._interrupted.clear()


def _never() -> bool:
    return False


def _sleep(seconds: float, should_stop: StopCheck) -> bool:
    """Sleep in slices; return False as soon as ``should_stop()`` is true."""
    end = time.perf_counter() + seconds
    while True:
        if should_stop():
            return False
        left = end - time.perf_counter()
        if left <= 0:
            return True
        time.sleep(min(_SLICE_S, left))
