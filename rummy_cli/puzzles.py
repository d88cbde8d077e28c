"""``rummy puzzles LOGS...``: the biggest misses of games as puzzles (CLI side).

Finds the puzzles with :func:`rummy.puzzles.find_puzzles`, writes them as JSON-lines
``best_play`` conformance cases (``--cases``; ``rummy conformance FILE`` runs them) and as
one self-contained HTML page with each answer hidden until asked for (``--html``), and
prints one line per puzzle.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Sequence
from typing import Any

from rummy.cards import format_card
from rummy.puzzles import DEFAULT_COUNT, DEFAULT_MIN_POINTS, Puzzle
from rummy_cli.outputs import write_output

EPILOG = """\
examples:
  rummy simulate --games 20 --players 2 --bots basic,human --events-dir games/ --quiet
  rummy puzzles games/*.jsonl --cases puzzles.jsonl --html puzzles.html
  rummy conformance puzzles.jsonl        every puzzle is a solver-proven best_play case
  rummy play --save mine.jsonl; rummy puzzles mine.jsonl --seat 0 --html mine.html
                                         learn from your own mistakes

A puzzle is a meld decision where a seat missed points (each distinct miss once): the table
and that seat's hand, "find the play worth N points". The analysis of a 2-player game takes
about 2 s (one solver call per meld decision).
"""


def add_parser(subparsers: Any) -> None:
    """Register ``rummy puzzles`` on the ``rummy`` command's subparsers."""
    p = subparsers.add_parser(
        "puzzles", help="turn the biggest misses of games into best-play puzzles",
        description="Analyse games (full-information JSON-lines logs) and turn their "
        "biggest distinct misses into puzzles: positions with one best value the solver "
        "proves, as best_play conformance cases and an HTML page with hidden answers.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("logs", nargs="+", metavar="LOG", help="game logs (rummy replay's input)")
    p.add_argument("--count", type=int, default=DEFAULT_COUNT,
                   help="puzzles to keep, biggest misses first (default %(default)s)")
    p.add_argument("--min-points", type=int, default=DEFAULT_MIN_POINTS,
                   help="smallest miss that makes a puzzle (default %(default)s)")
    p.add_argument("--seat", type=int, metavar="N",
                   help="only seat N's misses: learn from your own mistakes")
    p.add_argument("--cases", metavar="FILE",
                   help="write the puzzles as best_play conformance cases ('-': stdout)")
    p.add_argument("--html", metavar="FILE", help="write the puzzle page")
    p.set_defaults(func=cmd_puzzles)


def _cards(cards: Sequence[int]) -> str:
    return " ".join(format_card(c) for c in cards)


def puzzle_page(puzzles: Sequence[Puzzle]) -> str:
    """The self-contained HTML page: each puzzle's question, table and hand; the answer
    (melds, the move as typed in ``rummy play``, the points played) inside a closed
    ``<details>``, shown only when opened."""
    parts = ["<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
             "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
             "<title>Manipulation Rummy puzzles</title>\n<style>\n"
             "body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 1rem auto;"
             " padding: 0 1rem; line-height: 1.4; }\n"
             ".meld { display: inline-block; border: 1px solid #888; border-radius: 0.3rem;"
             " padding: 0.1rem 0.4rem; margin: 0.15rem; font-weight: bold; }\n"
             "section { border-top: 1px solid #ccc; padding: 0.5rem 0; }\n"
             "code { background: #eef; padding: 0.1rem 0.3rem; }\n"
             "</style>\n</head>\n<body>\n<h1>Manipulation Rummy puzzles</h1>\n"
             "<p>Positions from real games where a player missed points. Find the best meld "
             "action (R5: any rearrangement of the table, every meld legal); the solver "
             "proves its value. Open <em>Answer</em> to check.</p>\n"]
    for p in puzzles:
        e = html.escape
        table = "".join(f'<span class="meld">{e(_cards(m))}</span>' for m in p.table) \
            or "(empty table)"
        melds = "".join(f'<span class="meld">{e(_cards(m))}</span>' for m in p.best_melds)
        rules = p.rules.changed()
        parts.append(
            f'<section id="{e(p.id)}">\n<h2>{e(p.id)}: {e(p.question)}</h2>\n'
            f"<p>Table: {table}</p>\n<p>Hand: <strong>{e(_cards(p.hand))}</strong></p>\n"
            + (f"<p>Rules: {e(json.dumps(rules))}</p>\n" if rules else "")
            + ("<p>This is the player's opening meld (R5.5): hand cards only.</p>\n"
               if p.opening else "")
            + f"<details><summary>Answer</summary>\n<p>New or changed melds: {melds}</p>\n"
            f"<p>As typed in <code>rummy play</code>: <code>{e(p.command)}</code></p>\n"
            f"<p>The player made {p.played} points here and missed {p.missed} "
            f"({e(p.source)}, event {p.event}, round {p.round}, seat {p.seat}).</p>\n"
            "</details>\n</section>\n")
    parts.append("</body>\n</html>\n")
    return "".join(parts)


def cmd_puzzles(args: argparse.Namespace) -> int:
    """``rummy puzzles``: returns 0, 1 for an unreadable or inconsistent log, 2 for bad
    options."""
    from rummy.invariants import ReplayError, verify_log
    from rummy.puzzles import find_puzzles
    from rummy_cli.outputs import output_problem
    from rummy_cli.replay import first_redacted, read_log
    err = sys.stderr
    if args.count < 1 or args.min_points < 1:
        print("error: --count and --min-points must be at least 1", file=err)
        return 2
    problem = output_problem(args.html, args.cases if args.cases != "-" else None)
    if problem:
        print(f"error: {problem}", file=err)
        return 2
    games = []
    for path in args.logs:
        try:
            events = read_log(path)
            for _ in verify_log(events):
                pass
        except ReplayError as e:
            print(f"error: {path}: {e}", file=err)
            return 1
        except OSError as e:
            print(f"error: cannot read {path}: {e.strerror}", file=err)
            return 1
        if first_redacted(events) is not None:
            print(f"error: {path} is not a full-information log", file=err)
            return 1
        games.append((path, events))
    try:
        puzzles = find_puzzles(games, count=args.count, min_points=args.min_points,
                               seat=args.seat)
    except ValueError as e:
        print(f"error: {e}", file=err)
        return 1
    lines = "".join(json.dumps(p.to_case()) + "\n" for p in puzzles)
    if args.cases != "-":
        for p in puzzles:
            print(f"{p.id}: {p.question} ({p.source}, event {p.event}; the player made "
                  f"{p.played})")
    if args.cases:
        write_output(args.cases, lines)
    if args.html:
        write_output(args.html, puzzle_page(puzzles))
    print(f"{len(puzzles)} puzzle(s) from {len(games)} game(s)", file=err)
    return 0


__all__ = ["add_parser", "cmd_puzzles", "puzzle_page"]
