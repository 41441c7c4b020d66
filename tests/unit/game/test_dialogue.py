"""Template lines, the bubble board and the line-source seam."""

from __future__ import annotations

from game.dialogue.bubble_board import BubbleBoard
from game.dialogue.line_source import LineAsk, LineCut, LineEvent, TemplateLineSource
from game.dialogue.speech import Dialogue
from game.dialogue.templates import TemplateLines
from game.sim.cast import load_cast
from game.sim.events import SpeechWanted, Trigger


def make_templates(seed: int = 1) -> TemplateLines:
    lines = {7: {Trigger.GREET: ("Hi {player}!", "Morning.", "Well met."), Trigger.HIT: ("Ow!",)}}
    return TemplateLines(lines, {7: "Bess"}, seed=seed)


def test_template_lines_cycle_without_repeating_back_to_back() -> None:
    templates = make_templates()
    picks = [templates.line(7, Trigger.GREET, "traveller") for _ in range(30)]
    assert all(a != b for a, b in zip(picks, picks[1:], strict=False))
    assert set(picks) == {"Hi traveller!", "Morning.", "Well met."}


def test_a_wary_villager_greets_and_says_goodbye_coldly() -> None:
    lines = {7: {Trigger.GREET: ("Morning!",), Trigger.HIT: ("Ow!",)}}
    cold = {7: {Trigger.GREET: ("Oh. You.",), Trigger.FAREWELL: ("Go, then.",)}}
    attitude = {7: 0}
    templates = TemplateLines(lines, {7: "Bess"}, 1, cold, lambda npc: attitude[npc])
    assert templates.line(7, Trigger.GREET) == "Morning!"
    attitude[7] = -1
    assert templates.line(7, Trigger.GREET) == "Oh. You."
    assert templates.line(7, Trigger.FAREWELL) == "Go, then."
    assert templates.line(7, Trigger.HIT) == "Ow!"  # no cold lines for it
    attitude[7] = 1
    assert templates.line(7, Trigger.GREET) == "Morning!"


def test_every_villager_has_cold_greetings_and_farewells() -> None:
    for spec in load_cast().npcs:
        assert set(spec.cold_lines) == {Trigger.GREET, Trigger.FAREWELL}, spec.id
        assert not set(spec.cold_lines[Trigger.GREET]) & set(spec.lines[Trigger.GREET])


def test_template_lines_fall_back_to_generic_lines() -> None:
    templates = make_templates()
    assert templates.line(7, Trigger.FAREWELL)
    assert templates.line(99, Trigger.GREET)


def test_template_lines_are_deterministic_per_seed() -> None:
    a, b = make_templates(3), make_templates(3)
    assert [a.line(7, Trigger.GREET) for _ in range(9)] == [
        b.line(7, Trigger.GREET) for _ in range(9)
    ]


def test_bubbles_fade_and_expire_by_ticks() -> None:
    board = BubbleBoard()
    board.show(7, "Hello", tick=10, ttl_ticks=60, kind="line")
    assert board.views(10)[0].alpha == 1.0
    assert 0.0 < board.views(60)[0].alpha < 1.0
    board.expire(69)
    assert len(board) == 1
    board.expire(70)
    assert len(board) == 0


def test_streaming_bubble_waits_for_its_end() -> None:
    board = BubbleBoard()
    board.stream(7, "Hel", tick=0, ttl_ticks=10, kind="chat")
    board.expire(100)
    assert board.text_of(7) == "Hel"
    board.stream(7, "Hello the", tick=101, ttl_ticks=10, kind="chat")
    board.finish(7, "Hello there.", tick=102)
    assert not board.is_streaming(7)
    board.expire(111)
    assert board.text_of(7) == "Hello there."
    board.expire(112)
    assert board.text_of(7) is None


def test_every_wish_to_speak_goes_through_the_line_source() -> None:
    source = TemplateLineSource(make_templates(), {1: "traveller"})
    dialogue = Dialogue(source, {7: "Bess"}, bubble_ticks=60, chat_bubble_ticks=120)
    dialogue.handle_events(5, [SpeechWanted(5, 7, Trigger.HIT, 1, (42,))])
    assert dialogue.asked["hit"] == 1
    dialogue.update(5)
    (bubble,) = dialogue.bubbles(5)
    assert (bubble.speaker_id, bubble.text) == (7, "Ow!")
    dialogue.say(6, 7, 1, "hello")
    dialogue.update(6)
    assert dialogue.bubbles(6)[0].kind == "chat"


def test_only_shown_lines_are_remembered() -> None:
    source = TemplateLineSource(make_templates(), {1: "traveller"})
    dialogue = Dialogue(source, {7: "Bess"}, bubble_ticks=60, chat_bubble_ticks=120)
    dialogue.ask(LineAsk(5, 7, Trigger.HIT, 1))
    assert dialogue.memories.of(7).exchanges == ()  # asked, not yet shown
    dialogue.update(5)
    assert [e.text for e in dialogue.memories.of(7).exchanges] == ["Ow!"]


class AskRecorder(TemplateLineSource):
    """Template lines that also keep every ask they were given."""

    def __init__(self) -> None:
        super().__init__(make_templates(), {1: "traveller"})
        self.asks: list[LineAsk] = []

    def request(self, ask: LineAsk) -> None:
        self.asks.append(ask)
        super().request(ask)


def test_player_text_is_cleaned_and_capped_where_it_enters_the_game() -> None:
    source = AskRecorder()
    dialogue = Dialogue(
        source, {7: "Bess"}, bubble_ticks=60, chat_bubble_ticks=120, player_text_max_chars=20
    )
    typed = "What\u202e do\u200b you\x00 sell,   Bess? " + "x" * 50
    kept = dialogue.say(6, 7, 1, typed)

    assert kept == "What do you sell,"
    assert [ask.player_text for ask in source.asks] == [kept]
    assert dialogue.memories.of(7).exchanges[-1].text == kept


def test_player_text_with_nothing_left_asks_nothing() -> None:
    source = AskRecorder()
    dialogue = Dialogue(source, {7: "Bess"}, bubble_ticks=60, chat_bubble_ticks=120)
    assert dialogue.say(6, 7, 1, " \x00\u200b\t ") == ""
    assert source.asks == []
    assert dialogue.memories.of(7).exchanges == ()


def test_a_villager_remembers_what_the_traveller_asked_about_once_the_reply_shows() -> None:
    from game.app import build_village
    from game.config.settings import load_settings

    settings = load_settings(overrides=("ai.model.backend=scripted", "game.dialogue.ai_mode=off"))
    village = build_village(settings)
    world, dialogue = village.world, village.dialogue
    baker = next(i for i in world.npc_ids() if world.npc_spec(i).id == "baker")  # type: ignore[union-attr]
    player = world.player_status().id
    dialogue.say(0, baker, player, "How much is your bread?")
    assert dialogue.memories.of(baker).facts == ()
    for tick in range(1, 5):
        dialogue.update(tick)
    assert dialogue.memories.of(baker).facts == ("the traveller asked them about bread",)


class CuttingSource(TemplateLineSource):
    """Answers nothing: every chat reply is cut, as when the world moved on mid-reply."""

    def __init__(self) -> None:
        super().__init__(make_templates(), {1: "traveller"})
        self.cut: list[int] = []

    def request(self, ask: LineAsk) -> None:
        self.cut.append(ask.npc_id)

    def poll(self, tick: int) -> list[LineEvent]:
        cut, self.cut = self.cut, []
        return [LineCut(npc_id, "stale") for npc_id in cut]


def test_the_villager_decides_once_the_reply_is_over_shown_or_cut() -> None:
    heard: list[tuple[int, int, str]] = []
    dialogue = Dialogue(
        CuttingSource(),
        {7: "Bess"},
        bubble_ticks=60,
        chat_bubble_ticks=120,
        on_reply=lambda tick, npc, text: heard.append((tick, npc, text)),
    )
    dialogue.say(5, 7, 1, "Could you bring me an apple?")
    assert heard == []
    dialogue.update(6)
    assert heard == [(6, 7, "Could you bring me an apple?")]
    dialogue.update(7)
    assert len(heard) == 1, "once per line heard"
