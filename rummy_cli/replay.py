"""Replay of an event log (file or store): rebuild, verify, print. CLI side (does output).

``read_log(path)`` parses a JSON-lines log (one :func:`rummy.events.dumps` line per event);
``replay_events(events, ...)`` verifies every event and invariant (:func:`verify_log`) and
prints the final state, each step (``step=True``) or the state after event N (``at=N``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from rich.console import Console
from rich.table import Table as RichTable

from rummy.errors import NotationError, RummyError
from rummy.events import Event, loads
from rummy.invariants import ReplayError, verify_log
from rummy.state import GameState
from rummy_cli.report_format import event_line, hand_text, state_text


def read_log(path: str) -> list[Event]:
    """Read a JSON-lines event log.

    Raises:
        ReplayError: a corrupt or truncated line, naming the line number.
        OSError: the file cannot be read.
    """
    events: list[Event] = []
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise ReplayError(n, f"{path} is not UTF-8 text", unit="line", sep=" of") from None
            if not line.strip():
                continue
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
    if result:
        console.print(f"winner(s): {', '.join(f'seat {w}' for w in result.winners)}")


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
