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


def _full_position(rng: random.Random) -> tuple[Table, tuple[int, ...]]:
    """The ``full`` family of :func:`edge_position`."""
    melds: list[tuple[int, ...]] = []
    hand: list[int] = []
    table_jokers = 0
    for suit in rng.sample(range(4), rng.choice((1, 1, 1, 2))):
        start = rng.choice((0, 1))  # A..K or 2..A
        meld = [suit * 13 + p % 13 for p in range(start, start + 13)]
        if table_jokers < 2 and rng.random() < 0.5:
            i = rng.randrange(13)
            meld[i] += TABLE_JOKER_BASE
            table_jokers += 1
            if rng.random() < 0.5:
                hand.append(meld[i] - TABLE_JOKER_BASE)  # the real card of the joker
        melds.append(tuple(meld))
        hand += [suit * 13] * rng.choice((1, 1, 2)) if start == 0 or rng.random() < 0.5 \
            else []
    used = [0] * 52
    for c in [c for m in melds for c in m if c < 52] + hand:
        used[c] += 1
    hand = [c for c in hand if used[c] <= 2 or not used.__setitem__(c, used[c] - 1)]
    for _ in range(rng.choice((0, 0, 1, 2))):
        c = rng.randrange(52)
        if used[c] < 2:
            used[c] += 1
            hand.append(c)
    hand += [JOKER] * min(2 - table_jokers, rng.choice((0, 1, 1, 2)))
    if not hand:
        hand.append(JOKER if table_jokers < 2 else rng.choice(
            [c for c in range(52) if used[c] < 2]))
    return canonical_table(melds), tuple(sorted(hand))


#: families of :func:`edge_position`, each built to reach one edge of R4/R5
EDGE_FAMILIES = ("full", "long", "aces", "jokers", "groups", "mixed", "stress")


def edge_position(rng: random.Random, family: str | None = None
                  ) -> tuple[Table, tuple[int, ...]]:
    """A random ``(table, hand)`` built to reach the edges of R4/R5 where wildcards are hard
    to place: long sequences up to 13 cards (A..K, 2..A), both aces of a suit, ace high
    and low, 0–2 jokers on the table and in the hand, groups of four with jokers.

    ``family`` (one of :data:`EDGE_FAMILIES`, random if ``None``) biases the draw:

    * ``full``: one or two sequences of 13 cards (A..K or 2..A, sometimes with a joker),
      a hand of the other ace(s), 0–2 jokers and at most two other cards: the wildcard
      must then find room beside sequences with no free end (R4.3);
    * ``long``: sequences of 8–13 cards, hands on the same suits;
    * ``aces``: sequences ending at the low or high ace, hands rich in aces;
    * ``jokers``: two jokers between table and hand, on every kind of meld;
    * ``groups``: groups of 3–4 with jokers, hands holding the fourth suit;
    * ``mixed``: any of the above together;
    * ``stress``: 3 jokers in all, one more than a real deck has (R1.2), so that a meld
      of jokers alone can be needed: the solver accepts such positions (up to 7 copies
      of one card counting jokers), the engine never deals them.

    The table is always legal (I2); the hand is drawn from the cards left, biased
    towards the table's suits and ranks. Deterministic for a given ``rng`` state.
    """
    family = family or rng.choice(EDGE_FAMILIES)
    if family not in EDGE_FAMILIES:
        raise ValueError(f"family must be one of {EDGE_FAMILIES}, got {family!r}")
    if family == "full":
        return _full_position(rng)
    counts = [2] * 52
    jokers = 3 if family == "stress" else 2
    declared = [0] * 52
    joker_p = {"jokers": 0.5, "groups": 0.4, "stress": 0.6}.get(family, 0.2)
    melds: list[tuple[int, ...]] = []
    suits = rng.sample(range(4), rng.choice((1, 1, 2, 2, 3)))
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4, 5))):
        kind = family if family in ("long", "aces", "groups") else rng.choice(
            ("long", "aces", "groups", "short"))
        suit = rng.choice(suits)
        if kind == "long":
            length = rng.choice((8, 9, 10, 11, 12, 12, 13, 13, 13))
            start = rng.randint(0, 14 - length)
            cards = [suit * 13 + p % 13 for p in range(start, start + length)]
        elif kind == "aces":
            length = rng.choice((3, 4, 5, 7, 10, 12, 13, 13))
            start = 0 if rng.random() < 0.5 else 14 - length
            cards = [suit * 13 + p % 13 for p in range(start, start + length)]
        elif kind == "groups":
            rank = rng.choice((0, 0, 12, rng.randrange(13)))
            cards = [s * 13 + rank for s in rng.sample(range(4), rng.choice((3, 4)))]
        else:
            length = rng.randint(3, 5)
            start = rng.randint(0, 14 - length)
            cards = [suit * 13 + p % 13 for p in range(start, start + length)]
        meld: list[int] = []
        for c in cards:
            if jokers and not declared[c] and (counts[c] == 0
                                               or rng.random() < joker_p / len(cards) * 2):
                meld.append(TABLE_JOKER_BASE + c)
                declared[c] += 1
                jokers -= 1
            elif counts[c]:
                meld.append(c)
                counts[c] -= 1
            else:
                break
        else:
            if is_valid_meld(meld):
                melds.append(tuple(meld))
                continue
        for c in meld:  # give the cards back
            if c < 52:
                counts[c] += 1
            else:
                jokers += 1
                declared[c - TABLE_JOKER_BASE] -= 1
    focus_ranks = {e % 13 for m in melds for e in
                   (c - TABLE_JOKER_BASE if c >= TABLE_JOKER_BASE else c for c in m)}
    weights = []
    pool = []
    for c in range(52):
        w = 1.0
        if c // 13 in suits:
            w += 4
        if c % 13 in focus_ranks:
            w += 2
        if c % 13 == 0:
            w += 3 if family == "aces" else 1
        for _ in range(counts[c]):
            pool.append(c)
            weights.append(w)
    hand: list[int] = []
    for _ in range(rng.choice((1, 1, 2, 2, 3, 3, 4, 6, 8, 10))):
        if not pool:
            break
        i = rng.choices(range(len(pool)), weights)[0]
        hand.append(pool.pop(i))
        weights.pop(i)
    hand_jokers = min(jokers, rng.choice((0, 0, 1, 1, 2, 3 if family == "stress" else 2)))
    hand += [JOKER] * hand_jokers
    return canonical_table(melds), tuple(sorted(hand))


__all__ = ["random_table", "random_position", "edge_position", "EDGE_FAMILIES"]
