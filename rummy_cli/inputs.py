"""Input files of the console commands, read within a bound.

A log, a record or a case file is small (a game of the most events a server keeps,
100,000, is about 20 MB as JSON lines); a command pointed at ``/dev/zero``, a pipe that
never ends or a multi-gigabyte file by mistake should say so, not grow until the machine
runs out of memory (found by an attack on the CLI).
"""

from __future__ import annotations

import sys
from typing import BinaryIO

__all__ = ["MAX_INPUT_BYTES", "MAX_LINE_BYTES", "InputTooLarge", "read_bounded"]

MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Largest log or record file read (bytes): far above any game's."""

MAX_LINE_BYTES = 1024 * 1024
"""Largest line of a conformance case file (bytes): a case is a few hundred."""


class InputTooLarge(ValueError):
    """An input over its bound; the message names the file and the bound."""


def read_bounded(path: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of ``path`` (``"-"``: standard input), at most ``limit`` of them.

    Raises:
        InputTooLarge: the input holds more than ``limit`` bytes (nothing past the bound
            is read).
        OSError: the file cannot be opened or read.
    """
    if path == "-":
        return _read(sys.stdin.buffer, "standard input", limit)
    with open(path, "rb") as f:
        return _read(f, path, limit)


def _read(f: BinaryIO, name: str, limit: int) -> bytes:
    data = f.read(limit + 1)
    if len(data) > limit:
        raise InputTooLarge(f"{name} is larger than {limit // (1024 * 1024)} MiB; a game log "
                            "or record is far smaller (is it the right file?)")
    return data
