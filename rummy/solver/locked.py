"""Exact best play under the §11 variant ``joker_moves="locked"`` (R5.7 locked).

Under that variant every meld of the table that holds a joker (a *locked meld*) must end
up whole inside one meld of the new table, its jokers keeping their declarations; two or
more locked melds may share that meld (a *host*), and no card may stand in two of them
(:func:`rummy.melds.check_action`). Every other card moves freely, as under R5.2–R5.8.

The search behind :func:`rummy.solver.solve` knows nothing of melds that must stay whole,
so this module wraps it. Jokers are few (at most the deck's two, R1.2), so locked melds are
few, and so are their hosts: the module enumerates

1. how the locked melds are grouped into hosts (every set partition; a block of two or more
   is a join),
2. for each block, every legal meld (R4.2/R4.3, under the game's ``ace_high``) that holds
   all of its cards: the block itself, a group with a further suit, a sequence extended at
   either end or filling the gaps between the joined melds,
3. for each slot of a host that the block does not fill, a real card (from the other
   table melds first, then from the hand) or a joker from the hand declared as that card,

and for each choice solves the rest (the other table cards, which must all be placed, and
the hand cards left) with the unrestricted search, bounded by the best play found so far.
The best over the enumeration is the best locked-legal play.

Why it is exact:

* every locked-legal new table is a set of hosts (one per block of the partition its
  locked melds fall into) plus other melds, which hold the other table cards and hand
  cards only (every table joker is in a locked meld, and stays in its host);
* a host sequence that runs ``e`` cards past the locked cards at one end, with
  ``e > 2 + max(0, 3 − h)`` (``h``: positions from the lowest to the highest locked card),
  can drop its ``e − max(0, 3 − h) ≥ 3`` farthest cards as a sequence of their own: the
  same cards are on the table and the host stays a legal meld, so the value is the same;
  only shorter ends are enumerated;
* a host slot filled by a real card takes a table copy before a hand copy: the table copy
  would otherwise have to be placed elsewhere, where the hand copy can stand in for it,
  so this loses no play;
* the rest is solved exactly by the unrestricted search (no table joker is left in it),
  which also admits adding no card when a host already adds one (R5.1 holds overall).

The cost grows with the product of the hosts of each locked meld (a few dozen each) and
is meant for the decks of R1.2 (at most two jokers on the table).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from rummy.cards import JOKER, TABLE_JOKER_BASE

#: ``search(table, hand, keep, bound, node_limit) -> (play, optimal, nodes)``: the
#: unrestricted search on a joker-free table, finding only plays that leave less than
#: ``bound`` in the hand (see ``rummy.solver._best_play``); ``play`` is ``(new table,
#: hand cards added)`` or ``None``.
RestSearch = Callable[[list[tuple[int, ...]], tuple[int, ...], tuple[int, ...], int,
                       int | None], tuple[tuple[list[tuple[int, ...]], tuple[int, ...]] | None,
                                          bool, int]]


def effective(c: int) -> int:
    """The card a table card stands for: a declared joker's card, or the card (R1.4)."""
    return c - TABLE_JOKER_BASE if c >= TABLE_JOKER_BASE else c


def host_slots(cards: frozenset[int], ace_high: bool = True) -> list[tuple[int, ...]]:
    """The slots (effective cards not in ``cards``) of every legal meld that holds every
    effective card of ``cards``, and whose ends run past them only as far as can matter
    (see the module docstring): groups of 3–4 of one rank (R4.2), sequences of 3–13 of one
    suit (R4.3; without ``ace_high`` no high ace, §11). ``[]`` when there is none."""
    out: list[tuple[int, ...]] = []
    ranks = {c % 13 for c in cards}
    suits = {c // 13 for c in cards}
    if len(ranks) == 1 and cards:
        rank = next(iter(ranks))
        missing = [s for s in range(4) if s not in suits]
        if len(cards) >= 3:
            out.append(())
        for s in missing:  # one more suit
            if len(cards) + 1 >= 3:
                out.append((s * 13 + rank,))
        if len(cards) == 2:  # a group of four from two cards
            out.append(tuple(s * 13 + rank for s in missing))
        elif len(cards) == 1:
            for i, a in enumerate(missing):
                for b in missing[i + 1:]:
                    out.append((a * 13 + rank, b * 13 + rank))
            out.append(tuple(s * 13 + rank for s in missing))
    if len(suits) == 1 and len(ranks) == len(cards):
        suit = next(iter(suits))
        top = 13 if ace_high else 12  # highest line position (13: the high ace)
        for lo in range(top + 1):
            for hi in range(lo + 2, min(lo + 12, top) + 1):
                pos = []
                for c in cards:
                    r = c % 13
                    if lo <= r <= hi:
                        pos.append(r)
                    elif r == 0 and ace_high and lo <= 13 <= hi:
                        pos.append(13)
                    else:
                        break
                else:
                    low, high = min(pos), max(pos)
                    reach = 2 + max(0, 3 - (high - low + 1))
                    if low - lo <= reach and hi - high <= reach:
                        taken = set(pos)
                        out.append(tuple(sorted(suit * 13 + p % 13 for p in range(lo, hi + 1)
                                                if p not in taken)))
    return sorted(set(out), key=lambda t: (len(t), t))


def partitions(n: int) -> Iterator[list[tuple[int, ...]]]:
    """Every set partition of ``range(n)`` into blocks (ascending tuples), the one of
    singletons first."""
    if n == 0:
        yield []
        return
    for rest in partitions(n - 1):
        last = n - 1
        yield rest + [(last,)]
        for i in range(len(rest)):
            yield rest[:i] + [rest[i] + (last,)] + rest[i + 1:]


@dataclass(slots=True)
class _Pool:
    """Cards left for host slots: table copies (must be placed), hand copies and hand
    jokers (optional)."""

    table: Counter[int]
    hand: Counter[int]
    jokers: int


def _fills(slots: Sequence[int], pool: _Pool) -> Iterator[tuple[list[int], list[int]]]:
    """Every way to fill ``slots`` from ``pool`` (changed while a fill is yielded, restored
    after): ``(physical cards, hand cards used)``, a table copy before a hand copy, a real
    card before a joker."""
    if not slots:
        yield [], []
        return
    c, rest = slots[0], slots[1:]
    if pool.table[c]:
        pool.table[c] -= 1
        for cards, used in _fills(rest, pool):
            yield [c, *cards], used
        pool.table[c] += 1
    elif pool.hand[c]:
        pool.hand[c] -= 1
        for cards, used in _fills(rest, pool):
            yield [c, *cards], [c, *used]
        pool.hand[c] += 1
    if pool.jokers:
        pool.jokers -= 1
        for cards, used in _fills(rest, pool):
            yield [TABLE_JOKER_BASE + c, *cards], [JOKER, *used]
        pool.jokers += 1


@dataclass(frozen=True, slots=True)
class LockedResult:
    """What :func:`solve_locked` found.

    Attributes:
        table: the new table (melds of table cards, not canonical), or ``None`` when no
            locked-legal meld action adds a card within the budget.
        cards: hand cards added (``JOKER`` for a joker).
        optimal: False only when ``node_limit`` stopped a search.
    """

    table: list[tuple[int, ...]] | None
    cards: tuple[int, ...]
    optimal: bool


def solve_locked(table: Sequence[tuple[int, ...]], hand: tuple[int, ...],
                 keep: tuple[int, ...], cost: Sequence[int], wcost: int, *,
                 search: RestSearch, node_limit: int | None, ace_high: bool = True,
                 floor: int = 0) -> LockedResult:
    """The best meld action under ``joker_moves="locked"`` (see the module docstring).

    Args:
        table: the melds before the action; those holding a table joker are locked.
        hand: the hand (``JOKER`` for a joker); ``keep``: cards that stay in it.
        cost, wcost: cost of leaving each real card, and a joker, in the hand (the
            solver's objective: the play left with the least cost is best).
        search: the unrestricted search for the rest (:data:`RestSearch`).
        node_limit: states all searches together may expand (``None``: no limit).
        ace_high: §11 ``ace_high``.
        floor: a lower bound of the cost left by any play (the unrestricted best); the
            enumeration stops once a play reaches it.

    Returns:
        A :class:`LockedResult`; ties go to the first play found in the fixed order of
        the enumeration.
    """
    locked = [m for m in table if any(c >= TABLE_JOKER_BASE for c in m)]
    free_cards = Counter(c for m in table if m not in locked for c in m)
    hand_c = Counter(hand)
    hand_c.subtract(Counter(keep))
    jokers = hand_c.pop(JOKER, 0)
    hand_real = Counter({c: k for c, k in hand_c.items() if k > 0})
    all_cost = sum(cost[c] * k for c, k in hand_real.items()) + wcost * jokers
    eff = [Counter(effective(c) for c in m) for m in locked]
    if any(max(e.values()) > 1 for e in eff):
        return LockedResult(None, (), True)  # two cards for one place: no legal meld holds it
    pool = _Pool(free_cards, hand_real, jokers)
    best_left = all_cost  # adding nothing is not a play (R5.1)
    best: tuple[list[tuple[int, ...]], tuple[int, ...]] | None = None
    used_nodes = 0
    optimal = True

    def card_cost(c: int) -> int:
        return wcost if c == JOKER else cost[c]

    def choose(blocks: list[tuple[int, ...]], placed: list[tuple[int, ...]],
               from_hand: list[int]) -> bool:
        """Fill the hosts of ``blocks`` in turn, then search the rest; False to stop."""
        nonlocal best_left, best, used_nodes, optimal
        if not blocks:
            if best_left <= floor:
                return False
            hand_cost = sum(map(card_cost, from_hand))
            bound = min(best_left, all_cost - hand_cost + (1 if from_hand else 0))
            limit = None if node_limit is None else node_limit - used_nodes
            if limit is not None and limit < 1:
                optimal = False
                return False
            rest_table = [tuple(sorted(pool.table.elements()))] if +pool.table else []
            rest_hand = list(keep)
            rest_hand += list(pool.hand.elements()) + [JOKER] * pool.jokers
            found, proven, nodes = search(rest_table, tuple(sorted(rest_hand)), keep, bound,
                                          limit)
            used_nodes += nodes
            optimal = optimal and proven
            if found is not None:
                rest_new, rest_added = found
                left = all_cost - hand_cost - sum(map(card_cost, rest_added))
                if left < best_left:
                    best_left = left
                    best = (placed + [m for m in rest_new if m],
                            tuple(sorted(from_hand + list(rest_added))))
            return True
        block, others = blocks[0], blocks[1:]
        have: Counter[int] = Counter()
        cards: list[int] = []
        for i in block:
            have.update(eff[i])
            cards.extend(locked[i])
        if max(have.values()) > 1:
            return True  # two locked melds that share a card cannot share a meld
        for slots in host_slots(frozenset(have), ace_high):
            for fill, used in _fills(slots, pool):
                if not choose(others, placed + [tuple(cards + fill)], from_hand + used):
                    return False
        return True

    for blocks in partitions(len(locked)):
        if not choose(blocks, [], []):
            break
    if best is None:
        return LockedResult(None, (), optimal)
    return LockedResult(best[0], best[1], optimal)


__all__ = ["LockedResult", "effective", "host_slots", "partitions", "solve_locked"]
