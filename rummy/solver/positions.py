"""Random legal positions for tests, benchmarks and the differential check.

A position is ``(table, hand)`` drawn from a two-deck (or one-deck) card multiset: the table
is a random arrangement of legal melds (groups of 3–4, sequences of 3–8, some with a joker
in place of a card, declared as that card), the hand a random sample of the cards left.
Deterministic for a given ``random.Random`` state; pure (no I/O).
"""

from __future__ import annotations

import random

from rummy.cards import JOKER, TABLE_JOKER_BASE
from rummy.melds import Table, canonical_table, is_valid_meld


def random_table(rng: random.Random, size: int, *, decks: int = 2,
                 joker_rate: float = 0.15) -> tuple[Table, list[int]]:
    """A random legal table of about ``size`` cards (never more than ``size + 7``).

    Returns:
        ``(table, rest)``: the canonical table and the cards of the deck not on it
        (real cards 0..51 and ``JOKER``), shuffled.
    """
    counts = [decks] * 52
    jokers = decks
    melds: list[tuple[int, ...]] = []
    placed = 0
    attempts = 0
    while placed < size and attempts < 2000:
        attempts += 1
        if rng.random() < 0.55:
            suit = rng.randrange(4)
            length = rng.choice((3, 3, 3, 4, 4, 5, 6, 7, 8))
            start = rng.randrange(0, 14 - length + 1)
            cards = [suit * 13 + (p % 13) for p in range(start, start + length)]
        else:
            rank = rng.randrange(13)
            suits = rng.sample(range(4), rng.choice((3, 3, 4)))
            cards = [s * 13 + rank for s in suits]
        need: dict[int, int] = {}
        for c in cards:
            need[c] = need.get(c, 0) + 1
        missing = [c for c in cards if counts[c] < need[c]]
        use_joker = jokers > 0 and (len(missing) == 1 or (not missing
                                                          and rng.random() < joker_rate))
        if len(missing) > 1 or (missing and not use_joker):
            continue
        meld = list(cards)
        if use_joker:
            j = missing[0] if missing else rng.choice(cards)
            meld[meld.index(j)] = TABLE_JOKER_BASE + j
            jokers -= 1
        for c in meld:
            if c < 52:
                counts[c] -= 1
        assert is_valid_meld(meld)
        melds.append(tuple(meld))
        placed += len(meld)
    rest = [c for c in range(52) for _ in range(counts[c])] + [JOKER] * jokers
    rng.shuffle(rest)
    return canonical_table(melds), rest


def random_position(rng: random.Random, table_size: int, hand_size: int, *,
                    decks: int = 2, joker_rate: float = 0.15) -> tuple[Table, tuple[int, ...]]:
    """A random ``(table, hand)`` with a table of about ``table_size`` cards and a hand of
    ``hand_size`` cards (fewer if the deck runs out), hand ascending."""
    table, rest = random_table(rng, table_size, decks=decks, joker_rate=joker_rate)
    return table, tuple(sorted(rest[:hand_size]))


__all__ = ["random_table", "random_position"]
