"""llama.cpp's log levels, read with ggml's numbering."""

from __future__ import annotations

import logging

from ai.llama_log import python_level


def test_only_llama_cpp_errors_reach_the_terminal() -> None:
    debug, info, warn, error, cont = 1, 2, 3, 4, 5
    assert python_level(debug, logging.DEBUG) == logging.DEBUG
    assert python_level(info, logging.DEBUG) == logging.DEBUG
    assert python_level(warn, logging.DEBUG) == logging.DEBUG
    assert python_level(error, logging.DEBUG) == logging.WARNING
    # A continuation keeps the level of the message it continues.
    assert python_level(cont, logging.WARNING) == logging.WARNING
    assert python_level(cont, logging.DEBUG) == logging.DEBUG
