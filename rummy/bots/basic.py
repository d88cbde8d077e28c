"""``basic``: plays every new meld it can form from its hand and lays single cards off onto
table melds, without deeper manipulation; knocks whenever allowed."""

from __future__ import annotations

from rummy.bots._melding import form_hand_melds, joker_melds, lay_off_ascending
from rummy.bots.base import BotBase, legal_for
from rummy.cards import hand_points
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

    @staticmethod
    def plan(view: PlayerView,
             entries: list[tuple[int, int, tuple[int, ...]]] | None = None,
             fits: tuple[tuple[int, ...], tuple[int, ...], int] | None = None
             ) -> tuple[tuple[int, ...], ...] | None:
        """The new table this bot would make, or ``None`` to pass. ``entries``: the hand's
        :func:`rummy.bots._melding.hand_meld_entries`, and ``fits`` the table's
        ``_melding._table_fits``, when the caller has them (the same plan)."""
        rules = view.rules
        melds, left = form_hand_melds(view.hand, entries)
        melds += joker_melds(left)
        opening = rules.opening_meld_per_player and not view.opened[view.seat or 0]
        new_points = sum(map(hand_points, melds))
        if opening or not view.table:
            if not melds or new_points < rules.opening_meld_min_points:
                return None
            if opening:
                return view.table + tuple(melds)
        table = list(view.table) + melds
        laid = lay_off_ascending(view.table, table, left, fits)  # a view's hand ascends
        if not melds and not laid:
            return None
        return tuple(table)
