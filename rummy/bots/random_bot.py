"""``random``: a uniformly random legal choice among cheap candidates (baseline bot).

The candidates are not built one by one (issue 15): the bot counts them, lets its seeded
generator pick an index exactly as ``random.Random.choice`` would on the full list, and
builds only the new table at that index. The candidates and their order are those of
:meth:`RandomBot.candidate_list` (the reference, kept for the tests), so a seed gives the
same choices as when the whole list was built.
"""

from __future__ import annotations

from collections.abc import Sequence

from rummy.bots._melding import _TRIPLES, lay_off
from rummy.bots.base import BotBase
from rummy.cards import JOKER, TABLE_JOKER_BASE
from rummy.commands import Command, Draw, EndTurn, Knock, Meld, Pass
from rummy.melds import EFF_BIT, VALID_MELDS
from rummy.melds import Meld as MeldT
from rummy.views import PlayerView

Table = tuple[MeldT, ...]


def _extensions(mm: int, n: int) -> int:
    """Bit mask of the real cards ``c`` with ``VALID_MELDS[mm + (1 << c)] == n``: the cards
    that lay off onto a meld of effective-card mask ``mm`` and ``n - 1`` cards (R5.3). A
    hand joker lays off declared as the lowest of them (R5.6), as in
    :func:`rummy.bots._melding.lay_off`."""
    valid = VALID_MELDS.get
    out = 0
    for c in range(52):
        if valid(mm + (1 << c)) == n:
            out |= 1 << c
    return out


#: lay-off cards of every legal meld, by its mask (a legal meld of ``k`` cards has a mask
#: of ``k`` bits, so the meld's length is implied); 369 entries, built at import
_EXT: dict[int, int] = {m: _extensions(m, k + 1) for m, k in VALID_MELDS.items()}
#: (index in ``_TRIPLES``, mask, cards, points) of each 3-card meld, by its lowest card
_TRIPLES_BY_LOW: tuple[tuple[tuple[int, int, MeldT, int], ...], ...] = tuple(
    tuple((i, m, cards, sum(min(c % 13 + 1, 10) for c in cards))
          for i, (m, cards) in enumerate(_TRIPLES) if cards[0] == low)
    for low in range(52))


class _Candidates(Sequence[Table]):
    """The candidate new tables of one decision, in the reference order, built on demand:
    first each 3-card meld of the hand added to the table (``_TRIPLES`` order), then for
    each table meld in turn, each distinct hand card (in ``set(hand)`` order) that lays off
    onto it."""

    __slots__ = ("table", "hand", "triples", "exts", "counts", "size")

    def __init__(self, table: Table, hand: tuple[int, ...], triples: list[MeldT],
                 exts: list[int], counts: list[int]) -> None:
        self.table = table
        self.hand = hand
        self.triples = triples
        self.exts = exts
        self.counts = counts
        self.size = len(triples) + sum(counts)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, k: int) -> Table:  # type: ignore[override]
        if not 0 <= k < self.size:
            raise IndexError(k)
        table = self.table
        if k < len(self.triples):
            return table + (self.triples[k],)
        k -= len(self.triples)
        for i, count in enumerate(self.counts):
            if k >= count:
                k -= count
                continue
            ext = self.exts[i]
            for c in set(self.hand):  # the reference's order
                if c == JOKER:
                    card = TABLE_JOKER_BASE + (ext & -ext).bit_length() - 1
                elif ext >> c & 1:
                    card = c
                else:
                    continue
                if not k:
                    return table[:i] + (table[i] + (card,),) + table[i + 1:]
                k -= 1
        raise AssertionError("candidate counts out of step")  # pragma: no cover


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
        options = self.candidates(view)
        if not options:
            return Pass(seat)
        return Meld(seat, self.rng.choice(options))

    @staticmethod
    def candidates(view: PlayerView) -> Sequence[Table]:
        """The candidate new tables, equal to :meth:`candidate_list` item for item but
        counted without being built (only the one chosen is)."""
        hand = view.hand
        table = view.table
        hm = 0
        for c in hand:
            if c != JOKER:
                hm |= 1 << c
        minimum = view.rules.opening_meld_min_points
        found: list[tuple[int, MeldT]] = []
        rest = hm
        while rest:
            low = rest & -rest
            rest ^= low
            for i, m, cards, points in _TRIPLES_BY_LOW[low.bit_length() - 1]:
                if m & hm == m and not (minimum and points < minimum):
                    found.append((i, cards))
        found.sort()
        triples = [cards for _, cards in found]
        exts: list[int] = []
        counts: list[int] = []
        opening = view.rules.opening_meld_per_player and not view.opened[view.seat or 0]
        if not opening and table:
            joker = JOKER in hand
            ext_of = _EXT.get
            eff = EFF_BIT.__getitem__
            for meld in table:
                mm = sum(map(eff, meld))
                ext = ext_of(mm)
                if ext is None or VALID_MELDS[mm] != len(meld):  # not a legal meld
                    ext = _extensions(mm, len(meld) + 1)
                exts.append(ext)
                counts.append((ext & hm).bit_count() + (1 if joker and ext else 0))
        return _Candidates(table, hand, triples, exts, counts)

    @staticmethod
    def candidate_list(view: PlayerView) -> list[Table]:
        """The candidates built one by one (the reference for :meth:`candidates`)."""
        hand = view.hand
        table = view.table
        rules = view.rules
        real = {c for c in hand if c != JOKER}
        out: list[Table] = []
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
