"""``basic``: plays every new meld it can form from its hand and lays single cards off onto
table melds, without deeper manipulation; knocks whenever allowed."""

from __future__ import annotations

from rummy.bots._melding import basic_plan
from rummy.bots.base import BotBase, legal_for
from rummy.commands import Command, Draw, Knock, Meld, Pass
from rummy.views import PlayerView


class BasicBot(BotBase):
    """Greedy without manipulation: new melds from the hand (longest first), jokers to
    complete pairs, then single-card lay-offs on any meld; melds whenever it can, knocks
    whenever allowed (R6.1). Under ``opening_meld_per_player`` it opens with new melds only
    (R5.5)."""

    name = "basic"

    def act(self, view: PlayerView) -> Command:
        """See :class:`rummy.bots.base.Bot`."""
        seat = view.turn
        if "knock" in view.actions:
            return Knock(seat)
        kind = view.actions[0]
        if kind == "draw":
            return Draw(seat)
        new_table = self.plan(view)
        if new_table is not None and view.rules.restricts_melds and \
                not legal_for(view, new_table):
            new_table = None  # a plan of the default rules that a §11 variant forbids
        return Meld(seat, new_table) if new_table is not None else Pass(seat)

    #: the new table this bot would make, or ``None`` to pass
    #: (:func:`rummy.bots._melding.basic_plan`)
    plan = staticmethod(basic_plan)
