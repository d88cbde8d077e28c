"""``random``: a uniformly random legal choice among cheap candidates (baseline bot)."""

from __future__ import annotations

from rummy.bots._melding import _TRIPLES, lay_off
from rummy.bots.base import BotBase
from rummy.cards import JOKER
from rummy.commands import Command, Draw, EndTurn, Knock, Meld, Pass
from rummy.melds import Meld as MeldT
from rummy.views import PlayerView


class RandomBot(BotBase):
    """Draws when due; otherwise passes with probability 1/2, else picks uniformly among
    pass-if-nothing, each 3-card meld from the hand and each single-card lay-off onto a
    table meld; knocks or ends the turn at random.

    Respects the opening-meld variants (R5.5) by only proposing new melds before opening.
    """

    name = "random"

    def act(self, view: PlayerView) -> Command:
        """See :class:`rummy.bots.base.Bot`."""
        seat = view.turn
        actions = view.actions
        if actions[0] == "draw":
            return Draw(seat)
        if actions[0] == "knock":
            return Knock(seat) if self.rng.random() < 0.5 else EndTurn(seat)
        if self.rng.random() < 0.5:  # pass half of the time without looking
            return Pass(seat)
        options = self._candidates(view)
        if not options:
            return Pass(seat)
        return Meld(seat, self.rng.choice(options))

    def _candidates(self, view: PlayerView) -> list[tuple[MeldT, ...]]:
        hand = view.hand
        table = view.table
        rules = view.rules
        real = {c for c in hand if c != JOKER}
        out: list[tuple[MeldT, ...]] = []
        hm = 0
        for c in real:
            hm |= 1 << c
        minimum = rules.opening_meld_min_points
        for m, cards in _TRIPLES:
            if m & hm == m:
                if minimum and sum(min(c % 13 + 1, 10) for c in cards) < minimum:
                    continue
                out.append(table + (cards,))
        opening = rules.opening_meld_per_player and not view.opened[view.seat or 0]
        if not opening and table:
            for i, meld in enumerate(table):
                for c in set(hand):
                    melds = [meld]
                    left = [c]
                    if lay_off(melds, left):
                        out.append(table[:i] + (melds[0],) + table[i + 1:])
        return out
