"""Output files of the console commands: check before the work, not after it.

A long run (a sweep, a tournament) that ends in ``FileNotFoundError`` loses its results;
every command that writes files checks their paths first with :func:`output_problem` and
says what is wrong in one line (found by a newcomer's review of the sweep and tournament commands).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["output_problem", "terminal_safe", "write_output"]


def output_problem(*paths: str | None) -> str | None:
    """The first reason one of ``paths`` cannot be written, as a message for the user
    (``"cannot write X: ..."``), or ``None`` when all can. ``None``, ``""`` and ``"-"``
    (stdout) are skipped. Checks: not a directory, the parent directory exists, and the
    file (or its directory, for a new file) is writable."""
    for path in paths:
        if not path or path == "-":
            continue
        if os.path.isdir(path):
            return f"cannot write {path}: it is a directory"
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            return f"cannot write {path}: there is no directory {parent}"
        target = path if os.path.exists(path) else parent
        if not os.access(target, os.W_OK):
            return f"cannot write {path}: permission denied"
    return None


def write_output(path: str | None, text: str, *, stdout: TextIO | None = None,
                 announce: bool = False) -> None:
    """Write ``text`` to the file ``path``, or to standard output when ``path`` is ``"-"``
    or ``None`` (every ``--json``/``--html``/``--csv``/``--cases`` option of every command
    takes ``-`` this way). A trailing newline is added to non-empty text if missing.
    ``announce`` prints ``wrote PATH`` on standard error after a file is written.

    Raises:
        OSError: the file cannot be written (the callers say so in one line; paths are
            checked first with :func:`output_problem`).
    """
    if text and not text.endswith("\n"):
        text += "\n"
    if path is None or path == "-":
        (stdout or sys.stdout).write(text)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    if announce:
        print(f"wrote {path}", file=sys.stderr)


def terminal_safe(value: object) -> str:
    """``str(value)`` with every non-printable character (a terminal escape, a line break,
    a bidi override) written as its Python escape (``\\x1b``), for echoing text that
    comes from a file or a request back to a terminal."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
