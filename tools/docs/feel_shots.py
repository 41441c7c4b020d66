"""Screenshots of the game-feel features, taken through the real window, into ``docs/``.

Run under a display (``xvfb-run`` on a headless machine); the AI is off, so every line is
a template line and the pictures are the same from run to run (but for the loading panel,
which loads the real model). Name scenes to take only those:

    xvfb-run -s "-screen 0 1280x720x24" .venv/bin/python tools/docs/feel_shots.py
    xvfb-run -s "-screen 0 1280x720x24" .venv/bin/python tools/docs/feel_shots.py ball_hint
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pygame  # noqa: E402

from game.app import build_village  # noqa: E402
from game.config.settings import CONFIG_DIR, load_settings  # noqa: E402
from game.sim.events import Trigger  # noqa: E402
from game.sim.player import PlayerIntent  # noqa: E402
from game.sim.world import World  # noqa: E402
from game.ui.window import GameWindow  # noqa: E402

DOCS = ROOT / "docs"
STAY = PlayerIntent()


def _window(ai_off: bool = True) -> GameWindow:
    settings = load_settings(CONFIG_DIR, ('game.dialogue.ai_mode="off"',) if ai_off else ())
    village = build_village(settings)
    pygame.display.init()
    pygame.font.init()
    return GameWindow(village, settings.game)


def _step(window: GameWindow, intent: PlayerIntent = STAY, ticks: int = 1) -> None:
    for _ in range(ticks):
        window.step(intent)


def _villager(world: World, spec_id: str):  # type: ignore[no-untyped-def]
    return next(v for v in world.villagers if v.spec.id == spec_id)


def _put_player(window: GameWindow, x: float, y: float = 40.0) -> None:
    world = window.village.world
    world.player.body.position = (x, y)
    world.player.body.velocity = (0.0, 0.0)
    _step(window)
    window.renderer.camera.snap_to(x, y + 140.0)


def _shoot(window: GameWindow, name: str, frames: int = 20) -> Path:
    path = DOCS / name
    window.run(max_frames=frames, screenshot_path=path)
    print(f"wrote {path}")
    return path


def grab(window: GameWindow) -> None:
    """The start: the F1 hint, the highlighted apple under the shelf, the stack 'standing'."""
    _put_player(window, 1700.0)
    _step(window, PlayerIntent(move=-1), 2)
    _step(window, STAY, 20)
    _shoot(window, "feel-grab.png")


def throw(window: GameWindow) -> None:
    """Charging a throw at the ball on the market hall roof, with the arc shown."""
    world = window.village.world
    apple = next(p for p in world.props if p.kind.name == "apple")
    _put_player(window, 2120.0)
    apple.body.position = (2120.0, 80.0)
    _step(window, PlayerIntent(move=1), 2)
    _step(window, PlayerIntent(grab=True))
    _step(window, STAY, 20)
    _step(window, PlayerIntent(throw=True, aim=0.8), 40)
    window.started_at -= 60.0  # the start hint has faded by now
    window.controls.throw = True  # keep charging while the frames draw
    window.controls.mouse_aim = 0.8
    _shoot(window, "feel-throw.png", frames=6)
    window.controls.release_all()


def basket(window: GameWindow) -> None:
    """Carrying an apple over the basket: the dotted line shows where it will drop."""
    world = window.village.world
    zone = world.level.zone("basket")
    cx = zone.x + zone.w / 2
    apple = next(p for p in world.props if p.kind.name == "apple" and p.body.position.y > 0)
    _put_player(window, cx + 22.0)
    apple.body.position = (cx + 22.0, 80.0)
    _step(window, PlayerIntent(move=-1))
    _step(window, PlayerIntent(grab=True))
    _step(window, STAY, 30)
    _shoot(window, "feel-basket.png")


def crates(window: GameWindow) -> None:
    """Rebuilding the crate stack: three up, the fourth carried past the top, and the
    dotted line showing it will sit square on it."""
    world = window.village.world
    zone = world.level.zone("stack_zone")
    middle = zone.x + zone.w / 2
    stack = world.stacks[0]
    top = max(stack.props, key=lambda p: p.body.position.y)
    top.body.position = (top.body.position.x + 200.0, 60.0)
    _step(window, STAY, 40)
    for i, crate in enumerate(stack.props[:3]):
        crate.body.position = (middle, zone.y + 20.5 + 40.5 * i)
        crate.body.velocity = (0.0, 0.0)
        crate.body.angle = 0.0
        crate.body.angular_velocity = 0.0
    carried = stack.props[3]
    _put_player(window, middle + 40.0, zone.y + 31.0)
    carried.body.position = world.player.hold_point(carried)
    carried.body.velocity = (0.0, 0.0)
    carried.body.angle = 0.0
    world.player.take(carried)
    _step(window, PlayerIntent(move=-1))
    _step(window, STAY, 60)
    window.renderer.camera.snap_to(middle, zone.y + 150.0)
    window.started_at -= 60.0  # the start hint has faded by now
    _shoot(window, "feel-crates.png")


def chat(window: GameWindow) -> None:
    """A conversation that stays open for the next line, naming whom you talk to."""
    marta = _villager(window.village.world, "baker")
    _put_player(window, marta.x + 60.0)
    _step(window, STAY, 10)
    assert window.chat.open()
    for text in "Is the oven hot yet?":
        window.chat.type(text)
    window.chat.submit()
    _step(window, STAY, 30)
    for text in "And the apples":
        window.chat.type(text)
    _shoot(window, "feel-chat.png")
    # Walk off: the box says she is out of earshot.
    _step(window, PlayerIntent(move=1), 80)
    window.renderer.camera.snap_to(window.village.world.player.body.position.x, 180.0)
    _shoot(window, "feel-chat-closed.png")


def pause(window: GameWindow) -> None:
    """Esc: the pause menu offers Resume, the village voice on or off, and Quit."""
    window._pause(True)
    _shoot(window, "feel-pause.png", frames=4)
    window._pause(False)


def cheer(window: GameWindow) -> None:
    """The last apple goes in: a banner, confetti at the baker, and her thanks."""
    world = window.village.world
    zone = world.level.zone("basket")
    cx = zone.x + zone.w / 2
    marta = _villager(world, "baker")
    marta.body.position = (cx - 70.0, marta.y + 1.0)
    _put_player(window, cx + 90.0)
    apples = [p for p in world.props if p.kind.name == "apple"][:5]
    for i, apple in enumerate(apples):
        apple.body.position = (cx - 6.0 + 12.0 * (i % 2), zone.y + 10.0 + 15.0 * i)
        apple.body.velocity = (0.0, 0.0)
    for _ in range(200):
        _step(window)
        if window.cheers:
            break
    _step(window, STAY, 30)
    _shoot(window, "feel-cheer.png", frames=8)


def bubbles(window: GameWindow) -> None:
    """A cluster of villagers all talking: two bubbles per area, tags apart, a marker for
    a speaker off screen."""
    world = window.village.world
    board = window.village.dialogue.board
    x0 = 1835.0
    _put_player(window, x0 - 200.0)
    lines = {
        "baker": "Fresh loaves, still warm from the oven!",
        "farmer": "Rain by evening, mark my words.",
        "child": "Did you see the ball on the roof?",
        "merchant": "Fine cloth, fair prices, ask anyone.",
    }
    for i, spec_id in enumerate(lines):
        v = _villager(world, spec_id)
        v.body.position = (x0 + 22.0 * i, v.y + 1.0)
        v.body.velocity = (0.0, 0.0)
    _step(window, STAY, 2)
    for i, (spec_id, text) in enumerate(lines.items()):
        board.show(_villager(world, spec_id).id, text, world.tick + i, 600, "line")
        _step(window, STAY, 2)
        window.run(max_frames=2)
    guard = _villager(world, "guard")
    board.show(guard.id, "Halt! Who goes there?", world.tick, 600, "line")
    _step(window, STAY, 2)
    _shoot(window, "feel-bubbles.png", frames=45)


def actions(window: GameWindow) -> None:
    """Villagers acting on decisions: Marta fetching an apple, Pip showing the way, Brann
    turning away; name tags edged by how each feels about the traveller; F3 lists them."""
    world = window.village.world
    decider = window.village.decider
    assert decider is not None
    _put_player(window, 1560.0)
    marta, pip, brann = (_villager(world, k) for k in ("baker", "child", "blacksmith"))
    pip.body.position = (1500.0, 40.0)
    brann.body.position = (1640.0, 40.0)
    _step(window, STAY, 30)
    for npc, attitude in ((marta.id, 2), (pip.id, 1), (brann.id, -1)):
        window.village.dialogue.memories.of(npc).attitude = attitude
        world.set_attitude(npc, attitude)
    decider.ask(world.tick, marta.id, "chat", "could you fetch me an apple, please?")
    decider.ask(world.tick, pip.id, "chat", "where is the well?")
    decider.ask(world.tick, brann.id, "chat", "bring me a crate")
    _step(window, STAY, 40)
    window.show_graph = True
    _shoot(window, "feel-actions.png", frames=40)


def loading(window: GameWindow) -> None:
    """The first frames of a new game: the model still loading in the background, the
    village already playing."""
    _shoot(window, "feel-loading.png", frames=4)


def first_greeting(window: GameWindow) -> None:
    """A new game: Pip comes over from the well and greets the traveller at the spawn."""
    world = window.village.world
    pip = _villager(world, "child")
    for _ in range(600):
        _step(window)
        if window.village.dialogue.board.text_of(pip.id):
            break
    else:
        raise SystemExit("first_greeting: Pip said nothing in 10 s")
    _step(window, STAY, 20)
    _shoot(window, "feel-first-greeting.png", frames=6)


def ball_hint(window: GameWindow) -> None:
    """Jumping about under the roof ball for a while: Pip calls out the way up."""
    world = window.village.world
    pip = _villager(world, "child")
    _put_player(window, 2335.0)  # under the roof's right end, clear of Old Wen's spot
    hints = pip.spec.lines_for(Trigger.ERRAND_HINT)
    for _ in range(60 * 30):
        # Shuffle to and fro under the ball, jumping now and then, as a stuck player does.
        tick, x = world.tick, world.player.body.position.x
        goal = 2315.0 if (tick // 90) % 2 else 2350.0
        move = 0 if abs(goal - x) < 8.0 else (1 if goal > x else -1)
        _step(window, PlayerIntent(move=move, jump=tick % 50 == 0))
        if window.village.dialogue.board.text_of(pip.id) in hints:
            break
    else:
        raise SystemExit("ball_hint: Pip gave no hint in 30 s")
    _step(window, STAY, 40)
    x = world.player.body.position.x
    window.renderer.camera.snap_to((x + pip.x) / 2, 180.0)
    window.started_at -= 60.0  # the start hint has faded by now
    _shoot(window, "feel-ball-hint.png", frames=6)


SCENES: tuple[Callable[[GameWindow], None], ...] = (
    actions,
    grab,
    throw,
    basket,
    crates,
    chat,
    pause,
    cheer,
    bubbles,
    first_greeting,
    ball_hint,
)


def main(argv: list[str] | None = None) -> int:
    """Take every scene (or those named) in a fresh village of its own."""
    names = sys.argv[1:] if argv is None else argv
    everything = (*SCENES, loading)
    for scene in [s for s in everything if not names or s.__name__ in names]:
        window = _window(ai_off=scene is not loading)
        try:
            scene(window)
        finally:
            window.village.close()
            pygame.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
