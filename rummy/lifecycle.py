"""The seat lifecycle of a served game (docs/rules.md §13): a seat's player leaves or
resigns (R13.1) or times out N times in a row (R13.2), a server bot takes the seat over, the
player reclaims it (R13.3); the ranking of the seats that left (R13.4) and the end of a
game that every human left (R13.5). Pure: the service passes the game's creation options
(takeover strategy, human seats, whether reclaiming is allowed, the timeout limit) in the
commands, and the events record what happened.

:class:`Control` is the part of :class:`rummy.state.GameState` this module keeps
(``GameState.control``; ``None`` until the first lifecycle event, meaning every seat is
played as it was created).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rummy.commands import Leave, Reclaim
from rummy.errors import GameOverError, IllegalMoveError, NotationError
from rummy.events import (
    Event,
    GameEnded,
    LeaveReason,
    ReclaimRequested,
    SeatLeft,
    SeatReclaimed,
    SeatTakenOver,
    TimedOut,
)
from rummy.scoring import final_scores
from rummy.state import DRAW, GAME_OVER, MELD_OR_PASS, GameState

DEFAULT_TAKEOVER = "basic"
"""The bot that takes a seat over when the game's creator chose none (R13.1)."""


@dataclass(frozen=True, slots=True)
class Control:
    """Who plays each seat, by seat.

    Attributes:
        controllers: ``""`` when the seat's own player decides for it, else the strategy
            name of the server bot playing it since a takeover.
        away: ``""``, or why the seat is played by a bot now (a :class:`LeaveReason` value).
        left: the seat resigned or left at some time (R13.4: it ranks below the others and
            takes no bonus, even after a reclaim).
        timeouts: consecutive timed-out decisions (R13.2).
        reclaim: a reclaim is pending, effective at the start of the seat's next turn.
        history: every change of controller, ``(version, seat, controller)`` in order: the
            version is the event's that made the change (R13.4, who played each move).
    """

    controllers: tuple[str, ...]
    away: tuple[str, ...]
    left: tuple[bool, ...]
    timeouts: tuple[int, ...]
    reclaim: tuple[bool, ...]
    history: tuple[tuple[int, int, str], ...] = ()

    @classmethod
    def start(cls, players: int) -> Control:
        """Every seat played as created."""
        return cls(("",) * players, ("",) * players, (False,) * players, (0,) * players,
                   (False,) * players)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict (the snapshot's ``control``)."""
        return {"controllers": list(self.controllers), "away": list(self.away),
                "left": list(self.left), "timeouts": list(self.timeouts),
                "reclaim": list(self.reclaim), "history": [list(h) for h in self.history]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Control:
        """Inverse of :meth:`to_dict`.

        Raises:
            KeyError, TypeError, ValueError: a malformed dict.
        """
        def seq(key: str) -> list[Any]:
            value = data[key]
            if not isinstance(value, list):
                raise TypeError(f"control.{key} must be a list")
            return value
        return cls(tuple(str(x) for x in seq("controllers")),
                   tuple(str(x) for x in seq("away")),
                   tuple(bool(x) for x in seq("left")),
                   tuple(int(x) for x in seq("timeouts")),
                   tuple(bool(x) for x in seq("reclaim")),
                   tuple((int(h[0]), int(h[1]), str(h[2])) for h in seq("history")))


def control_of(state: GameState) -> Control:
    """The state's :class:`Control` (every seat as created when none was recorded)."""
    return state.control if state.control is not None else Control.start(state.players)


def controllers(state: GameState) -> tuple[str, ...]:
    """By seat: ``""`` when its own player decides for it, else the taking-over bot's
    strategy (R13.1)."""
    c = state.control
    return c.controllers if c is not None else ("",) * state.players


def left_seats(state: GameState) -> tuple[int, ...]:
    """The seats that resigned or left (R13.4), ascending."""
    c = state.control
    return () if c is None else tuple(i for i, x in enumerate(c.left) if x)


def at_turn_start(state: GameState, seat: int) -> bool:
    """``seat`` is to act and has not acted yet this turn (before its first draw, or before
    it melds or passes in a final turn, R8.2): the moment of R13.3."""
    return state.turn == seat and state.draws == 0 and state.phase in (DRAW, MELD_OR_PASS)


def _set(values: tuple, seat: int, value: object) -> tuple:  # type: ignore[type-arg]
    return values[:seat] + (value,) + values[seat + 1:]


# ---------------------------------------------------------------------------- evolve


def decided(state: GameState, seat: int) -> Control | None:
    """The state's control after a decision of ``seat`` (its timeouts in a row end)."""
    c = state.control
    if c is None or not c.timeouts[seat]:
        return c
    return replace(c, timeouts=_set(c.timeouts, seat, 0))


def seat_left(s: GameState, e: SeatLeft) -> GameState:
    c = control_of(s)
    gone = e.reason in (LeaveReason.RESIGN, LeaveReason.LEAVE)
    c = replace(c, away=_set(c.away, e.seat, e.reason.value),
                left=_set(c.left, e.seat, True) if gone else c.left,
                timeouts=_set(c.timeouts, e.seat, 0),
                reclaim=_set(c.reclaim, e.seat, False))
    return s._replace(version=s.version + 1, control=c)


def seat_taken_over(s: GameState, e: SeatTakenOver) -> GameState:
    c = control_of(s)
    version = s.version + 1
    c = replace(c, controllers=_set(c.controllers, e.seat, e.strategy),
                history=c.history + ((version, e.seat, e.strategy),))
    return s._replace(version=version, control=c)


def reclaim_requested(s: GameState, e: ReclaimRequested) -> GameState:
    c = control_of(s)
    return s._replace(version=s.version + 1,
                      control=replace(c, reclaim=_set(c.reclaim, e.seat, True)))


def seat_reclaimed(s: GameState, e: SeatReclaimed) -> GameState:
    c = control_of(s)
    version = s.version + 1
    c = replace(c, controllers=_set(c.controllers, e.seat, ""), away=_set(c.away, e.seat, ""),
                reclaim=_set(c.reclaim, e.seat, False), timeouts=_set(c.timeouts, e.seat, 0),
                history=c.history + ((version, e.seat, ""),))
    return s._replace(version=version, control=c)


def timed_out(s: GameState, e: TimedOut) -> GameState:
    c = control_of(s)
    return s._replace(version=s.version + 1,
                      control=replace(c, timeouts=_set(c.timeouts, e.seat, e.count)))


# ---------------------------------------------------------------------------- decide


def _check(state: GameState | None, seat: object, rule: str) -> GameState:
    if state is None:
        raise IllegalMoveError("R2", "no game: create the game first")
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.players:
        raise NotationError(f"seat must be 0..{state.players - 1}, got {seat!r} (R1.1)",
                            token=seat)
    if state.phase == GAME_OVER:
        raise GameOverError()
    return state


def game_end(state: GameState, left: tuple[int, ...], *, abandoned: bool = False) -> GameEnded:
    """The ``GameEnded`` of ``state``: §9 with R13.4 (the seats in ``left`` take no bonus
    and rank below the others), or with ``abandoned`` R13.5 (no bonus at all; the totals
    stand as they are)."""
    if abandoned:
        n = state.players
        bonuses = (0,) * n
        final = state.totals
    else:
        end = final_scores(state.totals, state.rounds_won, state.rules, left=left)
        bonuses, final = end.bonuses, end.final
    stayed = [i for i in range(state.players) if i not in left] or list(range(state.players))
    top = max(final[i] for i in stayed)
    winners = tuple(i for i in stayed if final[i] == top)  # R9.4 among the seats that stayed
    return GameEnded(state.totals, state.rounds_won, bonuses, final, winners, left)


def decide_leave(state: GameState | None, cmd: Leave) -> list[Event]:
    """The events of a :class:`~rummy.commands.Leave` (R13.1, R13.5): ``SeatLeft``, then
    ``SeatTakenOver`` by the game's takeover bot, or ``GameEnded`` when every human seat has
    now left or resigned.

    Raises:
        NotationError: a bad seat number or strategy name.
        GameOverError: the game has ended.
        IllegalMoveError: ``R13.1``: the seat is not a human seat, or it already left or
            resigned (a seat taken over on timeouts may still leave or resign).
    """
    s = _check(state, cmd.seat, "R13.1")
    if not isinstance(cmd.strategy, str) or not cmd.strategy:
        raise NotationError(f"the takeover strategy must be a bot name, got {cmd.strategy!r}")
    humans = tuple(cmd.humans)
    if cmd.seat not in humans:
        raise IllegalMoveError("R13.1", f"seat {cmd.seat} is not a human seat: only a human "
                               "seat may resign or leave")
    c = control_of(s)
    away = c.away[cmd.seat]
    if away == LeaveReason.RESIGN or (away == LeaveReason.LEAVE and not cmd.resign):
        raise IllegalMoveError("R13.1", f"seat {cmd.seat} already "
                               f"{'resigned' if away == LeaveReason.RESIGN else 'left'} the "
                               "game (a seat that left may still resign)")
    reason = LeaveReason.RESIGN if cmd.resign else LeaveReason.LEAVE
    events: list[Event] = [SeatLeft(cmd.seat, reason)]
    gone = {i for i in range(s.players)
            if c.away[i] in (LeaveReason.RESIGN, LeaveReason.LEAVE)} | {cmd.seat}
    if all(h in gone for h in humans):  # R13.5: every human seat left: the game ends now
        left = tuple(i for i in range(s.players) if c.left[i] or i == cmd.seat)
        return events + [game_end(s, left, abandoned=True)]
    if not c.controllers[cmd.seat]:
        events.append(SeatTakenOver(cmd.seat, cmd.strategy))
    return events


def decide_reclaim(state: GameState | None, cmd: Reclaim) -> list[Event]:
    """The events of a :class:`~rummy.commands.Reclaim` (R13.3): ``SeatReclaimed`` at the
    start of one of the seat's turns; elsewhere, with ``wait``, ``ReclaimRequested``.

    Raises:
        NotationError: a bad seat number.
        GameOverError: the game has ended.
        IllegalMoveError: ``R13.3``: the game does not allow reclaiming, the seat is played
            by its own player, it resigned, a reclaim is already pending, or (without
            ``wait``) it is not the start of one of the seat's turns.
    """
    s = _check(state, cmd.seat, "R13.3")
    if not cmd.allowed:
        raise IllegalMoveError("R13.3", "this game does not allow reclaiming a seat (its "
                               "creator did not allow it)")
    c = control_of(s)
    if not c.controllers[cmd.seat]:
        raise IllegalMoveError("R13.3", f"seat {cmd.seat} is played by its own player: there "
                               "is nothing to reclaim")
    if c.away[cmd.seat] == LeaveReason.RESIGN:
        raise IllegalMoveError("R13.3", f"seat {cmd.seat} resigned: a resigned seat stays "
                               "with the bot")
    if at_turn_start(s, cmd.seat):
        return [SeatReclaimed(cmd.seat)]
    if not cmd.wait:
        raise IllegalMoveError("R13.3", f"seat {cmd.seat} may be reclaimed only at the start "
                               f"of one of its turns (seat {s.turn} is to act, draw "
                               f"{s.draws})")
    if c.reclaim[cmd.seat]:
        raise IllegalMoveError("R13.3", f"a reclaim of seat {cmd.seat} is already pending")
    return [ReclaimRequested(cmd.seat)]


def pending_reclaim(state: GameState) -> SeatReclaimed | None:
    """The automatic ``SeatReclaimed`` due in a stable ``state``: the seat to act has a
    pending reclaim and is at the start of its turn (R13.3)."""
    c = state.control
    if c is not None and c.reclaim[state.turn] and at_turn_start(state, state.turn):
        return SeatReclaimed(state.turn)
    return None


def timeout_events(before: GameState, after: GameState, limit: int,
                   strategy: str) -> list[Event]:
    """The lifecycle events that follow the default move of a timed-out decision of the
    seat to act in ``before`` (its events led to ``after``): none without a limit (the
    game's ``limit`` 0, the default) or once the game is over; else ``TimedOut`` with the
    count in a row, and at ``limit`` ``SeatLeft`` (``"timeout"``) and ``SeatTakenOver``
    (R13.2)."""
    if limit <= 0 or after.phase == GAME_OVER:
        return []
    seat = before.turn
    count = control_of(before).timeouts[seat] + 1
    events: list[Event] = [TimedOut(seat, count)]
    if count >= limit and not control_of(after).controllers[seat]:
        events += [SeatLeft(seat, LeaveReason.TIMEOUT), SeatTakenOver(seat, strategy)]
    return events


LifecycleEvent = SeatLeft | SeatTakenOver | ReclaimRequested | SeatReclaimed | TimedOut
"""The events of this module (§13)."""


def describe(e: LifecycleEvent, who: str) -> str:
    """A sentence for a lifecycle event; ``who`` names its seat (``"seat 2 (Ann)"``)."""
    if isinstance(e, SeatLeft):
        how = {LeaveReason.RESIGN: "resigned (R13.1)", LeaveReason.LEAVE: "left (R13.1)",
               LeaveReason.TIMEOUT: "timed out too many times in a row (R13.2)"}[e.reason]
        return f"{who} {how}"
    if isinstance(e, SeatTakenOver):
        return f"the server bot {e.strategy} plays {who} from now on (R13.1)"
    if isinstance(e, ReclaimRequested):
        return f"{who} asked for the seat back at the start of its next turn (R13.3)"
    if isinstance(e, SeatReclaimed):
        return f"{who} is played by its player again (R13.3)"
    return f"{who} timed out ({e.count} in a row, R13.2)"


def controller_text(controller: str) -> str:
    """How a controller of :func:`controllers` is shown: ``"player"`` or ``"bot <name>"``."""
    return f"bot {controller}" if controller else "player"


__all__ = ["Control", "DEFAULT_TAKEOVER", "LifecycleEvent", "at_turn_start", "control_of",
           "controller_text", "controllers", "decide_leave", "decide_reclaim", "decided",
           "describe", "game_end", "left_seats", "pending_reclaim", "timeout_events"]
