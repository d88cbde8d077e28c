"""``rummy record export|import``: event logs (JSON lines) to game records (text) and back.

The codec is :mod:`rummy.record` (pure); this module reads and writes the files. Both
directions are exact: ``import`` of an ``export`` gives the same events (docs/record.md).
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from rummy.errors import NotationError
from rummy.events import dumps
from rummy.evolve import replay
from rummy.invariants import ReplayError
from rummy_cli.inputs import InputTooLarge, read_bounded
from rummy_cli.outputs import output_problem, write_output

EPILOG_RECORD = """\
examples:
  rummy simulate --games 3 --players 4 --events-dir out/
  rummy record export out/game-000000.jsonl -o game0.txt
  rummy record import game0.txt -o game0.jsonl
  rummy replay game0.txt          # replay reads records as well as event logs

The record format is specified in docs/record.md.
"""


def looks_like_record(text: str) -> bool:
    """Whether ``text`` is a game record rather than a JSON-lines log: its first line that
    is not blank or a ``#`` comment is a header ``[Name "value"]`` (a JSON event line
    starts with ``{``; a corrupt line such as ``[[[`` is neither and is read as JSON, so
    its error names the line)."""
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        return _HEADER.match(s) is not None
    return False


_HEADER = re.compile(r'\[[A-Za-z][\w-]*\s+"')


def cmd_export(args: argparse.Namespace) -> int:
    """``rummy record export LOG.jsonl [-o GAME.txt]``."""
    from rummy.invariants import verify_log
    from rummy.record import to_record
    from rummy_cli.replay import read_log
    problem = output_problem(args.output)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    try:
        events = read_log(args.log)
        for _ in verify_log(events):  # a record is only written of a log that replays
            pass
        text = to_record(events)
    except ReplayError as e:
        print(f"error: corrupt event log: {e.message}", file=sys.stderr)
        return 1
    except NotationError as e:
        print(f"error: {args.log}: {e.message}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot read {args.log}: {e.strerror}", file=sys.stderr)
        return 1
    try:
        write_output(args.output, text)
    except OSError as e:
        print(f"error: cannot write {args.output}: {e.strerror}", file=sys.stderr)
        return 1
    if args.output:  # a file was written: say what is in it (stdout stays the record alone)
        turns = sum(1 for line in text.splitlines() if line and not line.startswith("["))
        print(f"wrote {args.output}: a game record of {len(events)} events "
              f"({turns} lines of play)", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """``rummy record import GAME.txt [-o LOG.jsonl] [--allow-incomplete]``."""
    from rummy.record import from_record
    problem = output_problem(args.output)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    try:
        text = read_bounded(args.record).decode("utf-8")
    except OSError as e:
        print(f"error: cannot read {args.record}: {e.strerror}", file=sys.stderr)
        return 1
    except UnicodeDecodeError:
        print(f"error: {args.record} is not UTF-8 text", file=sys.stderr)
        return 1
    except InputTooLarge as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    try:
        events = from_record(text)
    except NotationError as e:
        print(f"error: {args.record}: {e.message}", file=sys.stderr)
        return 1
    state = replay(events)
    if state is not None and not state.is_over and not args.allow_incomplete:
        # as `rummy replay` does: a record cut at a line boundary reads as a game in progress
        print(f"error: {args.record}: the record ends before the game is over (round "
              f"{state.round}, {len(events)} events): a truncated file, or a game in "
              "progress (then use --allow-incomplete)", file=sys.stderr)
        return 1
    try:
        write_output(args.output, "".join(dumps(e) + "\n" for e in events))
    except OSError as e:
        print(f"error: cannot write {args.output}: {e.strerror}", file=sys.stderr)
        return 1
    if args.output:
        print(f"wrote {args.output}: {len(events)} events", file=sys.stderr)
    return 0


def add_parser(sub: Any) -> None:
    """Register ``rummy record`` (with ``export`` and ``import``) on the subparsers."""
    p = sub.add_parser("record", help="convert event logs to game records (text) and back",
                       description="Game records: a human-readable text form of a whole "
                       "game (headers, the dealt decks, one line per turn in the R1.4 "
                       "notation, the scores), like chess's PGN. docs/record.md.",
                       epilog=EPILOG_RECORD, formatter_class=argparse.RawDescriptionHelpFormatter)
    rsub = p.add_subparsers(dest="record_command", metavar="ACTION", required=True)
    e = rsub.add_parser("export", help="event log (JSON lines) -> game record")
    e.add_argument("log", help="event log, JSON lines of rummy.events.dumps ('-': stdin)")
    e.add_argument("-o", "--output", help="record file to write (default: stdout)")
    e.set_defaults(func=cmd_export)
    i = rsub.add_parser("import", help="game record -> event log (JSON lines)")
    i.add_argument("record", help="game record file (docs/record.md; '-': stdin)")
    i.add_argument("-o", "--output", help="event log to write (default: stdout)")
    i.add_argument("--allow-incomplete", action="store_true",
                   help="accept a record that ends before the game is over (a game in "
                   "progress); by default a record must hold a whole game, as for rummy "
                   "replay")
    i.set_defaults(func=cmd_import)
