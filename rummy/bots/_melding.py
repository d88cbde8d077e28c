"""Cheap meld finding shared by the ``random`` and ``basic`` bots (no manipulation).

These helpers only build *candidate* new tables; the engine validates every meld action
(R5) when the bot sends it. The solver (:mod:`rummy.solver`) is the exact search.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from rummy.cards import JOKER, TABLE_JOKER_BASE, hand_points
from rummy.melds import EFF_BIT, VALID_MELDS, MeldCards

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


def form_hand_melds(hand: Sequence[int]) -> tuple[list[MeldCards], list[int]]:
    """Greedily take legal melds of real cards from ``hand``, longest first.

    Returns:
        ``(melds, leftover)``: melds of real cards (table cards), and the hand cards left.
    """
    left = list(hand)
    melds: list[MeldCards] = []
    hm = _mask(left)
    candidates = sorted(x for c in {c for c in left if c < 52} for x in _BY_LOW[c]
                        if x[1] & hm == x[1])
    while candidates:  # the hand only shrinks, so the candidates only shrink
        _, m, cards = candidates[0]
        melds.append(cards)
        for c in cards:
            left.remove(c)
        hm = _mask(left)
        candidates = [x for x in candidates if x[1] & hm == x[1]]
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


@functools.lru_cache(maxsize=65536)
def _fit_bits(mask: int, size: int) -> int:
    """The real cards ``d`` (as bits) for which a meld of effective-card mask ``mask`` and
    ``size - 1`` cards plus ``d`` is a legal meld of ``size`` cards (R4.2, R4.3)."""
    valid = VALID_MELDS.get
    bits = 0
    for d in range(52):
        if valid(mask + (1 << d)) == size:
            bits |= 1 << d
    return bits


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
