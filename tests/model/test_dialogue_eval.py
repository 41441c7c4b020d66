"""A small slice of the dialogue evaluation on the packaged model, in CI.

It checks that the harness computes its figures through the game's own path, and that
candidate selection on the real model passes over a candidate that fails for one that
passes. The quality figures themselves live in bench/dialogue.json, not in assertions.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ai import (
    AiConfig,
    AiRuntime,
    CandidatePlan,
    GenerationParams,
    LineCompleted,
    LineCriteria,
    LineRequest,
    LlamaBackend,
    Priority,
)
from ai.candidates import neutral_prompt
from game.dialogue.memory import Memory
from game.dialogue.persona_prompt import Persona, build_prompt, shared_context
from game.sim.cast import load_cast
from game.sim.events import Trigger
from tools.eval.dialogue import main

pytestmark = pytest.mark.model


def test_a_slice_of_the_harness_computes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "dialogue.json"
    assert main(["--slice", "20", "--timed-chats", "1", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    (arm,) = report["arms"].values()
    lines = arm["lines"]
    assert report["situations"] == 20
    assert lines["lines"] == 20
    assert lines["model_lines"] >= 10
    for figure in ("mentions", "self_name", "absent_name", "copy", "echo", "exact_repeat"):
        assert 0.0 <= lines[figure] <= 1.0, figure
    assert lines["words_p50"] > 0
    assert arm["chat"]["questions"] >= 4
    assert arm["timing"]["reactions"]["count"] > 0
    assert arm["timing"]["chat_6_exchanges"]["count"] == 1
    # The reply's prompt read ahead while the player types: only the reply is left.
    ahead = arm["timing"]["chat_6_exchanges_read_ahead"]
    assert ahead["count"] == 1
    assert ahead["ttft_ms_p50"] < 0.5 * arm["timing"]["chat_6_exchanges"]["ttft_ms_p50"]
    assert "hit" in report["keywords"]
    assert out.with_suffix(".md").read_text().startswith("| setting |")


def test_selection_passes_over_a_failing_candidate() -> None:
    cast = load_cast()
    personas = [Persona(s.name, s.role, s.persona, s.lines, s.openers, s.facts) for s in cast.npcs]
    brann = personas[1]
    prompt = build_prompt(
        shared_context(personas), brann, Trigger.HIT, "traveller", Memory(), subject="crate"
    )
    # The first opener makes the line name its own speaker, which never passes. The
    # others are sampled, so one of them may fail too (ending at the opener, say): two
    # chances, and a fixed seed so a run can be repeated.
    plan = CandidatePlan(
        LineCriteria(keywords=("crate",), speaker_names=("Brann",)),
        openers=("I am Brann,", "Watch it,", "Watch it,"),
        count=3,
        settle="first_pass",
        contrast=True,
    )
    config = AiConfig()
    config = replace(config, generation=replace(config.generation, seed=5))
    runtime = AiRuntime(config, LlamaBackend(config), _NoFallback())
    runtime.start()
    try:
        end = time.monotonic() + 120
        while runtime.load_progress().state == "loading" and time.monotonic() < end:
            time.sleep(0.05)
        assert runtime.load_progress().state == "ready"
        request = LineRequest(2, Priority.REACTIVE, "sel", prompt, None, 30.0, 60.0, plan=plan)
        handle = runtime.submit(request)
        events = runtime.wait(handle, 60.0)
    finally:
        runtime.shutdown()
    (done,) = [e for e in events if isinstance(e, LineCompleted)]
    assert isinstance(done, LineCompleted)
    first, *others = done.candidates
    assert "self_name" in first.faults
    assert others[-1].passes  # drawing stopped at the first that passes
    assert done.text == others[-1].text
    assert done.text.startswith("Watch it,")


def test_the_contrast_favours_a_line_about_the_situation() -> None:
    cast = load_cast()
    personas = [Persona(s.name, s.role, s.persona, s.lines, s.openers, s.facts) for s in cast.npcs]
    prompt = build_prompt(
        shared_context(personas), personas[0], Trigger.HIT, "traveller", Memory(), subject="crate"
    )
    prompt = replace(prompt, opener="Ow!")
    neutral = neutral_prompt(prompt)
    backend = LlamaBackend(AiConfig())  # used from this one thread only
    backend.load(lambda fraction, stage: None)
    try:
        about = backend.contrast(prompt, neutral, " That crate nearly broke my arm!")
        other = backend.contrast(prompt, neutral, " The weather is lovely for baking.")
        assert about is not None
        assert other is not None
        assert about > other
        # The cache is still usable: a line generates after scoring.
        params = GenerationParams.from_config(AiConfig().generation, max_tokens=8)
        assert "".join(backend.generate(prompt, params, lambda: False)).startswith("Ow!")
    finally:
        backend.close()


class _NoFallback:
    def fallback_line(self, request: LineRequest) -> str:
        return "..."
