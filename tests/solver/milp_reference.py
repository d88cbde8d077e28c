"""An independent MILP model of the best meld action (docs/rules.md §5), solved with HiGHS.

Used only by the differential tests and the benchmark (``highspy`` is a dev dependency; the
core never imports it). The model is written straight from the rule text and shares no code
with :mod:`rummy.solver` apart from the card encoding:

* ``x[m]`` (integer): copies of legal meld ``m`` on the new table, over *every* legal meld
  (groups of 3–4, sequences of 3–13, R4.2/R4.3), built here from first principles;
* ``y[c]`` (integer, 0..hand copies): real hand cards ``c`` added (R5.1, R5.4);
* ``h`` (integer, 0..hand jokers): hand jokers added;
* ``a[m, c]`` (integer): copies of meld ``m`` whose slot ``c`` holds a joker (R4.4, R5.6).

Constraints: ``a[m,c] <= x[m]``; real cards are conserved, ``sum x[m] - sum a[m,c] =
table[c] + y[c]`` for every card ``c`` (R5.2, R5.3); jokers are conserved, ``sum a = table
jokers + h`` (R5.2, R5.9); R5.8 as stated, ``before[c] - after[c] <= real c after``, i.e.
``sum_m a[m,c] + table[c] + y[c] >= before[c]``; at least one card added (R5.1).
Objective: maximise the points of ``y`` and ``h`` (R1.5), or their number.

Under §11 ``joker_moves="locked"`` (:func:`_locked_model`) the melds of the table that hold
a joker (locked melds ``L_i``) are containment constraints: each either *leads* a host,
one copy of a legal meld holding all of its cards (binary ``z[i,m]``), or *joins* the host
of an earlier locked meld (binary ``s[j,i]``, only when that one leads); every slot of a
host holds exactly one card, the leader's, a joined meld's (each keeping its real cards
real and its jokers declared as before), a real card ``hr[i,c]`` or a hand joker
``hj[i,c]``. The hosts' free slots enter the conservation rows; ``x[m]`` and ``a[m,c]``
cover the other melds, whose jokers can only come from the hand.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence

import highspy

from tests.solver.highs_model import maximise

JOKER = 52
TJ = 53
POINTS = [min(r + 1, 10) for _ in range(4) for r in range(13)]


def _legal_melds(ace_high: bool = True) -> list[tuple[int, ...]]:
    """Every legal meld (R4.2, R4.3); without ``ace_high`` no sequence reaches the high
    ace (§11 ``ace_high=false``)."""
    top = 14 if ace_high else 13
    melds: set[tuple[int, ...]] = set()
    for rank in range(13):
        for mask in range(16):
            suits = [s for s in range(4) if mask >> s & 1]
            if len(suits) >= 3:
                melds.add(tuple(s * 13 + rank for s in suits))
    for suit in range(4):
        for start in range(top):
            for end in range(start + 2, top):
                if end - start + 1 <= 13:
                    melds.add(tuple(sorted(suit * 13 + p % 13 for p in range(start, end + 1))))
    return sorted(melds)


LEGAL_MELDS = _legal_melds()
assert len(LEGAL_MELDS) == 369
LEGAL_MELDS_ACE_LOW = _legal_melds(ace_high=False)


def milp_best(table: Iterable[Iterable[int]], hand: Sequence[int], *,
              objective: str = "points", timing: dict[str, float] | None = None,
              ace_high: bool = True, joker_release: str = "table",
              joker_moves: str = "free") -> int:
    """Optimal objective value (points or cards added) of one meld action; 0 if none.

    ``timing``, if given, receives ``build`` and ``solve`` seconds. ``ace_high``,
    ``joker_release`` and ``joker_moves`` are the §11 variants of the same names: the ace
    low only (no sequence reaches the high ace), jokers freed only by real cards from the
    hand (R5.8 as ``before[c] - after[c] <= y[c]``), and melds holding a joker kept whole
    (see the module docstring).
    """
    table = [tuple(m) for m in table]
    if joker_moves == "locked" and any(c >= TJ for m in table for c in m):
        return _locked_model(table, hand, objective, ace_high)
    t0 = time.perf_counter()
    flat = [c for m in table for c in m]
    real_table = Counter(c for c in flat if c < 52)
    before = Counter(c - TJ for c in flat if c >= TJ)
    hand_c = Counter(hand)
    hand_j = hand_c.pop(JOKER, 0)
    table_j = sum(before.values())
    jokers = table_j + hand_j
    avail = [real_table[c] + hand_c[c] for c in range(52)]
    legal = LEGAL_MELDS if ace_high else LEGAL_MELDS_ACE_LOW
    melds = [m for m in legal if sum(1 for c in m if avail[c] == 0) <= jokers]

    cols_lb: list[float] = []
    cols_ub: list[float] = []
    cost: list[float] = []
    def col(lb: float, ub: float, c: float) -> int:
        cols_lb.append(lb)
        cols_ub.append(ub)
        cost.append(c)
        return len(cols_lb) - 1

    x = [col(0, 4, 0) for _ in melds]
    y = [col(0, hand_c[c], POINTS[c] if objective == "points" else 1) for c in range(52)]
    h = col(0, hand_j, 25 if objective == "points" else 1)
    a: dict[tuple[int, int], int] = {}
    if jokers:
        for i, m in enumerate(melds):
            for c in m:
                a[i, c] = col(0, jokers, 0)

    rows: list[tuple[float, float, list[int], list[float]]] = []
    for (i, _c), j in a.items():  # a[m,c] <= x[m]
        rows.append((-highspy.kHighsInf, 0, [j, x[i]], [1.0, -1.0]))
    by_card: dict[int, list[int]] = {c: [] for c in range(52)}
    for i, m in enumerate(melds):
        for c in m:
            by_card[c].append(i)
    for c in range(52):  # real conservation (R5.2, R5.3, R5.4)
        idx = [x[i] for i in by_card[c]] + [a[i, c] for i in by_card[c] if (i, c) in a] + [y[c]]
        val = [1.0] * len(by_card[c]) + [-1.0] * sum(1 for i in by_card[c] if (i, c) in a) \
            + [-1.0]
        rows.append((real_table[c], real_table[c], idx, val))
    if jokers:  # joker conservation (R5.2, R5.9)
        rows.append((table_j, table_j, list(a.values()) + [h], [1.0] * len(a) + [-1.0]))
    for c, b in before.items():  # R5.8 (or its joker_release="hand" form)
        idx = [a[i, c] for i in by_card[c] if (i, c) in a] + [y[c]]
        low = b if joker_release == "hand" else b - real_table[c]
        rows.append((low, highspy.kHighsInf, idx, [1.0] * len(idx)))
    rows.append((1, highspy.kHighsInf, y + [h], [1.0] * 53))  # R5.1

    t1 = time.perf_counter()
    best = maximise(cost, cols_lb, cols_ub, rows)
    t2 = time.perf_counter()
    if timing is not None:
        timing["build"] = t1 - t0
        timing["solve"] = t2 - t1
    return 0 if best is None else best


def _locked_model(table: list[tuple[int, ...]], hand: Sequence[int], objective: str,
                  ace_high: bool) -> int:
    """:func:`milp_best` under ``joker_moves="locked"`` on a table holding a joker."""
    locked = [m for m in table if any(c >= TJ for c in m)]
    free = Counter(c for m in table if not any(c >= TJ for c in m) for c in m)
    eff = [[c - TJ if c >= TJ else c for c in m] for m in locked]
    if any(len(set(e)) < len(e) for e in eff):
        return 0  # two cards for one place: no legal meld holds the locked meld
    hand_c = Counter(hand)
    hand_j = hand_c.pop(JOKER, 0)
    avail = [free[c] + hand_c[c] for c in range(52)]
    legal = LEGAL_MELDS if ace_high else LEGAL_MELDS_ACE_LOW
    melds = [m for m in legal if sum(1 for c in m if avail[c] == 0) <= hand_j]

    lb: list[float] = []
    ub: list[float] = []
    cost: list[float] = []
    def col(lo: float, hi: float, c: float = 0) -> int:
        lb.append(lo)
        ub.append(hi)
        cost.append(c)
        return len(lb) - 1

    x = [col(0, 4) for _ in melds]
    y = [col(0, hand_c[c], POINTS[c] if objective == "points" else 1) for c in range(52)]
    h = col(0, hand_j, 25 if objective == "points" else 1)
    a = {(i, c): col(0, hand_j) for i, m in enumerate(melds) for c in m} if hand_j else {}
    k = len(locked)
    hosts = [[m for m in legal if set(eff[i]) <= set(m)] for i in range(k)]
    z = [[col(0, 1) for _ in hosts[i]] for i in range(k)]
    s = {(j, i): col(0, 1) for j in range(k) for i in range(j)
         if not set(eff[i]) & set(eff[j])}
    hr = {(i, c): col(0, 1) for i in range(k) for c in range(52)}
    hj = {(i, c): col(0, 1 if hand_j else 0) for i in range(k) for c in range(52)}

    rows: list[tuple[float, float, list[int], list[float]]] = []
    for (i, _c), j in a.items():  # a[m,c] <= x[m]
        rows.append((-highspy.kHighsInf, 0, [j, x[i]], [1.0, -1.0]))
    for j in range(k):  # each locked meld leads a host or joins an earlier one's
        idx = z[j] + [s[j, i] for i in range(j) if (j, i) in s]
        rows.append((1, 1, idx, [1.0] * len(idx)))
    for (_j, i), v in s.items():  # only a leader's host can be joined
        rows.append((-highspy.kHighsInf, 0, [v] + z[i], [1.0] + [-1.0] * len(z[i])))
    for i in range(k):  # every slot of host i holds one card; others none
        for c in range(52):
            inside = [z[i][t] for t, m in enumerate(hosts[i]) if c in m]
            idx = [hr[i, c], hj[i, c]] + [s[j, i] for j in range(i + 1, k)
                                           if (j, i) in s and c in eff[j]]
            if c in eff[i]:  # the leader's own card fills it whenever host i exists
                inside = []
            rows.append((0, 0, idx + inside, [1.0] * len(idx) + [-1.0] * len(inside)))
    by_card: dict[int, list[int]] = {c: [] for c in range(52)}
    for i, m in enumerate(melds):
        for c in m:
            by_card[c].append(i)
    for c in range(52):  # real conservation: other melds + hosts' free slots = free + added
        idx = [x[i] for i in by_card[c]] + [a[i, c] for i in by_card[c] if (i, c) in a] \
            + [hr[i, c] for i in range(k)] + [y[c]]
        val = [1.0] * len(by_card[c]) + [-1.0] * sum(1 for i in by_card[c] if (i, c) in a) \
            + [1.0] * k + [-1.0]
        rows.append((free[c], free[c], idx, val))
    # joker conservation: the table's jokers stay in their hosts; the rest come from the hand
    idx = list(a.values()) + list(hj.values()) + [h]
    rows.append((0, 0, idx, [1.0] * (len(idx) - 1) + [-1.0]))
    rows.append((1, highspy.kHighsInf, y + [h], [1.0] * 53))  # R5.1
    best = maximise(cost, lb, ub, rows)
    return 0 if best is None else best
