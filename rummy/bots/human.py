"""``human``: a bot of human-like strength: it sees the plays a person sees,
misses table manipulations some of the time, and picks among its plays by a softmax over
their point values.

Candidate plays, from the seat's own view only (I3), each with its value in points (R1.5,
the points of the hand cards it adds, R5.1):

* the exact solver's best play, any manipulation of the table (R5.1–R5.9), as ``greedy``;
* the best play that leaves the table as it is: new melds from the hand only (R5.2);
* the ``basic`` bot's play: new melds it finds from its hand and single-card lay-offs
  (R5.3), no rearrangement;
* passing (R3.2), worth 0 points: the card-holding a person does when a meld looks small.

A person does not always see a manipulation: with probability :data:`MISS` the solver's
play is dropped from the candidates when it is worth more than the others (it rearranges
the table). The bot then plays candidate ``i`` with probability
``exp(points_i / T) / Σ_j exp(points_j / T)``, temperature ``T`` = :data:`TEMPERATURE`
points: a bigger play is likelier, a close second is often taken, passing on a meld of a
few points happens. Distinct tables are counted once (the first candidate that makes it
keeps its place). Under the opening variants (R5.5) every candidate obeys them.

Knocking is ``greedy``'s: whenever allowed (R6.1).

Deterministic given its seed: every random choice comes from its own
``random.Random`` (:class:`rummy.bots.base.BotBase`), in a fixed order; pure (no I/O, no
global state).

Tuning (docs/strength.md): ``T`` = 6 points, ``MISS`` = 0.35 put it clearly below
``strategic`` and ``greedy`` and clearly above ``basic`` and ``random``.
"""

from __future__ import annotations

import math

from rummy.bots.base import legal_for
from rummy.bots.basic import BasicBot
from rummy.bots.greedy import BOT_NODE_LIMIT, GreedyBot, plan_play
from rummy.cards import hand_points
from rummy.commands import Command, Meld, Pass
from rummy.melds import Table
from rummy.solver import best_play
from rummy.views import PlayerView

#: softmax temperature, in points (R1.5): the value gap that makes a play e times likelier
TEMPERATURE = 6.0
#: probability of not seeing a manipulation worth more than the plain plays
MISS = 0.35


def _points(table: Table) -> int:
    """R1.5 points of the cards of ``table`` (a table joker counts as a joker, 25)."""
    return sum(map(hand_points, table))


def candidates(view: PlayerView) -> list[tuple[Table | None, int, bool]]:
    """The plays a person could make now, in a fixed order, each table once.

    Returns:
        ``[(new_table or None for passing, points added, is_manipulation), ...]``: the
        solver's best play (``is_manipulation`` True when it is worth more than every plain
        play), the best plain play of new melds from the hand, the ``basic`` bot's play,
        then passing (``None``, 0 points). Only passing when the seat cannot meld.
    """
    before = _points(view.table)
    seat = view.seat if view.seat is not None else view.turn
    opening = view.rules.opening_meld_per_player and not view.opened[seat]
    plain: list[tuple[Table, int]] = []
    if not opening and view.table:
        # the opening minimum (R5.5) binds only a seat's opening or the first meld on an
        # empty table, neither of which is this case
        own = best_play((), view.hand, node_limit=BOT_NODE_LIMIT, rules=view.rules)
        if own is not None:
            plain.append((tuple(view.table) + own.table, own.points))
    simple = BasicBot.plan(view)
    if simple is not None:
        plain.append((simple, _points(simple) - before))
    out: list[tuple[Table | None, int, bool]] = []
    seen: set[Table] = set()
    full = plan_play(view)
    if full is not None:
        best_plain = max((p for _, p in plain), default=0)
        out.append((full[0], full[1].points, full[1].points > best_plain))
        seen.add(full[0])
    for table, points in plain:
        if table not in seen:
            seen.add(table)
            out.append((table, points, False))
    out.append((None, 0, False))
    return out


def softmax_pick(values: list[int], temperature: float, u: float) -> int:
    """Index ``i`` chosen with probability ``exp(v_i / T) / Σ exp(v_j / T)`` by the uniform
    number ``u`` in [0, 1) (inverse CDF, in list order).

    Raises:
        ValueError: no values, or a temperature that is not positive.
    """
    if not values or temperature <= 0:
        raise ValueError("softmax_pick needs values and a positive temperature")
    top = max(values)
    weights = [math.exp((v - top) / temperature) for v in values]
    x = u * sum(weights)
    for i, w in enumerate(weights):
        x -= w
        if x < 0:
            return i
    return len(values) - 1


class HumanBot(GreedyBot):
    """Human-like strength: misses a manipulation with probability :data:`MISS`, then
    softmax (temperature :data:`TEMPERATURE` points) over the plays it sees and passing;
    draws and knocks as ``greedy`` (whenever allowed, R6.1). See the module docstring."""

    name = "human"

    def meld_or_pass(self, view: PlayerView) -> Command:
        """See :meth:`rummy.bots.greedy.GreedyBot.meld_or_pass`: the softmax choice."""
        seat = view.turn
        options = candidates(view)
        if view.rules.restricts_melds:  # plans of the default rules a §11 variant forbids
            options = [o for o in options if o[0] is None or legal_for(view, o[0])]
        if len(options) == 1:  # nothing to meld
            return Pass(seat)
        missed = self.rng.random() < MISS
        if missed and options[0][2]:
            options = options[1:]
        pick = softmax_pick([p for _, p, _ in options], TEMPERATURE, self.rng.random())
        table = options[pick][0]
        return Pass(seat) if table is None else Meld(seat, table)


__all__ = ["HumanBot", "MISS", "TEMPERATURE", "candidates", "softmax_pick"]
