"""``greedy``: plays the solver's best play whenever one exists, knocks whenever allowed.

The play is :func:`rummy.solver.best_play` (the most points a legal meld action can add,
R5, with every table manipulation and the joker rules R5.6–R5.9). The opening-meld variants
of R5.5 are respected: before a seat has opened under ``opening_meld_per_player``, or on the
empty table with ``opening_meld_min_points``, only the hand is searched (on an empty table)
and the melds found are appended to the table untouched.
"""

from __future__ import annotations

from rummy.bots.base import BotBase
from rummy.commands import Command, Draw, EndTurn, Knock, Meld, Pass
from rummy.melds import Table
from rummy.solver import Play, best_play
from rummy.views import PlayerView

#: search budget per decision (states expanded). Typical searches need a few hundred; the
#: budget only caps rare pathological positions (the play is then legal, maybe not best).
BOT_NODE_LIMIT = 40_000


def plan_play(view: PlayerView, *, keep: tuple[int, ...] = (),
              node_limit: int | None = BOT_NODE_LIMIT,
              hand: tuple[int, ...] | None = None,
              objective: str = "points") -> tuple[Table, Play] | None:
    """The best meld action available to the viewer, under the opening rules (R5.5).

    ``hand`` replaces the viewer's hand (to evaluate a hypothetical draw); ``keep`` is a
    multiset of hand cards that must stay in the hand and ``objective`` the solver's
    (``"points"``, the most points added, or ``"cards"``, the most cards; see
    :func:`rummy.solver.solve`).

    Returns:
        ``(new_table, play)`` — the whole new table to send in :class:`Meld` and the
        solver's play (``play.cards``/``play.points`` are the cards added) — or ``None``
        when the seat cannot (or, by the opening rules, may not) meld.
    """
    rules = view.rules
    hand = view.hand if hand is None else hand
    seat = view.seat if view.seat is not None else view.turn
    opening = rules.opening_meld_per_player and not view.opened[seat]
    if opening or (not view.table and rules.opening_meld_min_points):
        play = best_play((), hand, keep=keep, node_limit=node_limit, objective=objective,
                         rules=rules)
        if play is None or play.points < rules.opening_meld_min_points:
            return None
        return tuple(view.table) + play.table, play
    play = best_play(view.table, hand, keep=keep, node_limit=node_limit,
                     objective=objective, rules=rules)
    if play is None:
        return None
    return play.table, play


class GreedyBot(BotBase):
    """Plays the best play (most points) whenever one exists; knocks whenever allowed
    (R6.1). Deterministic: the solver breaks ties in a fixed order."""

    name = "greedy"

    def knock_now(self, view: PlayerView) -> bool:
        """Whether to knock when allowed (R6.1); otherwise the turn ends (R6.3). Always,
        for this bot; :class:`rummy.bots.strategic.StrategicBot` overrides it."""
        return True

    def act(self, view: PlayerView) -> Command:
        """See :class:`rummy.bots.base.Bot`."""
        seat = view.turn
        kinds = view.actions
        if "knock" in kinds and self.knock_now(view):
            return Knock(seat)
        if "draw" in kinds:
            return Draw(seat)
        if "end_turn" in kinds:
            return EndTurn(seat)
        return self.meld_or_pass(view)

    def meld_or_pass(self, view: PlayerView) -> Command:
        """The meld-or-pass decision (R3.2, R5): the solver's best play, else pass.
        :class:`rummy.bots.human.HumanBot` overrides it."""
        planned = plan_play(view)
        if planned is not None:
            return Meld(view.turn, planned[0])
        return Pass(view.turn)
