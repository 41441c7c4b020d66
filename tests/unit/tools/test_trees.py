"""An earlier commit to measure against: a ref git does not know is one clear message."""

from __future__ import annotations

import pytest

from tools.bench.trees import checkout


def test_an_unknown_ref_ends_the_tool_with_one_message() -> None:
    with pytest.raises(SystemExit, match="no commit 'no-such-ref' to check out"):
        checkout("no-such-ref")
