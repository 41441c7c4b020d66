"""Every test run keeps its saves in a temporary folder, never in the user's data folder."""

from __future__ import annotations

import os
import tempfile

from game.save import DATA_DIR_ENV

os.environ.setdefault(DATA_DIR_ENV, tempfile.mkdtemp(prefix="zerostall-test-data-"))
