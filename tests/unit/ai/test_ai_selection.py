"""Judging and choosing candidate lines, and the candidate loop on the worker."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from ai import (
    AiRuntime,
    CandidatePlan,
    FallbackUsed,
    GenerationParams,
    Handle,
    LineCompleted,
    LineCriteria,
    LineFailed,
    Priority,
    PromptSpec,
    RequestStarted,
    ScriptedBackend,
    TokenStreamed,
)
from ai.backend import StopCheck
from ai.candidates import PREEMPT_GRACE_TOKENS, leading_passes, unaddressed
from ai.hygiene import end_after, sentence_end
from ai.prompt import build_completion_prompt
from ai.requests import Exchange, PlanSource
from ai.selection import (
    claims_to_be,
    copies,
    echoes,
    jaccard,
    judge,
    mentions,
    names_in,
    normalized,
    pick,
    swaps_roles,
)
from tests.unit.ai.conftest import EventLog, fast_config, make_request

CRITERIA = LineCriteria(
    keywords=("crate", "ow", "watch it"),
    speaker_names=("Old Wen", "Wen"),
    absent_names=("Brann", "Pip"),
    examples=("Ow! My good arm!", "There go the market crates."),
    remembered=("Hello there, traveller.",),
    player_text="What do you sell?",
)


def test_mentions_matches_words_stems_and_phrases() -> None:
    assert mentions("Mind those crates!", ("crate",))
    assert mentions("Oi, watch it!", ("watch it",))
    assert not mentions("I watched it all", ("watch it",))
    assert not mentions("Owl feathers", ("ow",))  # short keywords match whole words only
    assert not mentions("Create something", ("crate",))


def test_names_are_whole_words_as_written() -> None:
    assert names_in("Ask Pip about it.", ("Pip", "Brann")) == ("Pip",)
    assert names_in("Pipe down.", ("Pip",)) == ()
    assert names_in("old wen is tired", ("Old Wen",)) == ()


@pytest.mark.parametrize(
    ("text", "passes"),
    [
        ("Good day! I'm Wen, and these old bones are glad of you.", True),
        ("Morning. I am Old Wen.", True),
        ("Call me Wen, child.", True),
        ("Wen is too old for this.", False),  # speaks of himself as of someone else
        ("Morning, Wen.", False),  # greets himself
        ("I'm Wen. Ask Wen anything.", False),  # one name said as an introduction only
    ],
)
def test_a_greeting_to_a_stranger_may_say_who_is_speaking(text: str, passes: bool) -> None:
    stranger = replace(CRITERIA, keywords=(), introduces=True)
    assert judge(text, stranger).passes is passes
    assert "self_name" in judge(text, replace(stranger, introduces=False)).faults


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("I'm the ball!", True),
        ("I am a crate.", True),
        ("I'm a big apple!", True),
        ("I\u2019m the ball, friend!", True),
        ("I'm selling apples!", False),
        ("I'm one apple short, friend.", False),
        ("Oof, okay, I'm fine. Barrels are heavy.", False),
        ("I'm the apple seller.", False),
        ("I'm a ball of nerves.", False),
        ("I'm by the ball.", False),
        ("Is that the ball?", False),
    ],
)
def test_a_speaker_who_says_they_are_a_thing_is_caught(text: str, claims: bool) -> None:
    things = ("crate", "barrel", "ball", "apple")
    assert claims_to_be(text, things) is claims
    assert ("is_thing" in judge(text, LineCriteria(things=things)).faults) is claims
    assert judge(text, LineCriteria()).passes  # only with the things named


def test_an_introduction_takes_the_trade_after_the_name_with_it() -> None:
    baker = LineCriteria(speaker_names=("Marta", "baker"), introduces=True)
    assert judge("Hello, love! I'm Marta, the baker.", baker).passes
    assert judge("I'm the baker, dear. Hungry?", baker).passes
    assert judge("Ah, the baker!", baker).faults == ("self_name",)
    farmer = LineCriteria(speaker_names=("Odo", "farmer"), introduces=True)
    assert judge("Hello, friend. I'm a farmer, friend.", farmer).passes
    assert judge("I'm a farmer.", replace(farmer, introduces=False)).faults == ("self_name",)


@pytest.mark.parametrize(
    ("text", "passes"),
    [
        ("Welcome to the guard's post, citizen.", True),
        ("Mind the guard\u2019s bench.", True),
        ("Welcome to Sela's watch, citizen.", False),  # her own name, as of someone else
        ("The guard is watching you.", False),
        ("Ask the guard.", False),
        ("Ah, the guard's here.", False),  # "the guard is", of herself
        ("The guard's not in.", False),
    ],
)
def test_a_place_of_the_speakers_trade_is_not_their_name(text: str, passes: bool) -> None:
    guard = LineCriteria(speaker_names=("Sela", "guard"))
    assert judge(text, guard).passes is passes


def test_a_line_written_by_hand_is_a_copy_only_word_for_word() -> None:
    criteria = replace(CRITERIA, written=frozenset({normalized("Good day, friend.")}))
    assert "copy" in judge("Good day, friend!", criteria).faults
    assert "copy" in judge("good day friend", criteria).faults
    assert "copy" not in judge("Good day, friend. Forge is hot.", criteria).faults
    assert "copy" not in judge("Good day to you, friend.", criteria).faults


def test_copy_and_echo() -> None:
    assert copies("ow, my good arm", CRITERIA.examples)
    assert copies("Ha! There go the market crates. Again!", CRITERIA.examples)
    assert not copies("Ow! My arm!", CRITERIA.examples)
    assert jaccard("What do you sell?", "what do you sell") == 1.0
    assert echoes("What do you sell, then?", (CRITERIA.player_text,))
    assert not echoes("Bread and honey cake.", (CRITERIA.player_text,))


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("", "empty"),
        ("Ow! My good arm!", "copy"),
        ("What do you sell?", "echo"),
        ("Hello there, traveller!", "echo"),
        ("Wen is too old for this.", "self_name"),
        ("Brann did it, I saw him.", "absent_name"),
        ("Marta: Ow, that crate!", "label"),
        ("Ow *rubs arm* that crate!", "label"),
    ],
)
def test_faults(text: str, fault: str) -> None:
    verdict = judge(text, CRITERIA)
    assert fault in verdict.faults
    assert not verdict.passes


def test_good_needs_topic_and_no_negative_contrast() -> None:
    assert judge("Ow, a crate!", CRITERIA).good
    assert not judge("Lovely weather.", CRITERIA).good
    assert not judge("Ow, a crate!", CRITERIA, contrast=-0.4).good
    assert judge("Lovely weather.", LineCriteria()).good  # nothing to mention


def test_pick_prefers_passing_then_topic_then_contrast() -> None:
    failing = judge("Ow! My good arm!", CRITERIA)  # on topic, but a copy
    plain = judge("Lovely weather today.", CRITERIA, contrast=1.0)
    topical = judge("Ow, that crate stung!", CRITERIA, contrast=0.1)
    likelier = judge("Watch it, a crate nearly flattened me!", CRITERIA, contrast=0.9)
    assert failing.score > plain.score
    assert pick([failing, plain]) is plain
    assert pick([failing, plain, topical, likelier]) is likelier
    assert pick([failing]) is None


def test_end_after_keeps_one_sentence_past_the_opener() -> None:
    assert end_after("Ow! My arm hurts. Lovely day.", 3) == "Ow! My arm hurts."
    assert end_after("Careful, that was close! Ha.", 8) == "Careful, that was close!"
    assert end_after("Ow! no end", 3) == "Ow! no end"


def test_the_players_words_go_in_once() -> None:
    spec = PromptSpec(
        "A village.",
        "Bess",
        "replying to the traveller",
        history=(Exchange("Bess", "Hi."), Exchange("Player", "What do you sell?")),
        player_text="What do you sell?",
    )
    prompt = build_completion_prompt(spec, spec.player_text)
    assert prompt.count("What do you sell?") == 1
    assert prompt.endswith('Player: "What do you sell?"\nBess (replying to the traveller): "')


def test_the_opener_ends_the_prompt() -> None:
    spec = PromptSpec("A village.", "Bess", "hit by a crate", opener="Ow!")
    assert build_completion_prompt(spec, "").endswith('Bess (hit by a crate): "Ow!')


# -- the candidate loop ------------------------------------------------------------------


def _plan(**kwargs: object) -> CandidatePlan:
    base: dict[str, object] = {
        "criteria": LineCriteria(keywords=("crate",), absent_names=("Brann",)),
        "openers": ("Brann?", "Oi,"),
        "count": 3,
        "settle": "first_good",
    }
    base.update(kwargs)
    return CandidatePlan(**base)  # type: ignore[arg-type]


def _script(prompt: PromptSpec) -> str:
    return "that crate nearly got me." if prompt.opener != "Brann?" else "the crate!"


def _run(
    make_runtime: Callable[..., AiRuntime],
    plan: PlanSource,
    script: object = _script,
    stream: bool = False,
) -> tuple[EventLog, ScriptedBackend]:
    """Run one request with ``plan``; not streamed unless asked, so that re-draws may follow
    a failed candidate (a streamed one that showed words is never re-drawn)."""
    backend = ScriptedBackend(fast_config().scripted, script)  # type: ignore[arg-type]
    runtime = make_runtime(fast_config(), backend)
    log = EventLog(runtime)
    request = make_request("c1", stream=stream)
    runtime.submit(replace(request, plan=plan))
    log.until(lambda: bool(log.of(LineCompleted) or log.of(FallbackUsed)))
    return log, backend


def test_a_plan_given_as_a_function_is_made_on_the_worker(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    made_on: list[threading.Thread] = []

    def source() -> CandidatePlan:
        made_on.append(threading.current_thread())
        return _plan()

    log, _ = _run(make_runtime, source)
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert done.text == "Oi, that crate nearly got me."  # the plan's checks applied
    assert len(made_on) == 1
    assert made_on[0] is not threading.main_thread()


def test_selection_skips_a_failing_candidate(make_runtime: Callable[..., AiRuntime]) -> None:
    log, backend = _run(make_runtime, _plan())
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    # The first candidate names an absent villager; the second is good and ends the draw.
    assert done.text == "Oi, that crate nearly got me."
    assert [v.faults for v in done.candidates] == [("absent_name",), ()]
    assert backend.generate_calls == 2


def test_best_of_draws_all_and_scores_contrast(make_runtime: Callable[..., AiRuntime]) -> None:
    log, backend = _run(make_runtime, _plan(settle="best", contrast=True, openers=("Oi,",)))
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert len(done.candidates) == 3
    assert all(v.contrast is not None for v in done.candidates)
    assert backend.generate_calls == 3


def test_no_passing_candidate_falls_back(make_runtime: Callable[..., AiRuntime]) -> None:
    log, _ = _run(make_runtime, _plan(openers=("Brann?",), count=2))
    (failed,) = log.of(LineFailed)
    assert isinstance(failed, LineFailed)
    assert failed.reason == "rejected"
    assert len(failed.candidates) == 2
    # The model wrote both: how long it took is kept, though nothing was shown.
    assert failed.stats is not None
    assert failed.stats.tokens > 0
    assert len(log.of(FallbackUsed)) == 1


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Hello, friend! I'm Pip!", "Hello, friend!"),
        ("Morning, dear. Good bread today. Brann says hello.", "Morning, dear. Good bread today."),
        ("Ow! Brann threw it.", None),  # what came before is too short to be a line
        ("Brann, hello. Good day.", None),  # the first sentence is at fault
        ("Pip is here.", None),  # one sentence: nothing to cut back to
    ],
)
def test_a_line_at_fault_only_in_its_last_sentences_keeps_its_first(
    text: str, kept: str | None
) -> None:
    criteria = LineCriteria(speaker_names=("Pip",), absent_names=("Brann",))
    verdict = leading_passes(text, criteria)
    assert (verdict.text if verdict is not None else None) == kept
    assert verdict is None or verdict.passes


def test_one_word_kept_of_a_line_must_name_its_moment() -> None:
    greeting = LineCriteria(speaker_names=("Pip",), must_mention=("hello", "hi"))
    kept = leading_passes("Hello! I'm Pip!", greeting)
    assert kept is not None
    assert kept.text == "Hello!"
    hit = LineCriteria(speaker_names=("Pip",), must_mention=("crate",))
    assert leading_passes("Ow! I'm Pip, the crate hit me!", hit) is None  # "Ow!" names no crate
    assert leading_passes("Hello! I'm Pip!", LineCriteria(speaker_names=("Pip",))) is None


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Morning, blacksmith.", "Morning."),
        ("Welcome, my blacksmith!", "Welcome!"),
        ("Good day, Brann.", "Good day."),
        ("Welcome to the forge, Brann.", "Welcome to the forge."),
        ("Good day, Brann. Pip threw it!", "Good day."),  # then cut back to what passes
        ("Brann, good day.", None),  # said first, the name is not a greeting's tail
        ("I'm the blacksmith.", None),  # the speaker naming themself, not the listener
        ("Morning, Brannigan.", None),  # not the speaker's name
        ("Morning, friend.", None),  # nothing to take out
    ],
)
def test_a_line_that_calls_the_listener_by_the_speakers_name_is_shown_without_it(
    text: str, kept: str | None
) -> None:
    criteria = LineCriteria(speaker_names=("Brann", "blacksmith"), absent_names=("Pip",))
    verdict = unaddressed(text, criteria)
    assert (verdict.text if verdict is not None else None) == kept
    assert verdict is None or verdict.passes


def test_a_greeting_that_calls_the_traveller_by_the_speakers_name_takes_one_draw(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    criteria = LineCriteria(speaker_names=("Brann", "blacksmith"))
    log, backend = _run(
        make_runtime, _plan(criteria=criteria, openers=(), count=2), lambda p: "Morning, Brann."
    )
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert done.text == "Morning."
    assert backend.generate_calls == 1


def test_a_candidate_cut_back_to_its_sound_sentences_is_shown_without_another_draw(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    log, backend = _run(
        make_runtime, _plan(openers=(), count=2), lambda p: "That crate, again. Brann threw it!"
    )
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert done.text == "That crate, again."
    assert backend.generate_calls == 1


def test_a_draw_after_a_failed_one_is_sampled_at_the_redraw_temperature(
    make_runtime: Callable[..., AiRuntime], monkeypatch: pytest.MonkeyPatch
) -> None:
    temperatures: list[float] = []
    generate = ScriptedBackend.generate

    def recording(
        self: ScriptedBackend, prompt: PromptSpec, params: GenerationParams, stop: StopCheck
    ) -> Iterator[str]:
        temperatures.append(params.temperature)
        return generate(self, prompt, params, stop)

    monkeypatch.setattr(ScriptedBackend, "generate", recording)
    # The first candidate names an absent villager, the second passes: two draws.
    plan = _plan(temperature=0.4, redraw_temperature=0.8, settle="first_pass")
    log, _ = _run(make_runtime, plan)
    assert log.of(LineCompleted)
    assert temperatures == [0.4, 0.8]
    temperatures.clear()
    _run(make_runtime, _plan(temperature=0.4, settle="first_pass"))
    assert temperatures == [0.4, 0.4]  # without one, every draw at the plan's


def test_a_spent_budget_stops_the_draw_once_a_line_passes(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    # Showable but off topic: with time left it would draw again for a better one.
    log, backend = _run(
        make_runtime, _plan(openers=("Oi,",), budget_s=0.001), lambda p: "lovely weather."
    )
    assert backend.generate_calls == 1
    assert log.of(LineCompleted)
    # Until a line passes, the budget does not stop the draw: the timeout does.
    log, backend = _run(make_runtime, _plan(openers=("Brann?",), budget_s=0.001))
    assert backend.generate_calls == 3
    assert log.of(LineFailed)


def test_waiting_work_of_the_same_class_stops_a_draw_that_has_a_line(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    backend = ScriptedBackend(fast_config(token_s=0.02).scripted, lambda p: "Oi, a crate here.")
    runtime = make_runtime(fast_config(token_s=0.02), backend)
    log = EventLog(runtime)
    first = runtime.submit(
        replace(make_request("a", npc_id=1, stream=False), plan=_plan(settle="best", openers=()))
    )
    log.until(lambda: runtime.in_flight == 1)
    runtime.submit(make_request("b", npc_id=2, priority=Priority.REACTIVE))
    log.until(lambda: len(log.of(LineCompleted)) == 2)
    done = log.of(LineCompleted, first)[0]
    assert isinstance(done, LineCompleted)
    assert len(done.candidates) == 1


def _drawing(
    make_runtime: Callable[..., AiRuntime], token_s: float, plan: CandidatePlan
) -> tuple[AiRuntime, EventLog, Handle]:
    """A runtime drawing one unstreamed request's candidates by ``plan``, begun."""
    config = fast_config(token_s=token_s)
    runtime = make_runtime(config, ScriptedBackend(config.scripted, _script))
    log = EventLog(runtime)
    handle = runtime.submit(replace(make_request("a", npc_id=1, stream=False), plan=plan))
    log.until(lambda: runtime.in_flight == 1)
    return runtime, log, handle


# A candidate takes about 0.4 s here: a second one would end past a 0.6 s start deadline
# of the waiting request, which has not passed yet when the first candidate ends.
@pytest.mark.parametrize(("waiting_deadline_s", "redrawn"), [(30.0, True), (0.6, False)])
def test_a_redraw_never_pushes_waiting_work_past_its_deadline(
    make_runtime: Callable[..., AiRuntime], waiting_deadline_s: float, redrawn: bool
) -> None:
    # The first candidate names an absent villager and cannot be shown.
    runtime, log, first = _drawing(make_runtime, 0.2, _plan(count=2))
    runtime.submit(make_request("b", npc_id=2, deadline_s=waiting_deadline_s))
    log.until(lambda: bool(log.of(LineCompleted, first) or log.of(LineFailed, first)))
    assert bool(log.of(LineCompleted, first)) is redrawn


@pytest.mark.parametrize(("others_wait", "draws"), [(False, 4), (True, 2)])
def test_draws_past_the_busy_count_wait_for_an_idle_worker(
    make_runtime: Callable[..., AiRuntime], others_wait: bool, draws: int
) -> None:
    # Every candidate names an absent villager: none can be shown.
    plan = _plan(openers=("Brann?",), count=4, busy_count=2)
    runtime, log, first = _drawing(make_runtime, 0.02, plan)
    if others_wait:
        runtime.submit(make_request("b", npc_id=2, deadline_s=30.0))
    log.until(lambda: bool(log.of(LineFailed, first)))
    (failed,) = log.of(LineFailed, first)
    assert isinstance(failed, LineFailed)
    assert len(failed.candidates) == draws


def test_a_line_that_names_another_prop_or_swaps_roles_is_not_shown() -> None:
    criteria = LineCriteria(foreign_words=("ball", "balls"), listener_acts=("bump", "throw"))
    assert judge("Oof, an apple! That's my ball now!", criteria).faults == ("foreign_word",)
    assert judge("Keep your balls to yourself.", criteria).faults == ("foreign_word",)
    assert judge("I'm gonna bump into you again, dear.", criteria).faults == ("role_swap",)
    assert judge("Oops, I bumped you!", criteria).faults == ("role_swap",)
    for fine in ("You bumped me!", "I saw you throw it.", "I got bumped, didn't I?", "An apple!"):
        assert judge(fine, criteria).passes, fine
    assert swaps_roles("We threw it back.", ("threw",))
    assert not swaps_roles("I threw it back.", ())


def test_sentence_end_waits_for_a_sentence_of_enough_words() -> None:
    assert sentence_end("Ow!", 3) is None
    assert sentence_end("Ow! An apple", 3) is None
    assert sentence_end("Ow! An apple!", 3) == len("Ow! An apple!")
    assert sentence_end("Oof, a ball. And then", 3) == len("Oof, a ball.")
    assert sentence_end("Go well, dear... I", 3) == len("Go well, dear...")


def test_a_candidate_ends_at_its_first_full_sentence_even_on_screen(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    plan = _plan(openers=(), count=1, criteria=LineCriteria(), sentence_words=3)
    log, _ = _run(
        make_runtime, plan, lambda _p: "Ow! That crate stung. Lovely day for it.", stream=True
    )
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert done.text == "Ow! That crate stung."
    streamed = [e.text_so_far for e in log.of(TokenStreamed) if isinstance(e, TokenStreamed)]
    assert streamed
    assert not any("Lovely" in text for text in streamed)


def test_sentence_end_can_wait_for_the_words_asked_about() -> None:
    def forge(text: str) -> bool:
        return "well" in text

    answer = "Ah, the forge? In the middle of the village, east of the well. Warm water."
    assert sentence_end(answer, 3) == len("Ah, the forge?")
    assert sentence_end(answer, 3, forge) == len(
        "Ah, the forge? In the middle of the village, east of the well."
    )
    assert sentence_end("Ah, the forge? Ask Brann.", 3, forge) is None


def test_an_answer_ends_at_the_first_sentence_that_names_what_was_asked(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    plan = _plan(
        openers=(),
        count=1,
        criteria=LineCriteria(keywords=("forge", "where")),
        sentence_words=3,
        answer_words=("middle", "village", "east", "well"),
    )
    # "The forge, dear?" names the topic, not the fact; the answer goes on to give it.
    answer = "The forge, dear? East of the well, mind. Warm water makes a forge."
    log, _ = _run(make_runtime, plan, lambda _p: answer, stream=True)
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert done.text == "The forge, dear? East of the well, mind."
    # With no fact asked for, the first full sentence is the answer.
    plan = replace(plan, answer_words=())
    log, _ = _run(make_runtime, plan, lambda _p: "A question? Ask away. I'm busy.", stream=True)
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert done.text == "A question? Ask away."


def test_a_streamed_candidate_that_showed_words_is_never_redrawn(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    # The first candidate names an absent villager, found only once its words are out.
    log, backend = _run(make_runtime, _plan(count=3), stream=True)
    (failed,) = log.of(LineFailed)
    assert isinstance(failed, LineFailed)
    assert failed.reason == "rejected"
    assert [v.faults for v in failed.candidates] == [("absent_name",)]
    assert backend.generate_calls == 1
    streamed = [e.text_so_far for e in log.of(TokenStreamed) if isinstance(e, TokenStreamed)]
    assert streamed[-1] == "Brann? the crate!"


def test_a_streamed_candidate_that_showed_nothing_is_redrawn(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    # The first candidate's opener is refused by the word list before it can show.
    def script(prompt: PromptSpec) -> str:
        return "the crate nearly got me." if prompt.opener == "Oi," else "that crate!"

    hygiene = replace(fast_config().hygiene, blocklist=("turnip",))
    config = replace(fast_config(), hygiene=hygiene)
    backend = ScriptedBackend(config.scripted, script)
    runtime = make_runtime(config, backend)
    log = EventLog(runtime)
    plan = _plan(openers=("Turnip!", "Oi,"), criteria=LineCriteria(keywords=("crate",)))
    runtime.submit(replace(make_request("c1"), plan=plan))
    log.until(lambda: bool(log.of(LineCompleted) or log.of(FallbackUsed)))

    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert done.text == "Oi, the crate nearly got me."
    assert [v.faults for v in done.candidates] == [("unfit",), ()]
    streamed = [e.text_so_far for e in log.of(TokenStreamed) if isinstance(e, TokenStreamed)]
    assert streamed
    assert all(text.startswith("Oi,") for text in streamed)


def test_a_stream_shows_no_more_sentences_than_the_finished_line_keeps(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    assert fast_config().hygiene.max_sentences == 2
    plan = _plan(openers=(), count=1, criteria=LineCriteria())
    reply = "Aye, it is. The well is deep. Cold too, mind."
    log, _ = _run(make_runtime, plan, lambda _p: reply, stream=True)
    (done,) = log.of(LineCompleted)
    assert isinstance(done, LineCompleted)
    assert done.text == "Aye, it is. The well is deep."
    streamed = [e.text_so_far for e in log.of(TokenStreamed) if isinstance(e, TokenStreamed)]
    assert streamed[-1] == done.text  # "Cold" never reached the screen to be taken back


@pytest.mark.parametrize(
    ("text", "fails"),
    [
        ("Throwing a ball at me?", True),
        ("First a ball, now elbows.", False),
        ("Balls and bumps!", False),
        ("Oof! Mind the anvil.", False),
    ],
)
def test_a_word_of_the_past_needs_a_word_of_now_beside_it(text: str, fails: bool) -> None:
    criteria = LineCriteria(past_only=("ball", "balls", "throwing"), now_words=("now", "bumps"))
    assert ("past_as_now" in judge(text, criteria).faults) is fails


class _Decoding(ScriptedBackend):
    """A scripted backend that tells when a reply's first word has been taken."""

    def __init__(self, token_s: float, script: Callable[[PromptSpec], str]) -> None:
        super().__init__(fast_config(token_s=token_s).scripted, script)
        self.first_word = threading.Event()

    def generate(
        self, prompt: PromptSpec, params: GenerationParams, should_stop: StopCheck
    ) -> Iterator[str]:
        for word in super().generate(prompt, params, should_stop):
            yield word
            self.first_word.set()


def _preempted_while_decoding(
    make_runtime: Callable[..., AiRuntime], script: Callable[[PromptSpec], str]
) -> tuple[AiRuntime, EventLog, Handle, Handle]:
    """An ambient line's candidate, preempted by a chat once its first word is out."""
    backend = _Decoding(0.03, script)
    runtime = make_runtime(fast_config(token_s=0.03), backend)
    log = EventLog(runtime)
    plan = _plan(openers=(), count=2, settle="first_pass", sentence_words=2)
    request = make_request("a", Priority.AMBIENT, npc_id=1, stream=False)
    ambient = runtime.submit(replace(request, plan=plan))
    assert backend.first_word.wait(5.0)
    chat = runtime.submit(make_request("c", Priority.PLAYER_CHAT, npc_id=2))
    log.until(lambda: len(log.of(LineCompleted)) == 2)
    return runtime, log, ambient, chat


def test_a_candidate_decoding_when_preempted_ends_its_line_and_is_not_run_again(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    runtime, log, ambient, chat = _preempted_while_decoding(
        make_runtime, lambda p: "A crate, right by the well. And more."
    )
    assert [e.handle for e in log.of(LineCompleted)] == [ambient, chat]
    (done,) = log.of(LineCompleted, ambient)
    assert isinstance(done, LineCompleted)
    assert done.text == "A crate, right by the well."
    assert [e.handle for e in log.of(RequestStarted)] == [ambient, chat]
    assert runtime.metrics().requeued == 0


def test_a_candidate_longer_than_the_grace_is_stopped_and_begun_again(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    line = "A crate fell by the well and rolled all the way down past the old mill to the river."
    assert len(line.split()) > PREEMPT_GRACE_TOKENS + 2
    runtime, log, ambient, chat = _preempted_while_decoding(make_runtime, lambda p: line)
    assert [e.handle for e in log.of(LineCompleted)] == [chat, ambient]
    starts = log.of(RequestStarted)
    assert [e.handle for e in starts] == [ambient, chat, ambient]
    # It wrote the grace's tokens, at 0.03 s each, before it stopped.
    assert isinstance(starts[-1], RequestStarted)
    assert starts[-1].preempted_s >= PREEMPT_GRACE_TOKENS * 0.03
    assert runtime.metrics().requeued == 1


def test_a_candidate_that_ends_past_a_preemption_but_fails_is_begun_again(
    make_runtime: Callable[..., AiRuntime],
) -> None:
    said: list[str] = []

    def script(prompt: PromptSpec) -> str:
        del prompt
        said.append("Brann dropped a crate." if not said else "A crate, right here.")
        return said[-1]

    runtime, log, ambient, chat = _preempted_while_decoding(make_runtime, script)
    assert [e.handle for e in log.of(LineCompleted)] == [chat, ambient]
    (done,) = log.of(LineCompleted, ambient)
    assert isinstance(done, LineCompleted)
    assert done.text == "A crate, right here."  # Brann is not there: the first line failed
    assert runtime.metrics().requeued == 1
    # The first line was written to its end (three words more at 0.03 s) and judged.
    again = log.of(RequestStarted, ambient)[-1]
    assert isinstance(again, RequestStarted)
    assert again.preempted_s >= 3 * 0.03
