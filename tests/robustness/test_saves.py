"""Saves: migration, damaged and foreign files, continue and --new, and SIGKILL mid-write."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from game.dialogue.memory import MemoryRecord
from game.persist.lock import SaveInUseError
from game.persist.save_schema import APPLICATION_ID, SCHEMA_V1, SCHEMA_VERSION
from game.persist.saver import state_digest
from game.persist.store import SaveState, SaveStore
from game.sim.continuity import ErrandState, WorldState


def _world(errands: dict[str, ErrandState]) -> WorldState:
    return WorldState(player=(1500.0, 40.0), errands=errands)


def _v1_file(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    for statement in SCHEMA_V1:
        db.execute(statement)
    db.execute(
        "INSERT INTO memory VALUES ('baker', ?, ?)",
        (json.dumps([["Marta", "Fresh bread!"]]), json.dumps(["the traveller bumped into them"])),
    )
    db.execute("INSERT INTO errand VALUES ('apples', 3, 0)")
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()


def test_schema_1_is_migrated_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "save.sqlite3"
    _v1_file(path)
    store = SaveStore(path)
    assert store.moved_aside is None
    version = store._db.execute("PRAGMA user_version").fetchone()[0]
    assert version == SCHEMA_VERSION
    # Version 1 never recorded a save in its info table, so it reads as nothing saved yet,
    # but the rows are all there, with an empty summary added.
    row = store._db.execute("SELECT lines, facts, summary FROM memory").fetchone()
    assert json.loads(row[0]) == [["Marta", "Fresh bread!"]]
    assert row[2] == ""
    record = MemoryRecord((("Marta", "Hi"),), (), older=3, topics=("bread", "apples"))
    saves = store.write(SaveState({"baker": record}))
    assert saves == 1
    loaded = store.load()
    assert loaded is not None
    assert loaded.memories["baker"] == record
    store.close()


def _play(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    argv = [sys.executable, "-m", "game", "--headless", "--unpaced", "--backend", "scripted"]
    return subprocess.run(
        [*argv, *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_damaged_save_is_moved_aside_and_the_game_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "save.sqlite3"
    garbage = b"SQLite format 3\x00" + bytes(range(256)) * 64
    path.write_bytes(garbage)
    result = _play("--ticks", "120", "--save", str(path))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "damaged or not ours" in result.stderr
    aside = [p for p in tmp_path.iterdir() if ".unusable-" in p.name and p.suffix != ".sqlite3-wal"]
    assert len(aside) == 1
    assert aside[0].read_bytes() == garbage  # nothing overwritten
    assert SaveStore(path).load() is not None


def test_foreign_database_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "save.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE accounts (id INTEGER, balance REAL)")
    db.execute("INSERT INTO accounts VALUES (1, 99.5)")
    db.commit()
    db.close()
    store = SaveStore(path)
    assert store.moved_aside is not None
    kept = sqlite3.connect(store.moved_aside)
    assert kept.execute("SELECT balance FROM accounts").fetchone() == (99.5,)
    assert store.load() is None


def test_continue_restores_memory_and_progress_and_new_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "save.sqlite3"
    log = tmp_path / "bubbles.jsonl"
    first = _play("--ticks", "1500", "--save", str(path), "--bubble-log", str(log))
    assert first.returncode == 0, first.stderr
    saved = SaveStore(path).load()
    assert saved is not None
    assert sum(len(m.lines) for m in saved.memories.values()) > 0
    # The audit holds for saves too: every remembered villager line was shown.
    shown = {json.loads(line)["text"] for line in log.read_text().splitlines()}
    names = {"Player"}
    for memory in saved.memories.values():
        for speaker, text in memory.lines:
            assert speaker in names or text in shown, (speaker, text)

    again = _play("--ticks", "1", "--save", str(path), "--log", "INFO")
    match = re.search(r"continuing the saved game: (\d+) lines", again.stderr)
    assert match is not None, again.stderr
    assert int(match.group(1)) == sum(len(m.lines) for m in saved.memories.values())

    fresh = _play("--ticks", "1", "--save", str(path), "--new", "--log", "INFO")
    assert "continuing" not in fresh.stderr
    assert path.with_name(path.name + ".previous").exists()


def _collect(process: subprocess.Popen[str], lines: list[str]) -> None:
    lines.extend(process.stderr or [])


def test_sigkill_while_saving_never_loses_a_committed_save(tmp_path: Path) -> None:
    rng = random.Random(20)
    path = tmp_path / "save.sqlite3"
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    argv = [sys.executable, "-m", "game", "--headless", "--unpaced", "--backend", "scripted"]
    argv += ["--ticks", "1000000", "--save", str(path), "--log", "DEBUG"]
    argv += ["--set", "game.save.interval_s=0.05"]
    committed_total = 0
    for run in range(20):
        process = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        lines: list[str] = []
        reader = threading.Thread(target=_collect, args=(process, lines))
        reader.start()
        end = time.monotonic() + 60.0
        while not any(" committed: " in line for line in list(lines)):
            assert time.monotonic() < end, f"run {run}: nothing was saved: {lines[-5:]}"
            time.sleep(0.05)
        # Saves run every 3 ticks here, so a kill at a random moment often lands mid-write.
        time.sleep(rng.uniform(0.0, 1.0))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        reader.join(timeout=30)
        commits = re.findall(r"save (\d+) committed: ([0-9a-f]{16})", "".join(lines))
        committed_total += len(commits)
        last_saves, last_digest = int(commits[-1][0]), commits[-1][1]
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        db.close()
        store = SaveStore(path)
        assert store.moved_aside is None, f"run {run}: the save was unreadable"
        state = store.load()
        store.close()
        assert state is not None
        # The file holds the last save the game logged as committed, or one committed a
        # moment later (the kill came between the commit and its log line).
        assert state.saves in (last_saves, last_saves + 1), (run, state.saves, last_saves)
        if state.saves == last_saves:
            assert state_digest(state) == last_digest, run
    assert committed_total > 100


DAMAGE = [
    ("UPDATE memory SET lines = '[[\"Marta\", \"Fresh bread!\"' WHERE npc = 'baker'", "memory"),
    ("UPDATE memory SET facts = '{\"a\": 1}' WHERE npc = 'baker'", "memory"),
    ("UPDATE memory SET attitude = 'very' WHERE npc = 'baker'", "memory"),
    ("UPDATE player SET x = 'abc'", "player"),
    ("UPDATE errand SET progress = -3 WHERE id = 'apples'", "errand"),
    ("UPDATE info SET saves = 'many'", ""),
]


def test_a_damaged_row_is_left_out_and_the_rest_of_the_save_continues(tmp_path: Path) -> None:
    """One bad row (bad JSON, a wrong shape, a wrong type) costs that row, never the save."""
    for statement, what in DAMAGE:
        path = tmp_path / f"save-{DAMAGE.index((statement, what))}.sqlite3"
        store = SaveStore(path)
        memories = {
            "baker": MemoryRecord((("Marta", "Fresh bread!"),), ("the traveller bumped",)),
            "guard": MemoryRecord((("Sela", "Halt."),), (), attitude=-1),
        }
        store.write(SaveState(memories, _world({"apples": ErrandState(2, False)}), 600))
        store.close()
        db = sqlite3.connect(path)
        db.execute(statement)
        db.commit()
        db.close()
        run = _play("--ticks", "1", "--save", str(path), "--log", "INFO")
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr
        assert "continuing the saved game" in run.stderr, statement
        assert path.exists()
        assert not list(tmp_path.glob(f"{path.name}.unusable-*")), "the save was kept"
        if what:
            assert f"left out: {what}" in run.stderr or what in run.stderr, run.stderr
        loaded = SaveStore(path).load()
        assert loaded is not None
        assert loaded.memories["guard"].attitude == -1, "the good rows are all there"


def test_a_second_store_on_an_open_save_is_refused_until_the_first_closes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "save.sqlite3"
    first = SaveStore(path)
    with pytest.raises(SaveInUseError, match="in use by another running game"):
        SaveStore(path)
    first.close()
    SaveStore(path).close()


def test_two_games_on_one_save_never_interleave(tmp_path: Path) -> None:
    """The second headless game on a save in use refuses with one line and exit 2."""
    path = tmp_path / "save.sqlite3"
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    argv = [sys.executable, "-m", "game", "--headless", "--backend", "scripted"]
    first = subprocess.Popen(
        [*argv, "--ticks", "100000", "--save", str(path), "--log", "INFO"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        end = time.monotonic() + 60
        while not path.exists() and time.monotonic() < end:
            time.sleep(0.1)
        time.sleep(1.0)
        second = _play("--ticks", "60", "--save", str(path))
        assert second.returncode == 2, second.stderr
        assert "in use by another running game" in second.stderr
        assert "Traceback" not in second.stderr
        again = _play("--ticks", "60", "--save", str(path), "--new")
        assert again.returncode == 2, again.stderr
        assert not path.with_name(path.name + ".previous").exists(), "--new kept its hands off"
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
    assert first.returncode == 0


def _mount_small_tmpfs(folder: Path) -> bool:
    folder.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    return result.returncode == 0


def test_a_full_disk_keeps_the_good_save_and_the_next_start_continues(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    if not _mount_small_tmpfs(disk):
        pytest.skip("mounting a small tmpfs is not allowed here")
    try:
        path = disk / "save.sqlite3"
        store = SaveStore(path)
        memories = {"baker": MemoryRecord((("Marta", "Fresh bread!"),), (), attitude=1)}
        store.write(SaveState(memories, _world({"apples": ErrandState(3, False)}), 600))
        store.close()
        for suffix in ("-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        filler = disk / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass  # the disk is full now
        finally:
            os.close(fd)
        full = _play("--ticks", "60", "--save", str(path))
        assert full.returncode == 0, full.stderr
        assert "Traceback" not in full.stderr
        assert "disk is full" in full.stderr or "cannot be opened" in full.stderr, full.stderr
        assert "playing without saving" in full.stderr
        assert path.exists()
        assert not list(disk.glob("save.sqlite3.unusable-*")), "a good save is never moved aside"
        filler.unlink()
        again = _play("--ticks", "1", "--save", str(path), "--log", "INFO")
        assert again.returncode == 0, again.stderr
        assert "continuing the saved game: 1 lines" in again.stderr
    finally:
        subprocess.run(["umount", str(disk)], check=False)
