"""Cheap meld finding shared by the ``random`` and ``basic`` bots (no manipulation).

These helpers only build *candidate* new tables; the engine validates every meld action
(R5) when the bot sends it. The solver (:mod:`rummy.solver`) is the exact search.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from rummy.cards import JOKER, TABLE_JOKER_BASE, hand_points
from rummy.melds import EFF_BIT, VALID_MELDS, MeldCards
from rummy.views import PlayerView

#: legal melds as (mask, cards) sorted longest first, then most points: a greedy order.
_MELDS_BY_SIZE: tuple[tuple[int, tuple[int, ...]], ...] = tuple(sorted(
    ((m, tuple(i for i in range(52) if m >> i & 1)) for m in VALID_MELDS),
    key=lambda mc: (-len(mc[1]), -hand_points(mc[1]), mc[1])))
#: for each real card, (greedy order, mask, cards) of the legal melds whose lowest card it is.
_BY_LOW: tuple[tuple[tuple[int, int, tuple[int, ...]], ...], ...] = tuple(
    tuple((i, m, cards) for i, (m, cards) in enumerate(_MELDS_BY_SIZE)
          if (m & -m).bit_length() - 1 == low)
    for low in range(52))
_TRIPLES: tuple[tuple[int, tuple[int, ...]], ...] = tuple(
    mc for mc in _MELDS_BY_SIZE if len(mc[1]) == 3)


def _mask(cards: Sequence[int]) -> int:
    m = 0
    for c in cards:
        if c < 52:
            m |= 1 << c
    return m


def _chains(entries: Sequence[tuple[int, int, tuple[int, ...]]]
            ) -> tuple[tuple[tuple[int, int, tuple[int, ...]], ...], ...]:
    """``entries`` (order, mask, cards) cut into chains in which each mask holds the one
    before it (shortest first): once a mask is not in the hand, neither is the rest of
    its chain."""
    chains: list[list[tuple[int, int, tuple[int, ...]]]] = []
    for e in sorted(entries, key=lambda x: (len(x[2]), x[0])):
        for ch in chains:
            if e[1] & ch[-1][1] == ch[-1][1]:
                ch.append(e)
                break
        else:
            chains.append([e])
    return tuple(map(tuple, chains))


#: :data:`_BY_LOW` as chains (:func:`_chains`), per lowest card
_LOW_CHAINS = tuple(_chains(entries) for entries in _BY_LOW)


def hand_meld_entries(hand: Sequence[int]) -> list[tuple[int, int, tuple[int, ...]]]:
    """Every legal meld of distinct real cards that ``hand`` holds, as ``(place in the
    greedy order of :data:`_MELDS_BY_SIZE`, mask, cards)``, in that order. Found by
    walking chains of nested melds per lowest card (:data:`_LOW_CHAINS`). The 3-card
    entries are the hand's triples, most points first, then by cards."""
    hm = 0
    held = set()
    for c in hand:
        if c < 52:
            hm |= 1 << c
            held.add(c)
    found = []
    for c in held:
        for chain in _LOW_CHAINS[c]:
            for x in chain:
                if x[1] & hm != x[1]:
                    break
                found.append(x)
    found.sort()
    return found


def form_hand_melds(hand: Sequence[int],
                    entries: list[tuple[int, int, tuple[int, ...]]] | None = None
                    ) -> tuple[list[MeldCards], list[int]]:
    """Greedily take legal melds of real cards from ``hand``, longest first (then most
    points, then by cards: the order of :data:`_MELDS_BY_SIZE`). ``entries``: the
    hand's :func:`hand_meld_entries`, when the caller has them already.

    Returns:
        ``(melds, leftover)``: melds of real cards (table cards), and the hand cards left,
        in ``hand``'s order.
    """
    left = list(hand)
    found = hand_meld_entries(hand) if entries is None else entries
    melds: list[MeldCards] = []
    if not found:
        return melds, left
    while found:  # the hand only shrinks, so the candidates only shrink
        cards = found[0][2]
        melds.append(cards)
        for c in cards:
            left.remove(c)
        hm = _mask(left)
        found = [x for x in found if x[1] & hm == x[1]]
    return melds, left


def joker_melds(left: list[int]) -> list[MeldCards]:
    """Use hand jokers in ``left`` to complete two real cards into a 3-card meld (R5.6).

    Mutates ``left`` (removes the cards used). Returns the new melds.
    """
    out: list[MeldCards] = []
    while JOKER in left:
        hm = _mask(left)
        for m, cards in _TRIPLES:
            have = m & hm
            if have != m and bin(have).count("1") == 2:
                missing = (m & ~have).bit_length() - 1
                used = [c for c in cards if c != missing]
                for c in used:
                    left.remove(c)
                left.remove(JOKER)
                out.append(tuple(used) + (TABLE_JOKER_BASE + missing,))
                break
        else:
            break
    return out


def _fit_bits(mask: int, size: int) -> int:
    """The real cards ``d`` (as bits) for which a meld of effective-card mask ``mask`` and
    ``size - 1`` cards plus ``d`` is a legal meld of ``size`` cards (R4.2, R4.3): looked
    up for a legal meld (:data:`_LEGAL_FITS`), else computed and cached."""
    if VALID_MELDS.get(mask) == size - 1:
        return _LEGAL_FITS[mask]
    return _fit_bits_of(mask, size)


@functools.lru_cache(maxsize=65536)
def _fit_bits_of(mask: int, size: int) -> int:
    """:func:`_fit_bits`, computed."""
    valid = VALID_MELDS.get
    bits = 0
    for d in range(52):
        if valid(mask + (1 << d)) == size:
            bits |= 1 << d
    return bits


#: :func:`_fit_bits` of every legal meld's mask (with its size plus one): made once
_LEGAL_FITS: dict[int, int] = {m: _fit_bits_of(m, n + 1) for m, n in VALID_MELDS.items()}


def lay_off(melds: list[MeldCards], left: list[int], *, jokers: bool = True) -> bool:
    """Add single hand cards to the ends or gaps of ``melds`` while any fits (R5.3).

    Mutates ``melds`` and ``left``; returns True if any card was laid off. A hand joker is
    laid off declared as the first card that keeps the meld legal (R5.6). Which cards fit
    a meld is cached per meld mask.
    """
    changed = False
    progress = True
    masks = [sum(map(EFF_BIT.__getitem__, meld)) for meld in melds]
    while progress and left:
        progress = False
        for i, meld in enumerate(melds):
            mm = masks[i]
            fits = _fit_bits(mm, len(meld) + 1)
            if not fits:
                continue
            for c in left:
                if c == JOKER:
                    if not jokers:
                        continue
                    d = (fits & -fits).bit_length() - 1  # the first declaration that fits
                    melds[i] = meld + (TABLE_JOKER_BASE + d,)
                    masks[i] = mm + (1 << d)
                elif fits >> c & 1:
                    melds[i] = meld + (c,)
                    masks[i] = mm + (1 << c)
                else:
                    continue
                left.remove(c)
                progress = changed = True
                break
    return changed


@functools.lru_cache(maxsize=16384)
def _meld_bits(meld: MeldCards) -> tuple[int, int]:
    """A meld's effective-card mask and the real cards (bits) that extend it to a legal
    meld (:func:`_fit_bits`). Cached per meld (a meld outlives many tables)."""
    mm = sum(map(EFF_BIT.__getitem__, meld))
    return mm, _fit_bits(mm, len(meld) + 1)


def _table_fits(table: tuple[MeldCards, ...]) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """Per meld of ``table``: its effective-card mask and the real cards (bits) that
    extend it to a legal meld (:func:`_meld_bits`, cached per meld), and the union of
    those bits."""
    bits = list(map(_meld_bits, table))
    masks = tuple(b[0] for b in bits)
    fits = tuple(b[1] for b in bits)
    union = 0
    for f in fits:
        union |= f
    return masks, fits, union


def lay_off_ascending(table: tuple[MeldCards, ...], melds: list[MeldCards],
                      left: list[int],
                      table_fits: tuple[tuple[int, ...], tuple[int, ...], int] | None = None
                      ) -> bool:
    """:func:`lay_off` with jokers for a ``left`` in ascending order (jokers last, as a
    view's hand is): the same lay-offs in the same order, found with bit masks. ``melds``
    holds ``table``'s melds first (its part of the work is cached per table), then new
    ones. The first card of ``left`` that fits a meld is its lowest real card that fits,
    else a hand joker declared as the first card that keeps the meld legal (R5.3, R5.6).

    ``table_fits``: ``_table_fits(table)``, when the caller has it.

    Mutates ``melds`` and ``left``; returns True if any card was laid off.
    """
    if not left or not melds:
        return False
    masks0, fits0, union = _table_fits(table) if table_fits is None else table_fits
    new_masks = []
    new_fits = []
    for meld in melds[len(table):]:
        mm = sum(map(EFF_BIT.__getitem__, meld))
        new_masks.append(mm)
        f = _fit_bits(mm, len(meld) + 1)
        new_fits.append(f)
        union |= f
    if not union:
        return False  # no meld takes any card
    lb = 0
    jokers = 0
    for c in left:
        if c == JOKER:
            jokers += 1
        else:
            lb |= 1 << c
    if not (union & lb or jokers):
        return False  # no card fits any meld
    counts: dict[int, int] = {}
    for c in left:
        counts[c] = counts.get(c, 0) + 1
    counts.pop(JOKER, None)
    masks = list(masks0) + new_masks
    fits = list(fits0) + new_fits
    changed = False
    progress = True
    while progress and (lb or jokers):
        progress = False
        for i, f in enumerate(fits):
            if not f:
                continue
            x = f & lb
            if x:
                c = (x & -x).bit_length() - 1
                melds[i] += (c,)
                masks[i] += 1 << c
                k = counts[c] - 1
                counts[c] = k
                if not k:
                    lb &= ~(1 << c)
            elif jokers:
                d = (f & -f).bit_length() - 1  # the first declaration that fits
                melds[i] += (TABLE_JOKER_BASE + d,)
                masks[i] += 1 << d
                c = JOKER
                jokers -= 1
            else:
                continue
            fits[i] = _fit_bits(masks[i], len(melds[i]) + 1)
            left.remove(c)
            progress = changed = True
            if not (lb or jokers):
                break
    return changed


def basic_plan(view: PlayerView,
               entries: list[tuple[int, int, tuple[int, ...]]] | None = None,
               fits: tuple[tuple[int, ...], tuple[int, ...], int] | None = None
               ) -> tuple[tuple[int, ...], ...] | None:
    """The new table the ``basic`` bot (:class:`rummy.bots.basic.BasicBot`, its ``plan``)
    would make for ``view``, or ``None`` to pass: every new meld it can form from its hand
    (longest first), jokers to complete pairs, then single-card lay-offs ascending (R5.1);
    under ``opening_meld_per_player`` new melds only, and no opening below
    ``opening_meld_min_points`` (R5.5). ``entries``: the hand's
    :func:`hand_meld_entries`, and ``fits`` the table's :func:`_table_fits`, when the
    caller has them (the same plan)."""
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
