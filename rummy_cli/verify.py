"""``rummy verify LOG``: check that a finished game's deal was provably fair.

The log (JSON lines or a game record, as ``rummy replay`` reads) must be a full-information
copy of a finished game: ``GetEvents`` after the game is over, ``rummy export``. The command
replays it (every event checked against the rules, ``rummy.invariants.verify_log``) and
checks the seed commitment and every deck (:func:`rummy.fairness.verify_deal`;
docs/fairness.md). Exit status 0: fair; 1: a problem, each printed on its own line.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rummy.errors import NotationError
from rummy.invariants import ReplayError


def cmd_verify(args: argparse.Namespace) -> int:
    """``rummy verify LOG``: 0 when the log replays and its deal is provably fair, else 1
    with the reasons on standard error."""
    from rummy.events import GameStarted
    from rummy.fairness import verify_deal
    from rummy.invariants import verify_log
    from rummy_cli.replay import read_log
    try:
        events = read_log(args.log)
        for _ in verify_log(events):
            pass
    except ReplayError as e:
        print(f"error: {args.log}: the log does not replay: {e.message}", file=sys.stderr)
        return 1
    except NotationError as e:
        print(f"error: {args.log}: {e.message}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot read {args.log}: {e.strerror or e}", file=sys.stderr)
        return 1
    problems = verify_deal(events)
    if problems:
        for p in problems:
            print(f"refused: {args.log}: {p}", file=sys.stderr)
        return 1
    first = events[0]
    assert isinstance(first, GameStarted)
    rounds = sum(1 for e in events if type(e).__name__ == "RoundStarted")
    print(f"{args.log}: fair deal: commitment {first.commitment} = sha256(salt || seed) with "
          f"seed {first.seed}, and the decks of all {rounds} rounds follow from the seed")
    return 0


def add_parser(sub: Any) -> None:
    """Register ``rummy verify`` on the ``rummy`` command's subparsers."""
    p = sub.add_parser(
        "verify", help="check a finished game's seed commitment and that every deal "
        "follows from its seed",
        description="Replay a full-information event log of a finished game and check its "
        "provably fair deal: GameStarted.commitment = sha256(salt || seed as decimal ASCII), "
        "the first dealer and every round's deck derived from the seed (docs/fairness.md).")
    p.add_argument("log", help="event log (JSON lines) or game record; - for standard input")
    p.set_defaults(func=cmd_verify)


__all__ = ["add_parser", "cmd_verify"]
