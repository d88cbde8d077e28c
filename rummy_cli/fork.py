"""``rummy replay LOG --fork N``: play on from the state after event N (CLI side).

The prefix comes from :func:`rummy.fork.fork_prefix` (seat-true by default, exact with
``--omniscient``); the game goes on in ``rummy play``'s interface
(:class:`rummy_cli.play.PlaySession`): the forking seat's moves are typed, the other seats
are played by the bots of the original game (their seat names, when they name a bot of
:data:`rummy.bots.BOTS`; ``strategic`` otherwise) or ``--bots``; with ``--auto`` a bot plays
the forking seat too. ``--save FILE`` writes the fork's log: a header line
(:func:`rummy.fork.fork_header`) and then every event from the first, so ``rummy replay
FILE`` replays it like any log.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import IO

from rich.console import Console

from rummy.bots import BOTS, check_bot
from rummy.decide import settle
from rummy.events import Event, GameStarted, dumps
from rummy.fork import fork_header, fork_prefix
from rummy.invariants import ReplayError, verify_log
from rummy.state import GAME_OVER


def add_fork_options(p: argparse.ArgumentParser) -> None:
    """Add ``--fork``, ``--as``, ``--omniscient``, ``--bots``, ``--auto`` and ``--save``
    to the ``replay`` parser (``--seed`` is shared with ``--analyse``)."""
    p.add_argument("--fork", type=int, metavar="N",
                   help="what if: start a game at the state after event N and play on "
                   "(rummy play's commands); the other seats' hidden cards are re-dealt "
                   "from the forking seat's view (--seed), later rounds deal as in the "
                   "original game (its seed)")
    p.add_argument("--as", type=int, dest="as_seat", metavar="SEAT",
                   help="with --fork: the seat you play (default: the seat to act after "
                   "event N); its view is the one kept")
    p.add_argument("--omniscient", action="store_true",
                   help="with --fork: keep every hidden card as it was (exact position)")
    p.add_argument("--bots", metavar="LIST",
                   help="with --fork: comma-separated bots for the other seats, cycled "
                   "(default: each seat's bot in the original game, else strategic)")
    p.add_argument("--auto", action="store_true",
                   help="with --fork: a bot plays the forking seat too (its original bot, "
                   "else strategic); no input is read")
    p.add_argument("--save", metavar="FILE",
                   help="with --fork: write the fork's log (a header line naming the "
                   "source, N, the seat and the mode, then every event)")


def fork_bots(start: GameStarted, seat: int, given: Sequence[str], auto: bool
              ) -> dict[int, str]:
    """The bot of every seat of a fork: ``given`` (cycled over the other seats) or each
    seat's name in the original game if it names a bot, else ``strategic``; the forking
    ``seat`` only with ``auto``."""
    out: dict[int, str] = {}
    others = [s for s in range(start.players) if s != seat]
    for k, s in enumerate(others):
        name = start.names[s] if s < len(start.names) else ""
        out[s] = given[k % len(given)] if given else (name if name in BOTS else "strategic")
    if auto:
        name = start.names[seat] if seat < len(start.names) else ""
        out[seat] = name if name in BOTS else "strategic"
    return out


def run_fork(events: Sequence[Event], args: argparse.Namespace, *,
             console: Console | None = None, input_fn: Callable[[str], str] = input) -> int:
    """Play a fork of ``events`` (module docstring). Returns 0 when the game was played
    (or left with ``q``), 1 for a bad log, 2 for bad options."""
    err = sys.stderr
    n: int = args.fork
    start = events[0]
    if not isinstance(start, GameStarted):
        print("error: the log does not start with GameStarted", file=err)
        return 1
    if not 1 <= n < len(events):
        print(f"error: --fork {n}: the fork point must be 1..{len(events) - 1} (an event "
              "before the end)", file=err)
        return 2
    try:
        states = list(verify_log(events[:n]))
    except ReplayError as e:
        print(f"error: inconsistent log: {e}", file=err)
        return 1
    if states[-1].phase == GAME_OVER:
        print(f"error: --fork {n}: the game is over after event {n}", file=err)
        return 2
    seat = args.as_seat if args.as_seat is not None else states[-1].turn
    if not 0 <= seat < start.players:
        print(f"error: --as {seat}: this game has seats 0..{start.players - 1} (R1.1)",
              file=err)
        return 2
    given = [b.strip() for b in args.bots.split(",") if b.strip()] if args.bots else []
    try:
        for b in given:
            check_bot(b)  # a tester's own bot too (docs/bots.md)
    except ValueError as e:
        print(f"error: {e}", file=err)
        return 2
    seed = getattr(args, "seed", 0) or 0
    try:
        prefix = fork_prefix(events, n, seat, omniscient=args.omniscient, seed=seed)
    except ValueError as e:
        print(f"error: {e}", file=err)
        return 2
    state, automatic = settle(list(verify_log(prefix))[-1])  # a deal, a scoring: no seat acts
    prefix = [*prefix, *automatic]
    save: IO[str] | None = None
    if args.save:
        try:
            save = open(args.save, "w", encoding="utf-8")  # noqa: SIM115
        except OSError as e:
            print(f"error: cannot write {args.save}: {e.strerror}", file=err)
            return 1
        source = str(getattr(args, "source", ""))
        save.write(json.dumps(fork_header(source, n, seat, args.omniscient, seed)) + "\n")
    from rummy_cli.play import PlaySession
    c = console or Console()
    mode = "exact (--omniscient)" if args.omniscient else \
        f"seat-true: the cards seat {seat} could not see re-dealt (seed {seed})"
    c.print(f"Fork after event {n}: {mode}; you play seat {seat}" if not args.auto else
            f"Fork after event {n}: {mode}; bots play every seat", highlight=False)
    try:
        session = PlaySession.resume(
            state, prefix, fork_bots(start, seat, given, args.auto),
            None if args.auto else seat, seed, console=c, input_fn=input_fn, save=save)
        session.run()
    finally:
        if save is not None:
            save.close()
    if args.save:
        c.print(f"fork written to {args.save} (rummy replay {args.save}"
                + ("" if session.state.phase == GAME_OVER else " --allow-incomplete") + ")",
                highlight=False, soft_wrap=True)
    return 0


def dumps_log(events: Sequence[Event]) -> str:
    """JSON lines of ``events`` (one :func:`rummy.events.dumps` per line)."""
    return "".join(dumps(e) + "\n" for e in events)


__all__ = ["add_fork_options", "fork_bots", "run_fork"]
