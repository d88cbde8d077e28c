"""Exact best-play search for the meld action (RULES.md §5): ``best_play(table, hand)``.

Pure standard library, deterministic, no I/O. The search itself is in
:mod:`rummy.solver.search` (model and exactness arguments in its docstring); this module
turns a position into count vectors, handles the joker rules R5.6–R5.9 and builds the new
table.

>>> from rummy.melds import parse_table
>>> from rummy.cards import parse_cards
>>> play = best_play(parse_table("5S 6S 7S"), parse_cards("8S KD"))
>>> play.points, format_play(play)
(8, '5S 6S 7S 8S')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rummy.cards import JOKER, POINTS, TABLE_JOKER_BASE
from rummy.melds import Meld, Table, canonical_table, table_text
from rummy.solver.search import (
    CARD_OF_POS,
    FIELD,
    FMASK,
    INF,
    LOW,
    MAX_COPIES,
    MELDS_ALL,
    POS_OF_CARD,
    Search,
)

#: weight of one point and one card in the cost of a card left in hand (see search.py)
_PTS_W = 256
_CARDS_W = 1 << 20
_OBJECTIVES = ("points", "cards")


@dataclass(frozen=True, slots=True)
class Play:
    """An optimal (or budget-limited) meld action.

    Attributes:
        table: the whole new table, canonical (:func:`rummy.melds.canonical_table`), every
            joker declared (R1.4). Passing it to :func:`rummy.melds.check_action` with the
            old table and the hand succeeds.
        cards: the hand cards added (R5.1, R5.4), ascending; a joker is ``JOKER``.
        points: R1.5 point value of ``cards``.
        optimal: ``False`` only when ``node_limit`` was reached before the search finished;
            the play is then legal but not proven best.
    """

    table: Table
    cards: tuple[int, ...]
    points: int
    optimal: bool = True


def _cost_vectors(objective: str) -> tuple[list[int], int]:
    if objective == "points":
        return [POINTS[CARD_OF_POS[p]] * _PTS_W + 1 for p in range(52)], 25 * _PTS_W + 1
    if objective == "cards":
        return [_CARDS_W + POINTS[CARD_OF_POS[p]] for p in range(52)], _CARDS_W + 25
    raise ValueError(f"objective must be one of {_OBJECTIVES}, got {objective!r}")


def _pack(counts: Sequence[int]) -> int:
    """Pack 52 counts (indexed by real card) into rank-major 4-bit fields."""
    v = 0
    for c, k in enumerate(counts):
        if k:
            if k > MAX_COPIES:
                raise ValueError(f"more than {MAX_COPIES} copies of one card in a position")
            v |= k << (FIELD * POS_OF_CARD[c])
    return v


def _prune_dead(m: int, o: int, wild: int) -> int:
    """Drop optional copies that no template can use, to a fixed point (exact: such a card
    is in no meld of any legal new table)."""
    while True:
        nzt = ((m | o) | (m | o) >> 1 | (m | o) >> 2) & LOW
        dead = 0
        rest = o
        while rest:
            low = rest & -rest
            sh = (low.bit_length() - 1) & ~3
            p = sh >> 2
            rest &= ~(FMASK << sh)
            if (m >> sh) & FMASK:
                continue
            for d in MELDS_ALL[p]:
                miss = d & ~nzt
                if not miss or miss.bit_count() <= wild:
                    break
            else:
                dead |= FMASK << sh
        if not dead:
            return o
        o &= ~dead


def _joker_options(real_table: Counter[int], before: Counter[int],
                   hand: Counter[int]) -> list[dict[int, int]]:
    """Every useful choice of how many table jokers declared ``c`` are freed (R5.8).

    Freeing is a relaxation (a freed joker may be declared ``c`` again), so a joker is freed
    whenever a real ``c`` is on the table anyway; freeing more than that needs real ``c``
    cards from the hand, which is a choice.
    """
    options: list[dict[int, int]] = [{}]
    for c in sorted(before):
        b = before[c]
        lo = min(b, real_table[c])
        hi = min(b, real_table[c] + hand[c])
        options = [dict(opt, **{str(c): f}) for opt in options for f in range(lo, hi + 1)]
    return [{int(k): v for k, v in opt.items()} for opt in options]


def best_play(
    table: Iterable[Iterable[int]],
    hand: Iterable[int],
    *,
    keep: Iterable[int] = (),
    objective: str = "points",
    node_limit: int | None = None,
) -> Play | None:
    """The best legal meld action (R5) of ``hand`` on ``table``, or ``None`` if none exists.

    Exact: the result maximises the R1.5 points of the hand cards added (or, with
    ``objective="cards"``, their number), over every legal action including every
    rearrangement of the table and the joker rules R5.6–R5.9. Ties are broken towards more
    cards (fewer points with ``"cards"``), then by a fixed search order, so the result is
    deterministic.

    Args:
        table: melds of table cards (real cards 0..51, declared jokers 53..104). The table
            need not be legal; the new table always is.
        hand: hand cards (0..51, ``JOKER`` = 52), in any order.
        keep: hand cards (a multiset) that must stay in the hand.
        objective: ``"points"`` (default) or ``"cards"``.
        node_limit: maximum number of search states to expand; ``None`` (default) for an
            exact search. When reached, the best play found is returned with
            ``optimal=False``.

    Returns:
        A :class:`Play` that passes ``check_action(table, hand, play.table)``, or ``None``
        when no legal meld action adds a card (R5.1).

    Raises:
        ValueError: unknown objective, a card index out of range, ``keep`` not in the hand,
            or more than 7 copies of one card.
    """
    cost, wcost = _cost_vectors(objective)
    melds = [tuple(m) for m in table]
    table_cards = [c for m in melds for c in m]
    hand_l = list(hand)
    for c in table_cards:
        if not (0 <= c < 52 or TABLE_JOKER_BASE <= c < TABLE_JOKER_BASE + 52):
            raise ValueError(f"bad table card index {c!r}")
    for c in hand_l:
        if not 0 <= c <= JOKER:
            raise ValueError(f"bad hand card index {c!r}")
    real_table = Counter(c for c in table_cards if c < 52)
    before = Counter(c - TABLE_JOKER_BASE for c in table_cards if c >= TABLE_JOKER_BASE)
    hand_c = Counter(hand_l)
    keep_c = Counter(keep)
    for c, k in keep_c.items():
        if hand_c[c] < k:
            raise ValueError(f"keep card {c!r} is not in the hand")
        hand_c[c] -= k
    hand_jokers = hand_c.pop(JOKER, 0)
    real_hand = Counter({c: k for c, k in hand_c.items() if k > 0})

    best: tuple[int, Search, int, int, int, int, dict[int, int]] | None = None
    exceeded = False
    all_hand_cost = sum(cost[POS_OF_CARD[c]] * k for c, k in real_hand.items()) \
        + wcost * hand_jokers
    for freed in _joker_options(real_table, before, real_hand):
        mand = [0] * 52
        opt = [0] * 52
        for c, k in real_table.items():
            mand[c] += k
        for c, k in before.items():
            mand[c] += k - freed.get(c, 0)
        for c, k in real_hand.items():
            opt[c] += k
        for c, f in freed.items():
            forced = max(0, f - real_table[c])
            mand[c] += forced
            opt[c] -= forced
        wm = sum(freed.values())
        m = _pack(mand)
        o_full = _pack(opt)
        o = _prune_dead(m, o_full, wm + hand_jokers)
        search = Search(cost, wcost, node_limit)
        dropped = search.solve(m, o, wm, hand_jokers)
        exceeded = exceeded or search.exceeded
        if dropped >= INF:
            continue
        # cards pruned as dead and cards dropped by the search are both left in hand
        played_cost = all_hand_cost - _left_cost(cost, o_full, o, dropped)
        if played_cost <= 0:
            continue
        if best is None or played_cost > best[0]:
            best = (played_cost, search, m, o, wm, hand_jokers, freed)
    if best is None:
        return None
    _, search, m, o, wm, wo, freed = best
    pieces = search.trace(m, o, wm, wo)
    new_table, added = _build_table(pieces, search.final_wild, real_table, before, freed)
    return Play(table=canonical_table(new_table), cards=tuple(sorted(added)),
                points=sum(POINTS[c] for c in added), optimal=not exceeded)


def _left_cost(cost: Sequence[int], o_full: int, o_live: int, dropped: int) -> int:
    """Cost of every optional card left in hand: pruned dead copies plus dropped ones."""
    dead = o_full - o_live
    total = dropped
    while dead:
        low = dead & -dead
        sh = (low.bit_length() - 1) & ~3
        total += cost[sh >> 2] * ((dead >> sh) & FMASK)
        dead &= ~(FMASK << sh)
    return total


def _build_table(pieces: list[tuple[int, tuple[int, ...], int]], final_wild: tuple[int, int],
                 real_table: Counter[int], before: Counter[int],
                 freed: dict[int, int]) -> tuple[list[Meld], list[int]]:
    """Turn traced templates into table melds with physical cards, and the added cards."""
    kept = {c: before[c] - freed.get(c, 0) for c in before}
    kept = {c: k for c, k in kept.items() if k > 0}
    wild_used = 0
    real_used: Counter[int] = Counter()
    melds: list[list[int]] = []
    for _pivot, tmpl, wild in pieces:
        meld: list[int] = []
        for q in tmpl:
            card = CARD_OF_POS[q]
            if (wild >> (FIELD * q)) & FMASK:
                meld.append(TABLE_JOKER_BASE + card)
                wild_used += 1
            elif kept.get(card, 0):
                kept[card] -= 1  # a joker that keeps its declared card (R5.7)
                meld.append(TABLE_JOKER_BASE + card)
            else:
                meld.append(card)
                real_used[card] += 1
        melds.append(meld)
    assert not any(kept.values()), "a kept table joker was not placed"
    leftover = sum(final_wild)
    if leftover:  # three or more jokers with nothing to join: melds of jokers alone
        sizes = []
        while leftover:
            take = leftover if leftover <= 5 else (3 if leftover - 3 >= 3 else leftover - 3)
            sizes.append(take)
            leftover -= take
        for size in sizes:
            melds.append([TABLE_JOKER_BASE + r for r in range(size)])  # *AS *2S ...
            wild_used += size
    added = [c for c, k in (real_used - real_table).items() for _ in range(k)]
    added += [JOKER] * (wild_used - sum(freed.values()))  # hand jokers placed (R5.6)
    return _merge_runs([tuple(m) for m in melds]), added


def _line(meld: Meld) -> tuple[int, int, int] | None:
    """(suit, first, last) line position of a sequence (0..13, 13 = high ace), else None."""
    eff = [c - TABLE_JOKER_BASE if c >= TABLE_JOKER_BASE else c for c in meld]
    suits = {e // 13 for e in eff}
    ranks = sorted(e % 13 for e in eff)
    if len(suits) != 1 or len(set(ranks)) != len(ranks) or len(ranks) < 3:
        return None
    if ranks[-1] - ranks[0] == len(ranks) - 1:
        return suits.pop(), ranks[0], ranks[-1]
    if ranks[0] == 0 and ranks[-1] == 12:
        hi = [r if r else 13 for r in ranks]
        return suits.pop(), min(hi), max(hi)
    return None


def _merge_runs(melds: list[Meld]) -> list[Meld]:
    """Join sequences of one suit that meet end to end (display only; still legal)."""
    runs: dict[int, list[tuple[int, int, Meld]]] = {}
    out: list[Meld] = []
    for m in melds:
        line = _line(m)
        if line is None:
            out.append(m)
        else:
            runs.setdefault(line[0], []).append((line[1], line[2], m))
    for suit in sorted(runs):
        pieces = sorted(runs[suit])
        cur_lo, cur_hi, cur = pieces[0]
        for lo, hi, m in pieces[1:]:
            if lo == cur_hi + 1 and hi - cur_lo + 1 <= 13 and not (cur_lo == 0 and hi == 13):
                cur_hi, cur = hi, cur + m
            else:
                out.append(cur)
                cur_lo, cur_hi, cur = lo, hi, m
        out.append(cur)
    return out


def best_points(table: Iterable[Iterable[int]], hand: Iterable[int]) -> int:
    """The ``best_play`` conformance value: the largest R1.5 points one legal meld action
    adds to ``table`` from ``hand``; 0 when no legal meld action exists."""
    play = best_play(table, hand)
    return play.points if play is not None else 0


def format_play(play: Play) -> str:
    """One-line text of a play's new table (melds separated by `` | ``)."""
    return table_text(play.table)


__all__ = ["Play", "best_play", "best_points", "format_play"]
