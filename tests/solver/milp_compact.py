"""A compact MILP of the best meld action (docs/rules.md §5), solved with HiGHS: what a user
would write first, and the fair speed reference of ``benchmarks/bench_solver.py``.

One binary ``x[m, k]`` per *candidate meld* ``m`` and copy ``k``: a candidate is a group of
3–4 cards or a sequence of 3–5 cards (a longer sequence splits into such, R4.3) whose
missing cards (neither on the table nor in the hand) the position's
jokers could stand for, and ``k`` runs up to the copies its cards and jokers allow. Every
slot of a meld holds its card or a joker declared as that card (R4.4), so per real card
``c``: ``sum_{m contains c} x[m, k] = table[c] + y[c] + j[c]``, with ``0 <= y[c] <=
hand[c]`` the hand copies played (R5.2, R5.4) and ``j[c] >= 0`` the jokers declared ``c``
on the new table. ``sum j = table jokers + h``, ``0 <= h <= hand jokers`` (R5.2, R5.9,
R5.6); R5.8 as stated: ``before[c] - j[c] <= table[c] + y[c]``; at least one card played
(R5.1). Objective: the R1.5 points of ``y`` and ``h``, or their number.

Shares no code with :mod:`rummy.solver` or ``milp_reference.py`` (the heavy model: an
integer per meld, and one per meld and card for its joker slots); the tests check the
three against each other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import highspy

from tests.solver.highs_model import maximise

JOKER = 52
TJ = 53
POINTS = [min(r + 1, 10) for _ in range(4) for r in range(13)]


def _legal_melds() -> list[tuple[int, ...]]:
    out: set[tuple[int, ...]] = set()
    for rank in range(13):
        for mask in range(16):
            suits = [s for s in range(4) if mask >> s & 1]
            if len(suits) >= 3:
                out.add(tuple(s * 13 + rank for s in suits))
    for suit in range(4):
        for start in range(14):
            for end in range(start + 2, min(start + 5, 14)):  # 3..5 cards
                out.add(tuple(sorted(suit * 13 + p % 13 for p in range(start, end + 1))))
    return sorted(out)


#: groups of 3-4 and sequences of 3-5 cards: every longer sequence splits into sequences of
#: 3-5 cards (R4.3), so these candidates reach every new table's cards
LEGAL = _legal_melds()
assert len(LEGAL) == 65 + 4 * (12 + 11 + 10)


def compact_best(table: Iterable[Iterable[int]], hand: Sequence[int], *,
                 objective: str = "points") -> int:
    """Optimal objective value (points or cards added) of one meld action; 0 if none."""
    flat = [c for m in table for c in m]
    real = Counter(c for c in flat if c < 52)
    before = Counter(c - TJ for c in flat if c >= TJ)
    hand_c = Counter(hand)
    hand_j = hand_c.pop(JOKER, 0)
    table_j = sum(before.values())
    jokers = table_j + hand_j
    avail = [real[c] + hand_c[c] for c in range(52)]
    cols_ub: list[float] = []
    cost: list[float] = []
    x_cols: list[tuple[tuple[int, ...], int]] = []  # (meld, copy)
    for meld in LEGAL:
        if sum(1 for c in meld if not avail[c]) > jokers:
            continue
        for k in range(min(avail[c] + jokers for c in meld)):
            x_cols.append((meld, k))
    n_x = len(x_cols)
    cols_ub += [1.0] * n_x
    cost += [0.0] * n_x
    y0 = len(cols_ub)  # y[c], c = 0..51
    cols_ub += [float(hand_c[c]) for c in range(52)]
    cost += [float(POINTS[c] if objective == "points" else 1) for c in range(52)]
    j0 = len(cols_ub)  # j[c]
    cols_ub += [float(jokers)] * 52
    cost += [0.0] * 52
    h = len(cols_ub)
    cols_ub.append(float(hand_j))
    cost.append(25.0 if objective == "points" else 1.0)
    n = len(cols_ub)
    by_card: dict[int, list[int]] = {c: [] for c in range(52)}
    for i, (meld, _) in enumerate(x_cols):
        for c in meld:
            by_card[c].append(i)
    rows: list[tuple[float, float, list[int], list[float]]] = []
    for c in range(52):  # slots of c = real c + jokers declared c (R4.4, R5.2, R5.3)
        idx = by_card[c] + [y0 + c, j0 + c]
        rows.append((real[c], real[c], idx, [1.0] * len(by_card[c]) + [-1.0, -1.0]))
    rows.append((table_j, table_j, [j0 + c for c in range(52)] + [h],
                 [1.0] * 52 + [-1.0]))  # jokers: all the table's stay, plus h (R5.9)
    for c, b in before.items():  # R5.8: freed jokers declared c <= real c after
        rows.append((b - real[c], highspy.kHighsInf, [j0 + c, y0 + c], [1.0, 1.0]))
    rows.append((1, highspy.kHighsInf, [y0 + c for c in range(52)] + [h],
                 [1.0] * 53))  # R5.1
    for i, (_, k) in enumerate(x_cols):  # symmetry: copy k only with copy k-1
        if k:
            rows.append((0, highspy.kHighsInf, [i - 1, i], [1.0, -1.0]))
    best = maximise(cost, [0.0] * n, cols_ub, rows)
    return 0 if best is None else best
