"""Help for the seat to act, from its own view only (I3): what it may do now and the
solver's best play.

Everything here takes a :class:`rummy.views.PlayerView` (never a full state), so what it
answers can be computed by anyone holding that seat's view: no hidden card leaks through
a legal-move list or a hint. Pure and deterministic (the solver breaks ties in a fixed
order); the service runs it off its event loop.

>>> from rummy.decide import step
>>> from rummy.commands import CreateGame, Draw
>>> from rummy.views import view
>>> s, _ = step(None, CreateGame(2, 7))
>>> s, _ = step(s, Draw(s.turn))
>>> moves = legal_moves(view(s, s.turn))
>>> moves.actions, moves.meld in ("possible", "impossible")
(('meld', 'pass'), True)
"""

from __future__ import annotations

from dataclasses import dataclass

from rummy.bots.base import legal_for
from rummy.bots.strategic import should_knock
from rummy.errors import GameOverError, NotYourTurnError
from rummy.melds import Table
from rummy.solver import Play, solve
from rummy.state import GAME_OVER
from rummy.views import PlayerView

#: search budget (states expanded) of :func:`legal_moves`: the bots' per-decision budget;
#: typical positions need a few hundred states
MOVES_NODE_LIMIT = 40_000
#: search budget of :func:`hint`: ten times the bots' (an exact answer in all but rare
#: pathological positions; ``Hint.optimal`` says when it is not)
HINT_NODE_LIMIT = 400_000

MELD_STATES = ("not_now", "possible", "impossible", "unknown")
""":attr:`LegalMoves.meld` values: ``not_now`` (meld is not among the actions: not the
seat's turn, or another phase), ``possible`` (a legal meld action exists and ``play`` is
one), ``impossible`` (the search was complete and found none: R5.1 needs a card added, and
the opening rules of R5.5 apply), ``unknown`` (the budget ran out before any play was
found)."""


@dataclass(frozen=True, slots=True)
class LegalMoves:
    """What the viewer may send now.

    Attributes:
        actions: the command kinds allowed now (``view.actions``: ``"draw"``, ``"meld"``,
            ``"pass"``, ``"knock"``, ``"end_turn"``), empty when it is not the viewer's
            turn or the game is over.
        meld: whether a meld action is possible now, one of :data:`MELD_STATES`.
        play: when ``meld == "possible"``, the best play found: the whole new table and the
            solver's :class:`~rummy.solver.Play` (cards added, points); else ``None``.
    """

    actions: tuple[str, ...]
    meld: str
    play: tuple[Table, Play] | None


@dataclass(frozen=True, slots=True)
class Hint:
    """The recommended command for the viewer.

    Attributes:
        kind: ``"draw"``, ``"meld"``, ``"pass"``, ``"knock"`` or ``"end_turn"``.
        table: for ``"meld"``, the whole new table to send (every joker declared); else
            ``()``.
        cards: for ``"meld"``, the hand cards the play adds (ascending, a joker as
            ``JOKER``); else ``()``.
        points: R1.5 points of ``cards`` (0 unless ``"meld"``).
        optimal: False only when the search budget ran out: the play (or the pass) is then
            legal but not proven best.
        reason: one sentence saying why, with the rule it rests on.
    """

    kind: str
    table: Table
    cards: tuple[int, ...]
    points: int
    optimal: bool
    reason: str


def _opening(view: PlayerView) -> bool:
    """Whether the viewer's next meld action is an opening one (R5.5 and its variants):
    the round's first, or under ``opening_meld_per_player`` the seat's first."""
    seat = view.seat if view.seat is not None else view.turn
    return not view.table or (view.rules.opening_meld_per_player and not view.opened[seat])


def best_meld(view: PlayerView, node_limit: int | None) -> tuple[tuple[Table, Play] | None, bool]:
    """The solver's best meld action for the viewer's hand on the table, under the game's
    rule set and the opening rules (R5, R5.5), and whether the search was complete.

    Returns:
        ``((new_table, play) or None, optimal)``: the play is checked legal for the viewer
        (:func:`rummy.bots.base.legal_for`); ``None`` with ``optimal`` True proves that no
        meld action is legal.

    Raises:
        ValueError: ``node_limit`` not a positive integer or None.
    """
    rules = view.rules
    opening = _opening(view)
    sol = solve(view.table, view.hand, node_limit=node_limit, rules=rules, opening=opening)
    play = sol.play
    if play is None and not sol.optimal and opening and view.table:
        # the per-player opening on a table: the solver's fallback proves nothing when it
        # finds no play, but the variant needs a complete meld of hand cards (R5.5), so a
        # hand that holds none cannot meld, and one that holds enough points can
        alone = solve((), view.hand, node_limit=node_limit, rules=rules, opening=True)
        if alone.play is None:
            return None, alone.optimal
        if alone.play.points >= rules.opening_meld_min_points:
            new_table = tuple(view.table) + alone.play.table
            if legal_for(view, new_table):
                return (new_table, alone.play), False
        return None, False
    if play is None:
        return None, sol.optimal
    if not legal_for(view, play.table):  # the solver's contract; never seen
        return None, False
    return (play.table, play), sol.optimal


def legal_moves(view: PlayerView, node_limit: int | None = MOVES_NODE_LIMIT) -> LegalMoves:
    """The commands the viewer may send now and whether a meld action is possible
    (:data:`MELD_STATES`), from the viewer's own view only (I3).

    Raises:
        ValueError: ``view`` is a spectator's (no seat), or a bad ``node_limit``.
    """
    if view.seat is None:
        raise ValueError("legal moves are a seat's: a spectator's view has none")
    if "meld" not in view.actions:
        return LegalMoves(view.actions, "not_now", None)
    planned, optimal = best_meld(view, node_limit)
    if planned is not None:
        return LegalMoves(view.actions, "possible", planned)
    return LegalMoves(view.actions, "impossible" if optimal else "unknown", None)


def hint(view: PlayerView, node_limit: int | None = HINT_NODE_LIMIT) -> Hint:
    """The recommended command for the viewer, from its own view only (I3): the
    ``strategic`` bot's policy (docs/bots.md) with the solver's best play.

    * a knock when allowed (R6.1) and an opponent could end the round first, or in the
      final turns (R8.2): :func:`rummy.bots.strategic.should_knock`; else end the turn
      (R6.3);
    * a draw when due (R3.1);
    * in the meld-or-pass phase, the meld action that adds the most points (R5, R1.5,
      under the opening rules R5.5), else a pass (R3.2).

    Raises:
        NotYourTurnError: the viewer is not the seat to act (R3).
        GameOverError: the game is over (R9.1).
        ValueError: a spectator's view, or a bad ``node_limit``.
    """
    if view.seat is None:
        raise ValueError("a hint is for a seat: a spectator's view has none")
    if view.phase == GAME_OVER:
        raise GameOverError("the game is over: there is no move to hint")
    if view.seat != view.turn or not view.actions:
        raise NotYourTurnError(f"it is seat {view.turn}'s turn, not seat {view.seat}'s: a "
                               "hint is for the seat to act")
    kinds = view.actions
    if "knock" in kinds and should_knock(view):
        return Hint("knock", (), (), 0, True,
                    f"R6.1: the hand is worth {view.hand_points} points, at most the knock "
                    f"threshold {view.rules.knock_threshold}, and an opponent could end the "
                    "round first (or the stock is nearly out)")
    if "draw" in kinds:
        return Hint("draw", (), (), 0, True, "R3.1: a card is due from the stock")
    if "end_turn" in kinds:
        return Hint("end_turn", (), (), 0, True,
                    "R6.3: no opponent can knock before your next turn; let the pot grow")
    planned, optimal = best_meld(view, node_limit)
    if planned is not None:
        table, play = planned
        return Hint("meld", table, play.cards, play.points, play.optimal and optimal,
                    f"R5: the meld action that adds the most points ({play.points}, "
                    f"{len(play.cards)} cards)")
    why = ("no legal meld action adds a card (R5.1, R5.5)" if optimal
           else "no meld action was found within the search budget")
    return Hint("pass", (), (), 0, optimal, f"R3.2: {why}")


__all__ = ["HINT_NODE_LIMIT", "MELD_STATES", "MOVES_NODE_LIMIT", "Hint", "LegalMoves",
           "best_meld", "hint", "legal_moves"]
