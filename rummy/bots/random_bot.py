"""``random``: a uniformly random legal choice among cheap candidates (baseline bot).

The candidates are not built one by one: the bot counts them, lets its seeded
generator pick an index exactly as ``random.Random.choice`` would on the full list, and
builds only the new table at that index. The candidates and their order are those of
:meth:`RandomBot.candidate_list` (the reference, kept for the tests), so a seed gives the
same choices as when the whole list was built.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache, reduce
from operator import or_

from rummy.bots._melding import _TRIPLES, lay_off
from rummy.bots.base import BotBase, legal_for
from rummy.cards import JOKER, TABLE_JOKER_BASE, hand_points
from rummy.commands import Command, Draw, EndTurn, Knock, Meld, Pass
from rummy.melds import EFF_BIT, VALID_MELDS, MeldCards, Table
from rummy.views import PlayerView


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
_TRIPLE_INDEX: dict[int, int] = {m: i for i, (m, _) in enumerate(_TRIPLES)}
#: points of each 3-card meld (R1.5), by its index in ``_TRIPLES``
_TRIPLE_POINTS: tuple[int, ...] = tuple(hand_points(cards) for _, cards in _TRIPLES)
#: index in ``_TRIPLES`` of the 3-card sequence of suit ``s`` from position ``p`` (0..11;
#: position 13 is the high ace, R4.3)
_SEQ_INDEX: tuple[tuple[int, ...], ...] = tuple(
    tuple(_TRIPLE_INDEX[sum(1 << (s * 13 + q % 13) for q in range(p, p + 3))] for p in range(12))
    for s in range(4))
#: index in ``_TRIPLES`` of the 3-card group of rank ``r`` in each choice of three suits
#: (the suits of the masks a&b&c, a&b&d, a&c&d, b&c&d in ``_triples_of``)
_GROUP_INDEX: tuple[tuple[int, ...], ...] = tuple(
    tuple(_TRIPLE_INDEX[sum(1 << (s * 13 + r) for s in suits)] for r in range(13))
    for suits in ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)))
_SUIT = (1 << 13) - 1
#: bit of each hand card (0 for a joker)
_BIT: tuple[int, ...] = tuple(1 << c for c in range(52)) + (0,)


def _triples_of(hm: int) -> list[int]:
    """Indices in ``_TRIPLES`` (ascending) of the 3-card melds within the card mask ``hm``:
    runs of three found with shifts in each suit's 13 bits (the ace also above the king),
    groups as ranks held in three given suits."""
    out: list[int] = []
    a, b, c, d = hm & _SUIT, hm >> 13 & _SUIT, hm >> 26 & _SUIT, hm >> 39 & _SUIT
    for index, bits in zip(_SEQ_INDEX, (a, b, c, d), strict=True):
        ext = bits | (bits & 1) << 13
        starts = ext & ext >> 1 & ext >> 2
        while starts:
            low = starts & -starts
            starts ^= low
            out.append(index[low.bit_length() - 1])
    for index, ranks in zip(_GROUP_INDEX, (a & b & c, a & b & d, a & c & d, b & c & d),
                            strict=True):
        while ranks:
            low = ranks & -ranks
            ranks ^= low
            out.append(index[low.bit_length() - 1])
    out.sort()
    return out


@lru_cache(maxsize=4096)
def _meld_extensions(meld: MeldCards) -> int:
    """The lay-off cards of one table meld (see :func:`_extensions`). Cached, bounded: a
    table keeps most of its melds from one decision to the next (97% hits over 90 random
    games, against 16% for a cache of whole tables, which change at every meld action)."""
    mm = sum(map(EFF_BIT.__getitem__, meld))
    ext = _EXT.get(mm)
    if ext is None or VALID_MELDS[mm] != len(meld):  # not a legal meld
        ext = _extensions(mm, len(meld) + 1)
    return ext


class _Candidates(Sequence[Table]):
    """The candidate new tables of one decision, in the reference order, built on demand:
    first each 3-card meld of the hand added to the table (``_TRIPLES`` order), then for
    each table meld in turn, each distinct hand card (in ``set(hand)`` order) that lays off
    onto it."""

    __slots__ = ("table", "hand", "triples", "exts", "counts", "size")

    def __init__(self, table: Table, hand: tuple[int, ...], triples: list[int],
                 exts: tuple[int, ...], counts: list[int]) -> None:
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
            return table + (_TRIPLES[self.triples[k]][1],)
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


#: the commands without a table, one shared instance per seat (immutable values; a frozen
#: dataclass costs an object.__setattr__ per field to build)
_DRAW: tuple[Draw, ...] = tuple(Draw(seat) for seat in range(5))
_PASS: tuple[Pass, ...] = tuple(Pass(seat) for seat in range(5))


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
        if "knock" in actions and actions[0] != "knock" and self.rng.random() < 0.5:
            return Knock(seat)  # knock_timing=start (§11): a knock at the turn's start
        if actions[0] == "draw":
            return _DRAW[seat] if 0 <= seat < 5 else Draw(seat)
        if actions[0] == "knock":
            return Knock(seat) if self.rng.random() < 0.5 else EndTurn(seat)
        if self.rng.random() < 0.5:  # pass half of the time without looking
            return _PASS[seat] if 0 <= seat < 5 else Pass(seat)
        options = self.candidates(view)
        if not options:
            return _PASS[seat] if 0 <= seat < 5 else Pass(seat)
        choice = self.rng.choice(options)
        if view.rules.restricts_melds and not legal_for(view, choice):
            return Pass(seat)  # a candidate of the default rules that a §11 variant forbids
        return Meld(seat, choice)

    @staticmethod
    def candidates(view: PlayerView) -> Sequence[Table]:
        """The candidate new tables, equal to :meth:`candidate_list` item for item but
        counted without being built (only the one chosen is)."""
        hand = view.hand
        table = view.table
        hm = reduce(or_, map(_BIT.__getitem__, hand), 0)
        triples = _triples_of(hm)
        minimum = view.rules.opening_meld_min_points
        if minimum:
            triples = [i for i in triples if _TRIPLE_POINTS[i] >= minimum]
        exts: tuple[int, ...] = ()
        counts: list[int] = []
        opening = view.rules.opening_meld_per_player and not view.opened[view.seat or 0]
        if not opening and table:
            exts = tuple(map(_meld_extensions, table))
            if JOKER in hand:
                counts = [(ext & hm).bit_count() + (ext != 0) for ext in exts]
            else:
                counts = [(ext & hm).bit_count() for ext in exts]
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
                if minimum and hand_points(cards) < minimum:
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
