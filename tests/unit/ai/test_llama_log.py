"""llama.cpp's log levels, read with ggml's numbering."""

from __future__ import annotations

import logging

from ai.llama_log import python_level


def test_llama_cpp_logs_below_the_games_own_warnings() -> None:
    debug, info, warn, error, cont = 1, 2, 3, 4, 5
    assert python_level(debug, logging.DEBUG) == logging.DEBUG
    assert python_level(info, logging.DEBUG) == logging.DEBUG
    assert python_level(warn, logging.DEBUG) == logging.DEBUG
    # An aborted decode is an error to llama.cpp and routine to the game.
    assert python_level(error, logging.DEBUG) == logging.DEBUG
    # A continuation keeps the level of the message it continues.
    assert python_level(cont, logging.INFO) == logging.INFO
    assert python_level(cont, logging.DEBUG) == logging.DEBUG
