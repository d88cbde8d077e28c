"""Game analysis: at every meld decision, the solver's best play against the play made.

Pure (no I/O). The analysis sees a game the way each seat saw it (I3): every decision is
judged from :func:`rummy.views.view` of the deciding seat (its own hand and the whole
table), never from another hand or the stock. :func:`seat_steps` turns a full-information
log into those per-seat steps; :func:`analyse_steps` only ever receives a
:class:`~rummy.views.PlayerView` and the seat's redacted copy of the next event
(:func:`rummy.views.redact`), so it cannot read hidden information by construction.

What is measured (all values in points, R1.5):

* **meld decisions** — a seat to act in phase ``meld_or_pass`` (after its first or second
  draw, R3.1–R3.2, or in a final turn, R8.2). ``best`` is the value of the exact best meld
  action :func:`rummy.solver.best_play` finds from the seat's view (R5, with every table
  manipulation and the joker rules R5.6–R5.9); ``played`` the points of the cards the seat
  actually put down (0 for a pass); ``missed = best - played``; ``counted`` the part of
  it that is a new miss (:func:`distinct_misses`: the same missed play at the next draw or
  turn is not charged again), which the per-seat totals add up. Under the opening variants
  of R5.5 (``opening_meld_per_player`` before the seat opened, or
  ``opening_meld_min_points`` on the empty table) the search is over the hand alone, as
  the ``greedy`` bot plays it, and a best play below ``opening_meld_min_points`` counts 0.
  Passing after a first draw can be a choice (a second draw may bring a better meld); the
  analysis reports the points at stake, not a verdict.
* **missed knocks** — the turn was over with a hand worth at most ``knock_threshold``
  (R3.5, R6.1: the phase ``knock_or_end``, where ``knock`` is one of the seat's actions)
  and the seat ended its turn instead (R6.3: knocking is optional).

>>> from rummy.simulate import play_game
>>> from rummy.rules import RuleSet
>>> game = play_game(("greedy", "greedy"), 3, RuleSet(target_score=1), record=True)
>>> analyse(game.events).seats[0].missed_points
0
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rummy.cards import format_card, hand_points
from rummy.events import Event, GameStarted, Knocked, Melded, Passed, TurnEnded
from rummy.evolve import evolve
from rummy.meld_commands import meld_command, table_change
from rummy.melds import Table, format_meld
from rummy.rules import RuleSet
from rummy.solver import solve
from rummy.state import KNOCK_OR_END, MELD_OR_PASS, GameState
from rummy.views import PlayerView, redact, view

#: search budget per decision (states expanded): generous, so that the value is exact in
#: practice; a decision whose search hit it is reported with ``proven=False``.
ANALYSIS_NODE_LIMIT = 2_000_000

#: how many of a seat's biggest misses the summary keeps
BIGGEST = 3


@dataclass(frozen=True, slots=True)
class SeatStep:
    """One decision as its seat saw it: ``index`` (1-based) of the event that answered it,
    the seat's ``view`` just before (I3), and that ``event`` as the seat received it."""

    index: int
    view: PlayerView
    event: Event


@dataclass(frozen=True, slots=True)
class MeldDecision:
    """A meld-or-pass decision (R3.1, R3.2, R8.2) and how it was answered.

    Attributes:
        index: 1-based index of the answering event (``Melded`` or ``Passed``) in the log;
            ``rummy replay LOG --at index-1`` shows the position.
        round: the round (1-based). seat: the deciding seat. draws: cards drawn this turn
            (0 in a final turn, R8.2).
        hand: the seat's hand before the decision (card indices).
        best: points (R1.5) of the best meld action from the seat's view; 0 if none.
        best_cards: the hand cards of that best play.
        played: points of the cards actually played (0 for a pass).
        played_cards: the cards actually played.
        proven: False only when the search budget stopped the solver (``best`` is then a
            lower bound).
        table: the table before the decision, in the log's order (melds numbered from 1
            in the page and in :attr:`best_command`).
        best_table: the whole table after the best play (``()`` when there is none).
        counted: the part of ``missed`` that is a new miss (:func:`distinct_misses`): a
            seat that passes on the same play turn after turn is charged once.
    """

    index: int
    round: int
    seat: int
    draws: int
    hand: tuple[int, ...]
    best: int
    best_cards: tuple[int, ...]
    played: int
    played_cards: tuple[int, ...]
    proven: bool = True
    table: Table = ()
    best_table: Table = ()
    counted: int = 0

    @property
    def missed(self) -> int:
        """Points left on the table at this decision: ``best - played`` (never negative)."""
        return max(0, self.best - self.played)

    @property
    def best_melds(self) -> Table:
        """The melds of the best play that were not on the table before (new or changed
        melds), in the solver's order; ``()`` when there is no play."""
        return tuple(table_change(self.table, self.best_table)[1]) if self.best_table else ()

    @property
    def best_command(self) -> str:
        """The best play as typed in ``rummy play`` (:func:`rummy.meld_commands.meld_command`,
        melds numbered in the order of :attr:`table`); ``""`` when there is no play."""
        return meld_command(self.table, self.best_table) if self.best_table else ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict, cards in notation (R1.4)."""
        return {"index": self.index, "round": self.round, "seat": self.seat,
                "draws": self.draws, "hand": [format_card(c) for c in self.hand],
                "best": self.best, "best_cards": [format_card(c) for c in self.best_cards],
                "best_melds": [format_meld(m) for m in self.best_melds],
                "best_command": self.best_command,
                "played": self.played,
                "played_cards": [format_card(c) for c in self.played_cards],
                "missed": self.missed, "counted": self.counted, "proven": self.proven}


@dataclass(frozen=True, slots=True)
class MissedKnock:
    """A turn that ended with ``hand_points <= threshold`` without a knock (R6.1, R6.3);
    ``index`` is the 1-based index of the ``TurnEnded`` event."""

    index: int
    round: int
    seat: int
    hand_points: int
    threshold: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"index": self.index, "round": self.round, "seat": self.seat,
                "hand_points": self.hand_points, "threshold": self.threshold}


@dataclass(frozen=True, slots=True)
class SeatSummary:
    """One seat's totals.

    Attributes:
        seat, name: the seat and its label.
        decisions: meld decisions analysed.
        missed_by_round: points left on the table, each distinct miss once (sum of
            ``counted``, :func:`distinct_misses`), by round number; only rounds in which
            the seat decided at least once.
        missed_knocks: turns that could have ended in a knock and did not.
        biggest: the seat's largest distinct misses (at most :data:`BIGGEST`, by
            ``counted``), largest first.
    """

    seat: int
    name: str
    decisions: int
    missed_by_round: dict[int, int]
    missed_knocks: int
    biggest: tuple[MeldDecision, ...]

    @property
    def missed_points(self) -> int:
        """Points left on the table over the whole game."""
        return sum(self.missed_by_round.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (round numbers as string keys, as JSON needs)."""
        return {"seat": self.seat, "name": self.name, "decisions": self.decisions,
                "missed_points": self.missed_points,
                "missed_by_round": {str(r): p for r, p in sorted(self.missed_by_round.items())},
                "missed_knocks": self.missed_knocks,
                "biggest": [d.to_dict() for d in self.biggest]}


@dataclass(frozen=True, slots=True)
class GameAnalysis:
    """The analysis of one game (or of one seat's decisions in it, ``seat`` set).

    ``decisions`` and ``knocks`` are in log order; ``seats`` has one summary per analysed
    seat.
    """

    players: int
    seat: int | None
    decisions: tuple[MeldDecision, ...]
    knocks: tuple[MissedKnock, ...]
    seats: tuple[SeatSummary, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``{"players", "seat", "seats", "decisions", "missed_knocks"}``."""
        return {"players": self.players, "seat": self.seat,
                "seats": [s.to_dict() for s in self.seats],
                "decisions": [d.to_dict() for d in self.decisions],
                "missed_knocks": [k.to_dict() for k in self.knocks]}


def best_meld(v: PlayerView, *, node_limit: int | None = ANALYSIS_NODE_LIMIT
              ) -> tuple[int, tuple[int, ...], bool]:
    """The best meld action open to the viewer of ``v``, from the view alone (I3); the
    first three items of :func:`best_meld_play`."""
    points, cards, proven, _table = best_meld_play(v, node_limit=node_limit)
    return points, cards, proven


def best_meld_play(v: PlayerView, *, node_limit: int | None = ANALYSIS_NODE_LIMIT
                   ) -> tuple[int, tuple[int, ...], bool, Table]:
    """The best meld action open to the viewer of ``v``, from the view alone (I3).

    Returns:
        ``(points, cards, proven, table)``: R1.5 points and hand cards of the best play
        (``0, ()`` when no meld action is legal, R5.1), whether the search finished, and
        the whole new table (``()`` without a play). Under the opening variants of R5.5
        only the hand is searched (the new melds then go after the table's), and a play
        worth less than ``opening_meld_min_points`` counts as none.

    Raises:
        ValueError: ``v`` is a spectator view.
    """
    if v.seat is None:
        raise ValueError("a meld decision belongs to a seat; the public view has no hand")
    rules = v.rules
    opening = rules.opening_meld_per_player and not v.opened[v.seat]
    hand_only = opening or (not v.table and rules.opening_meld_min_points > 0)
    table: Table = () if hand_only else v.table
    solved = _solve(table, v.hand, node_limit, rules)
    if solved is None or (hand_only and solved[0] < rules.opening_meld_min_points):
        return 0, (), True if solved is None else solved[2], ()
    points, cards, proven, new = solved
    if hand_only and new:
        new = (*v.table, *new)
    return points, cards, proven, new


def _solve(table: Table, hand: tuple[int, ...], node_limit: int | None, rules: RuleSet
           ) -> tuple[int, tuple[int, ...], bool, Table] | None:
    """The best play under the game's rule set (§11 variants included): ``(points, cards,
    proven, new table)``, or ``None`` when the seat provably cannot meld."""
    sol = solve(table, hand, node_limit=node_limit, rules=rules)
    if sol.play is None:
        return None if sol.optimal else (0, (), False, ())
    return sol.play.points, sol.play.cards, sol.optimal, sol.play.table


def distinct_misses(decisions: Sequence[MeldDecision]) -> list[MeldDecision]:
    """``decisions`` (log order) with ``counted`` set: each distinct miss counted once.

    A seat's *open miss* after a meld decision is its ``missed`` points as long as the
    seat's hand still holds every card of that decision's best play that it did not play
    (the same play may still be there). At the seat's next meld decision in the same round
    only the part of ``missed`` beyond the open miss is new: ``counted = max(0, missed -
    open)``. Passing on a 57-point play at two draws in a row counts 57 once; drawing a
    card that makes it 70 counts 13 more; playing a part of it and keeping the rest back
    counts nothing new. A new round, or a hand that no longer holds the missed cards,
    closes the open miss.
    """
    out: list[MeldDecision] = []
    last: dict[int, MeldDecision] = {}
    for d in decisions:
        prev = last.get(d.seat)
        open_miss = 0
        if prev is not None and prev.round == d.round and prev.missed:
            unplayed = Counter(prev.best_cards) - Counter(prev.played_cards)
            if not unplayed - Counter(d.hand):
                open_miss = prev.missed
        d = replace(d, counted=max(0, d.missed - open_miss))
        last[d.seat] = d
        out.append(d)
    return out


def seat_steps(events: Sequence[Event], seat: int | None = None) -> Iterator[SeatStep]:
    """The decision points of a full-information log, each as its seat saw it (I3).

    Yields a :class:`SeatStep` for every event that answers a meld decision (``Melded``,
    ``Passed``) or a knock decision (``Knocked``, ``TurnEnded`` in phase ``knock_or_end``),
    with the view of the acting seat before it and that seat's redacted copy of the event.
    With ``seat`` set, only that seat's decisions.

    The events are applied with :func:`rummy.evolve.evolve` without checking them; verify
    the log first (:func:`rummy.invariants.verify_log`, as ``rummy replay`` does).
    """
    state: GameState | None = None
    players = hand_size = 0
    for i, e in enumerate(events, 1):
        if isinstance(e, GameStarted):
            players, hand_size = e.players, e.rules.hand_size
        if state is not None and isinstance(e, (Melded, Passed, Knocked, TurnEnded)):
            acting = e.seat
            decision = ((state.phase == MELD_OR_PASS and isinstance(e, (Melded, Passed)))
                        or (state.phase == KNOCK_OR_END and isinstance(e, (Knocked, TurnEnded))))
            if decision and (seat is None or acting == seat):
                yield SeatStep(i, view(state, acting),
                               redact(e, acting, players=players, hand_size=hand_size))
        state = evolve(state, e)


def analyse_steps(steps: Iterable[SeatStep], *, players: int, names: Sequence[str] = (),
                  seat: int | None = None, node_limit: int | None = ANALYSIS_NODE_LIMIT
                  ) -> GameAnalysis:
    """Analyse decisions given only what each deciding seat saw (I3).

    Args:
        steps: per-seat decisions (:func:`seat_steps`, or any source of views and redacted
            events, e.g. a seat's own stream).
        players: number of seats (R1.1). names: seat labels for the summary.
        seat: analyse only this seat's steps (others are ignored); ``None``: every seat.
        node_limit: the solver's budget per decision.

    Returns:
        The :class:`GameAnalysis`, with one :class:`SeatSummary` per analysed seat.
    """
    decisions: list[MeldDecision] = []
    knocks: list[MissedKnock] = []
    for s in steps:
        v, e = s.view, s.event
        if v.seat is None or (seat is not None and v.seat != seat):
            continue
        if isinstance(e, (Melded, Passed)):
            best, best_cards, proven, best_table = best_meld_play(v, node_limit=node_limit)
            played_cards = e.cards if isinstance(e, Melded) else ()
            decisions.append(MeldDecision(
                s.index, v.round, v.seat, v.draws, v.hand, best, best_cards,
                hand_points(played_cards), played_cards, proven, v.table,
                best_table))
        elif isinstance(e, TurnEnded) and "knock" in v.actions:
            knocks.append(MissedKnock(s.index, v.round, v.seat, v.hand_points,
                                      v.rules.knock_threshold))
    decisions = distinct_misses(decisions)
    seats = range(players) if seat is None else (seat,)
    summaries = []
    for p in seats:
        mine = [d for d in decisions if d.seat == p]
        by_round: dict[int, int] = {}
        for d in mine:
            by_round[d.round] = by_round.get(d.round, 0) + d.counted
        biggest = tuple(sorted((d for d in mine if d.counted > 0),
                               key=lambda d: (-d.counted, d.index))[:BIGGEST])
        summaries.append(SeatSummary(p, names[p] if p < len(names) else "", len(mine),
                                     by_round, sum(1 for k in knocks if k.seat == p), biggest))
    return GameAnalysis(players, seat, tuple(decisions), tuple(knocks), tuple(summaries))


def analyse(events: Sequence[Event], seat: int | None = None, *,
            node_limit: int | None = ANALYSIS_NODE_LIMIT) -> GameAnalysis:
    """Analyse a full-information game log (every seat, or only ``seat``); see the module
    docstring. Each decision is judged from the deciding seat's view only (I3).

    Raises:
        ValueError: the log does not start with ``GameStarted``, or ``seat`` is not a seat
            of the game (R1.1).
    """
    if not events or not isinstance(events[0], GameStarted):
        raise ValueError("a game log starts with GameStarted")
    start = events[0]
    if seat is not None and not 0 <= seat < start.players:
        raise ValueError(f"seat must be 0..{start.players - 1} (R1.1), got {seat}")
    return analyse_steps(seat_steps(events, seat), players=start.players, names=start.names,
                         seat=seat, node_limit=node_limit)


__all__ = ["ANALYSIS_NODE_LIMIT", "GameAnalysis", "MeldDecision", "MissedKnock", "SeatStep",
           "SeatSummary", "analyse", "analyse_steps", "best_meld", "best_meld_play",
           "distinct_misses", "seat_steps"]
