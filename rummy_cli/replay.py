"""Replay of an event log (file or store): rebuild, verify, print. CLI side (does output).

``read_log(path)`` parses a JSON-lines log (one :func:`rummy.events.dumps` line per event);
``replay_events(events, ...)`` verifies every event and invariant (:func:`verify_log`) and
prints the final state, each step (``step=True``) or the state after event N (``at=N``).
``page_and_analysis(events, args)`` serves ``--html`` (the replay page,
:mod:`rummy_cli.replay_page`) and ``--analyse`` (:mod:`rummy.analysis`).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from rich.console import Console
from rich.table import Table as RichTable

from rummy.errors import NotationError, RummyError
from rummy.events import CardDrawn, Event, GameStarted, RoundStarted, loads
from rummy.invariants import ReplayError, verify_log
from rummy.lifecycle import controller_text
from rummy.melds import format_meld
from rummy.state import GameState
from rummy_cli.inputs import InputTooLarge, read_bounded
from rummy_cli.outputs import write_output
from rummy_cli.report_format import event_line, hand_text, state_text

if TYPE_CHECKING:
    from rummy.analysis import GameAnalysis, MeldDecision
    from rummy.review import GameReview

#: the largest --budget (a review at 64 takes minutes; the service caps its own at 8)
MAX_BUDGET = 64
#: --budget's default (rummy.review.DEFAULT_BUDGET, kept here so --help loads no solver)
DEFAULT_BUDGET = 4


def read_log(path: str) -> list[Event]:
    """Read a JSON-lines event log, or a game record (docs/record.md), told apart by
    content (:func:`rummy_cli.record.looks_like_record`); ``"-"`` reads standard input.

    Raises:
        ReplayError: a corrupt or truncated line, naming the line number.
        OSError: the file cannot be read.
    """
    events: list[Event] = []
    try:  # "-": standard input, as the record commands accept for their output
        data = read_bounded(path)
    except InputTooLarge as e:
        raise ReplayError(0, str(e)) from None
    if data.lstrip()[:1] != b"{":
        from rummy.record import from_record
        from rummy_cli.record import looks_like_record
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:  # the line-by-line reading below names the line
            text = ""
        if looks_like_record(text):
            try:
                return from_record(text)
            except NotationError as e:
                m = re.match(r"line (\d+): (.*)", e.message, re.S)
                n, msg = (int(m.group(1)), m.group(2)) if m else (0, e.message)
                raise ReplayError(n, f"{path} (game record): {msg}", unit="line",
                                  sep=" of") from None
    for n, raw in enumerate(io.BytesIO(data), 1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ReplayError(n, f"{path} is not UTF-8 text", unit="line", sep=" of") from None
        if not line.strip():
            continue
        if not events and fork_origin(line) is not None:
            continue  # a fork's header line (rummy.fork.fork_header), not an event
        try:
            events.append(loads(line))
        except (NotationError, TypeError, ValueError, AttributeError, RecursionError) as e:
            msg = e.message if isinstance(e, NotationError) else (
                "nested too deeply" if isinstance(e, RecursionError) else str(e))
            raise ReplayError(n, f"{path} (event {len(events) + 1}): {msg}",
                              unit="line", sep=" of") from None
    if not events:
        raise ReplayError(0, f"{path} holds no events", unit="file")
    return events


def fork_origin(line: str) -> dict[str, object] | None:
    """The ``"fork"`` object of a fork log's header line (:func:`rummy.fork.fork_header`),
    or ``None`` for any other line (an event)."""
    if '"fork"' not in line or '"type"' in line:
        return None
    try:
        data = json.loads(line)
    except ValueError:
        return None
    origin = data.get("fork") if isinstance(data, dict) else None
    return origin if isinstance(origin, dict) else None


def _final_table(state: GameState, console: Console) -> None:
    t = RichTable(title=f"Game after {state.version} events")
    for col in ("seat", "name", "total", "rounds won", "final", "hand"):
        t.add_column(col)
    result = state.result
    for i in range(state.players):
        t.add_row(str(i), state.names[i] if i < len(state.names) else "", str(state.totals[i]),
                  str(state.rounds_won[i]), str(result.final[i]) if result else "-",
                  hand_text(state.hands[i]))
    console.print(t)
    if state.control is not None and state.control.history:  # who played each seat (§13)
        for v, seat, c in state.control.history:
            console.print(f"from event {v}: seat {seat} played by {controller_text(c)}")
    if result:
        console.print(f"winner(s): {', '.join(f'seat {w}' for w in result.winners)}")
        if result.left:
            console.print(f"left the game, ranked below the others (R13.4): "
                          f"{', '.join(f'seat {x}' for x in result.left)}")


def replay_events(events: Sequence[Event], step: bool = False, at: int | None = None,
                  out: TextIO | None = None, allow_incomplete: bool = True) -> int:
    """Verify and print a replay. Returns a process exit code (0 ok, 1 inconsistent log).

    Args:
        events: the full-information log.
        step: print every event followed by the public state after it.
        at: print only the state after event ``at`` (1-based) and stop.
        out: where to print (default stdout).
        allow_incomplete: accept a log that ends before ``GameEnded`` (a game in
            progress); when False such a log is reported as truncated (exit code 1).
    """
    console = Console(file=out, highlight=False, soft_wrap=True)
    if at is not None and not 1 <= at <= len(events):
        console.print(f"error: --at {at} is outside 1..{len(events)} (the log has "
                      f"{len(events)} events)")
        return 2
    state: GameState | None = None
    try:
        for i, state in enumerate(verify_log(events), 1):
            if step:
                console.print(f"[bold]{i:5d}[/bold] {event_line(events[i - 1])}")
                console.print(state_text(state))
            if at is not None and i == at:
                console.print(f"after event {i}: {event_line(events[i - 1])}")
                console.print(state_text(state))
                _final_table(state, console)
                return 0
    except ReplayError as e:
        console.print(f"[red]error:[/red] inconsistent log: {e}")
        return 1
    except RummyError as e:  # pragma: no cover - defensive
        console.print(f"[red]error:[/red] {e}")
        return 1
    assert state is not None
    if not state.is_over and not allow_incomplete:
        console.print(f"[red]error:[/red] truncated log: it ends at event {len(events)} "
                      f"(round {state.round}, phase {state.phase}) before the game is over; "
                      "use --allow-incomplete for a game in progress")
        return 1
    console.print(f"verified {len(events)} events: every event legal, I1–I3 held after each")
    _final_table(state, console)
    if not state.is_over:
        console.print("(the game is not over)")
    return 0


EPILOG_REPLAY = """\
examples:
  rummy replay game.jsonl --html game.html             every hand (a full-information log)
  rummy replay game.jsonl --html seat1.html --seat 1   only what seat 1 saw (I3)
  rummy replay game.jsonl --analyse                    review every decision (docs/review.md)
  rummy replay game.jsonl --analyse --budget 0         the solver's judgement alone (fast)
  rummy replay game.jsonl --fork 120                   what if: play on after event 120
  rummy replay game.jsonl --fork 120 --omniscient --auto --save fork.jsonl
  rummy replay game.jsonl --analyse --json analysis.json --html game.html
  rummy replay GAME_ID --redis-url redis://localhost:6379/0 --html game.html

The page is one HTML file with its script, style and game data inside: it opens offline.
Open it at event N with game.html#step=N (the state `rummy replay LOG --at N` prints). The
analysis judges every meld decision from the deciding seat's own view (its hand and the
table, never another hand or the stock): the solver's best play (R5) in points (R1.5)
against the points played, and the turns that could have ended in a knock (R6.1) and did
not. Batch logs (`rummy simulate --events-dir DIR`) are JSON-lines logs too.
"""


def add_page_options(p: argparse.ArgumentParser) -> None:
    """Add ``--html``, ``--seat``, ``--analyse`` and ``--json`` to a ``replay`` parser."""
    p.add_argument("--html", metavar="FILE",
                   help="write the replay page: one self-contained HTML file (no network "
                   "needed) with a slider, step buttons and arrow keys; every meld action "
                   "marks what was added, moved and which joker was freed")
    p.add_argument("--seat", type=int, metavar="N",
                   help="show only what seat N saw (I3): its own hand, hand sizes, the "
                   "table; other hands, the stock and other seats' draws stay out of the "
                   "file and of the analysis (default: every hand)")
    p.add_argument("--analyse", "--analyze", action="store_true", dest="analyse",
                   help="review the game, each seat from its own view (I3): at each meld "
                   "decision the solver's best play against the points played (each miss "
                   "once), knock-or-play-on and draw-again-or-meld decisions by rollouts, "
                   "inaccuracies/mistakes/blunders, missed going out, missed knocks, an "
                   "accuracy per seat and each seat's chance to win after every turn "
                   "(docs/review.md); printed as text, and shown in the page with --html")
    p.add_argument("--json", metavar="FILE",
                   help="with --analyse: write the analysis as JSON to FILE ('-': stdout)")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, metavar="N",
                   help="with --analyse: determinizations per judged choice and per point "
                   "of the equity graph and seat (default %(default)s; 0: the solver's "
                   "judgement of meld decisions only, no rollouts, no graph). The cost is "
                   "at most N x (choices + seats x turns) round rollouts of a few ms "
                   "each: a 2-player game of 70 turns takes about 3 s of CPU at the "
                   "default, 1 s at 0 (docs/review.md, Cost)")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="with --analyse: seed of every determinization and rollout; the "
                   "same seed gives the same figures; with --fork: seeds the re-deal and "
                   "the bots (default %(default)s)")
    from rummy_cli.fork import add_fork_options
    add_fork_options(p)


def page_options_used(args: argparse.Namespace) -> bool:
    """Whether any of the options of :func:`add_page_options` was given."""
    return bool(getattr(args, "html", None) or getattr(args, "analyse", False)
                or getattr(args, "json", None) or getattr(args, "seat", None) is not None)


def first_redacted(events: Sequence[Event]) -> int | None:
    """1-based index of the first event with a hidden field removed (a seat's copy, I3), or
    ``None`` for a full-information log."""
    for i, e in enumerate(events, 1):
        if ((isinstance(e, RoundStarted) and e.deck is None)
                or (isinstance(e, CardDrawn) and e.card is None)):
            return i
    return None


def page_and_analysis(events: Sequence[Event], args: argparse.Namespace,
                      out: TextIO | None = None) -> int:
    """``rummy replay ... --html/--analyse``: verify the log, write the page and print or
    write the analysis. Returns the exit code (0 ok, 1 bad log or file, 2 bad options)."""
    from rummy.review import review  # the solver: loaded only when asked for
    from rummy_cli.replay_page import write_page
    console = Console(file=out, highlight=False, soft_wrap=True)
    err = sys.stderr
    html_path: str | None = args.html
    seat: int | None = args.seat
    if args.json and not args.analyse:
        print("error: --json writes the analysis: add --analyse", file=err)
        return 2
    if not html_path and not args.analyse:
        print("error: --seat chooses what the page or the analysis shows: add --html FILE "
              "or --analyse", file=err)
        return 2
    from rummy_cli.outputs import output_problem
    problem = output_problem(html_path, args.json if args.analyse else None)
    if problem:  # before the analysis, which may take a while
        print(f"error: {problem}", file=err)
        return 2
    start = events[0]
    if not isinstance(start, GameStarted):
        print("error: the log does not start with GameStarted", file=err)
        return 1
    if seat is not None and not 0 <= seat < start.players:
        print(f"error: --seat {seat}: this game has seats 0..{start.players - 1} (R1.1)",
              file=err)
        return 2
    redacted = first_redacted(events)
    if redacted is not None:
        ask = ("every hand was asked for (no --seat)" if seat is None else
               "the page and the analysis rebuild the game from every event")
        print(f"error: {ask}, but this log is not full-information: event {redacted} has a "
              "hidden field removed (a seat's copy, I3). Export the full log from the event "
              "store (rummy export GAME_ID) and use --seat N to show one seat's view",
              file=err)
        return 1
    budget = getattr(args, "budget", DEFAULT_BUDGET)
    if not 0 <= budget <= MAX_BUDGET:
        print(f"error: --budget must be 0..{MAX_BUDGET} (rollouts per choice; each unit costs "
              f"about half a second of CPU on a 2-player game), got {budget}", file=err)
        return 2
    source = str(getattr(args, "source", None) or getattr(args, "game_id", ""))
    try:
        rev = (review(events, seat, budget=budget, seed=getattr(args, "seed", 0))
               if args.analyse else None)
        analysis = rev.analysis if rev is not None else None
        if html_path:
            name = os.path.basename(source)
            n = write_page(html_path, events, seat, analysis, title=f"Replay of {name}",
                           review=rev, source=source)
            who = "every hand" if seat is None else f"seat {seat}'s view"
            print(f"wrote {html_path}: {n} events, {who}", file=err)
    except ReplayError as e:
        print(f"error: inconsistent log: {e}", file=err)
        return 1
    except OSError as e:
        print(f"error: cannot write {html_path}: {e.strerror}", file=err)
        return 1
    if analysis is not None and rev is not None:
        if args.json:
            data = analysis.to_dict()
            data["review"] = {k: v for k, v in rev.to_dict().items() if k != "analysis"}
            text = json.dumps(data, indent=1)
            try:
                write_output(args.json, text, stdout=out)
            except OSError as e:
                print(f"error: cannot write {args.json}: {e.strerror}", file=err)
                return 1
        if args.json != "-":
            analysis_text(analysis, console)
            review_text(rev, console)
    return 0


def best_play_text(d: MeldDecision) -> str:
    """A decision's best play as melds and as typed in ``rummy play``, e.g.
    ``[8S 8H 8D] [TS JS QS KS] (type: a 8S 8H 8D; x 2 KS)``; ``"no meld"`` without one."""
    if not d.best_table:
        return "no meld"
    melds = " ".join("[" + " ".join(format_meld(m)) + "]" for m in d.best_melds)
    return f"{melds} (type: {d.best_command})"


def analysis_text(analysis: GameAnalysis, console: Console) -> None:
    """Print a :class:`rummy.analysis.GameAnalysis`: per-seat summary, then the decisions
    that missed points and the missed knocks (event numbers for ``--at`` and ``#step=``)."""
    t = RichTable(title="Game analysis (points, R1.5; each seat judged from its own view, I3)")
    for col in ("seat", "name", "decisions", "points left on the table (each miss once)",
                "by round", "missed knocks"):
        t.add_column(col)
    for s in analysis.seats:
        by_round = ", ".join(f"r{r}: {p}" for r, p in sorted(s.missed_by_round.items()))
        t.add_row(str(s.seat), s.name, str(s.decisions), str(s.missed_points), by_round or "-",
                  str(s.missed_knocks))
    console.print(t)
    for s in analysis.seats:
        for d in s.biggest:
            console.print(f"seat {s.seat} biggest miss: event {d.index} (round {d.round}): "
                          f"best {d.best}: {best_play_text(d)}; played {d.played}: "
                          f"missed {d.counted}" + (f" (of {d.missed}, the rest missed "
                                                   "before)" if d.counted < d.missed else ""))
    for k in analysis.knocks:
        console.print(f"seat {k.seat} missed knock: event {k.index} (round {k.round}), hand "
                      f"{k.hand_points} points <= threshold {k.threshold} (R6.1)")
    unproven = sum(1 for d in analysis.decisions if not d.proven)
    if unproven:
        console.print(f"{unproven} decision(s) reached the search budget: their best is a "
                      "lower bound")


_BARS = " ▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float | None]) -> str:
    """Chances 0..1 as one line of block characters (``?`` for a missing value)."""
    return "".join("?" if x is None else _BARS[min(8, int(round(x * 8)))] for x in values)


def review_text(rev: GameReview, console: Console) -> None:
    """Print a :class:`rummy.review.GameReview`: accuracy and classes per seat, the marked
    decisions (event numbers for ``--at`` and ``#step=``), and each seat's chance to win
    after every turn as a sparkline with its start, lowest, highest and last value."""
    t = RichTable(title=f"Review (budget {rev.budget}, seed {rev.seed}, {rev.rollouts} "
                  "rollouts; docs/review.md)")
    for col in ("seat", "name", "acc. %", "judged", "?!", "?", "??", "no out", "no knock"):
        t.add_column(col, no_wrap=True)
    for s in rev.seats:
        t.add_row(str(s.seat), s.name, f"{s.accuracy:.1f}", str(s.judged), str(s.inaccuracies),
                  str(s.mistakes), str(s.blunders), str(s.missed_going_out),
                  str(s.missed_knocks))
    console.print(t)
    console.print("?! inaccuracies, ? mistakes, ?? blunders; no out: missed going out "
                  "(R6.2); no knock: missed knocks (R6.1)")
    for d in rev.decisions:
        if not (d.cls or d.marks):
            continue
        what = ", ".join(x for x in (d.cls, *d.marks) if x)
        line = (f"event {d.index} (round {d.round}) seat {d.seat}: {what}: {d.chosen}; "
                f"best {d.best}; lost {d.lost:.1f}")
        if d.meld is not None and d.meld.best_command and d.kind == "meld":
            line += f" (best as typed: {d.meld.best_command})"
        console.print(line)
    if rev.graph:
        for p in (rev.seat,) if rev.seat is not None else range(rev.players):
            xs = [g.chance[p] for g in rev.graph]
            known = [x for x in xs if x is not None]
            console.print(f"seat {p} chance to win after each turn: {sparkline(xs)} "
                          f"(start {known[0]:.0%}, low {min(known):.0%}, high "
                          f"{max(known):.0%}, end {known[-1]:.0%})")
