"""Timing bounds shared by the real-model tests."""

from __future__ import annotations

FRAME_MS = 1000.0 / 60.0

# No tick may wait for the model. The shortest wait for a line, its first token, is about
# 100 ms on this machine, and the sync mode waits longer than that in one tick.
WAIT_FOR_A_LINE_MS = 100.0

# A single tick's maximum also counts any moment the OS gave the core to another process:
# 5.1 ms beside a training run, 8.8 ms beside two busy loops, 17.2 ms once on a CI machine.
# Half the shortest wait for a line is far above those and far below any wait for one.
MAIN_THREAD_AI_MAX_MS = WAIT_FOR_A_LINE_MS / 2
