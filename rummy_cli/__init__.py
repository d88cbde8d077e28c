"""The console layer of Manipulation Rummy: the ``rummy`` command line, the terminal game
(``rummy play``), replays and report printing, rendered with rich.

The rules package :mod:`rummy` is pure and depends on nothing; everything that prints,
reads files or talks to a terminal lives here (docs/architecture.md).
"""
