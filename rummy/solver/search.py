"""The exact search behind :func:`rummy.solver.best_play` (pure, stdlib only).

Model
-----
A meld action (R5) takes the table to a new table that is a partition of *all* table cards
(R5.2, jokers included, R5.9) plus a chosen non-empty multiset of hand cards (R5.1, R5.4)
into legal melds (R5.3). Every legal table can be re-cut into melds of 3–5 cards: a group
has 3 or 4 cards (R4.2) and a sequence of 6 or more cards splits into sequences of 3–5
(R4.3). So the search only ever forms groups of 3–4 and sequences of 3–5, from a fixed list
of 197 meld templates built at import (65 groups, 132 sequences incl. Q-K-A, J-Q-K-A and
T-J-Q-K-A).

Cards are counted, not named (R1.3: two copies are interchangeable). A state is two count
vectors packed into ints with a 4-bit field per card: ``M`` (mandatory copies: table cards,
which must all be covered) and ``O`` (optional copies: hand cards), plus ``wm``/``wo``, the
number of *wildcards* still to place: jokers that may take any declaration. ``wm`` are table
jokers freed under R5.8 (they must be placed again, R5.9); ``wo`` are hand jokers (R5.6).
A table joker that is not freed keeps its declared card (R5.7) and simply counts as one more
mandatory copy of that card.

Cards are ordered rank-major (``rank * 4 + suit``, aces first). The search always resolves
the lowest card that still has copies: it chooses, for every mandatory copy and for any
number of optional copies, a meld template containing that card whose other real cards are
all higher (lower slots can only be wildcards; their real copies are already resolved). The
remaining optional copies of the card are *dropped* (stay in hand) at a cost. Because melds
reach at most four ranks up, the states met are few and memoisation on the packed counts
makes the search a dynamic programme over the "frontier" of the sweep.

Exactness arguments (why the pruned choices lose nothing):

* a copy of card ``d`` that a meld takes is mandatory if any mandatory copy is left
  (identical copies, R1.3);
* a wildcard never stands for ``d`` while a mandatory real ``d`` is available (exchange it
  with the wildcard in whichever meld later takes that real ``d``); it may stand for ``d``
  while only optional copies of ``d`` are left (the real ``d`` may then stay in hand), and
  that branch is searched;
* at the end, ``w >= 3`` leftover wildcards form melds of their own (any three jokers make a
  legal sequence); 1–2 leftover hand jokers stay in hand, leftover freed jokers are a dead end.

Costs are minimised: the cost of a dropped optional card is ``POINTS * CARD_W + 1`` for the
points objective (so ties go to more cards played) or ``CARD_W2 + POINTS`` for the cards
objective. The total cost of the optional cards minus the minimum is what is played.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

INF = 1 << 60

#: position of each real card (suit*13+rank) in rank-major order (rank*4+suit), and back.
POS_OF_CARD: tuple[int, ...] = tuple((c % 13) * 4 + c // 13 for c in range(52))
CARD_OF_POS: tuple[int, ...] = tuple((p % 4) * 13 + p // 4 for p in range(52))

FIELD = 4
LOW = sum(1 << (FIELD * p) for p in range(52))  # the lowest bit of every field
FMASK = (1 << FIELD) - 1
MAX_COPIES = 7  # a field holds 0..7 (3 bits) so the non-zero test is three shifts


def _templates() -> list[tuple[int, ...]]:
    """Every group of 3–4 and sequence of 3–5 as a tuple of positions (R4.2, R4.3)."""
    out: list[tuple[int, ...]] = []
    for r in range(13):
        for k in (4, 3):
            for suits in combinations(range(4), k):
                out.append(tuple(r * 4 + s for s in suits))
    for s in range(4):
        for start in range(13):  # line positions 0..13, 13 = high ace
            for length in (5, 4, 3):
                end = start + length - 1
                if end > 13:
                    continue
                out.append(tuple(sorted(((p % 13) * 4 + s) for p in range(start, end + 1))))
    return out


TEMPLATES: tuple[tuple[int, ...], ...] = tuple(_templates())


def _weights(positions: Sequence[int]) -> int:
    return sum(1 << (FIELD * p) for p in positions)


def _build_lists() -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...],
                            tuple[tuple[tuple[int, ...], ...], ...],
                            tuple[tuple[tuple[int, ...], ...], ...]]:
    hi: list[list[int]] = [[] for _ in range(52)]
    every: list[list[int]] = [[] for _ in range(52)]
    hi_t: list[list[tuple[int, ...]]] = [[] for _ in range(52)]
    every_t: list[list[tuple[int, ...]]] = [[] for _ in range(52)]
    for t in TEMPLATES:
        for p in t:
            others = tuple(q for q in t if q != p)
            d = _weights(others)
            if all(q > p for q in others):
                hi[p].append(d)
                hi_t[p].append(t)
        for p in t:
            others = tuple(q for q in t if q != p)
            if not all(q > p for q in others):
                every[p].append(_weights(others))
                every_t[p].append(t)
    # the "every" list starts with the "hi" list, so a search with wildcards tries the same
    # templates first (deterministic tie-breaking that does not depend on jokers being held)
    every_full = [tuple(hi[p] + every[p]) for p in range(52)]
    every_full_t = [tuple(hi_t[p] + every_t[p]) for p in range(52)]
    return (tuple(tuple(x) for x in hi), tuple(every_full),
            tuple(tuple(x) for x in hi_t), tuple(every_full_t))


#: per position: the "others" weight vector of each template whose other cards are higher
#: (usable without wildcards), and of every template containing it (hi ones first).
MELDS_HI, MELDS_ALL, MELDS_HI_T, MELDS_ALL_T = _build_lists()


class Search:
    """One memoised search over a fixed cost vector (see module docstring).

    Args:
        cost: cost of dropping one optional copy of each position 0..51.
        wcost: cost of dropping one optional wildcard (hand joker).
        node_limit: maximum number of states to expand, ``None`` for no limit. When the
            budget runs out, unexpanded states count as dead ends: results stay feasible but
            may not be optimal (``exceeded`` is then True).
    """

    __slots__ = ("cost", "wcost", "memo", "nodes", "node_limit", "exceeded", "final_wild")

    def __init__(self, cost: Sequence[int], wcost: int, node_limit: int | None) -> None:
        self.cost = tuple(cost)
        self.wcost = wcost
        self.memo: dict[tuple[int, int, int, int], int] = {}
        self.nodes = 0
        self.node_limit = node_limit
        self.exceeded = False
        self.final_wild = (0, 0)

    # ------------------------------------------------------------------ the value function

    def solve(self, m: int, o: int, wm: int, wo: int) -> int:
        """Minimum cost of covering state ``(m, o, wm, wo)``; ``INF`` if impossible."""
        x = m | o
        if not x:
            w = wm + wo
            if w == 0 or w >= 3:
                return 0
            return INF if wm else wo * self.wcost
        key = (m, o, wm, wo)
        memo = self.memo
        v = memo.get(key)
        if v is not None:
            return v
        self.nodes += 1
        if self.node_limit is not None and self.nodes > self.node_limit:
            self.exceeded = True
            return INF
        sh = ((x & -x).bit_length() - 1) & ~3
        keep = ~(FMASK << sh)
        v = self.place(sh >> 2, (m >> sh) & FMASK, (o >> sh) & FMASK, 0,
                       m & keep, o & keep, wm, wo)
        if v > INF:
            v = INF
        memo[key] = v
        return v

    def place(self, p: int, needm: int, availo: int, start: int,
              m: int, o: int, wm: int, wo: int) -> int:
        """Cost of covering ``needm`` mandatory and up to ``availo`` optional copies of
        position ``p`` (already removed from ``m``/``o``) with templates ``start..``."""
        best = INF
        if not needm:
            best = self.solve(m, o, wm, wo) + availo * self.cost[p]
            if not availo:
                return best
        w = wm + wo
        melds = MELDS_ALL[p] if w else MELDS_HI[p]
        nzm = (m | m >> 1 | m >> 2) & LOW
        nzt = nzm | ((o | o >> 1 | o >> 2) & LOW)
        if needm:
            needm -= 1
        else:
            availo -= 1
        place = self.place
        for idx in range(start, len(melds)):
            d = melds[idx]
            miss = d & ~nzt
            if miss:
                if not w:
                    continue
                k = miss.bit_count()
                if k > w:
                    continue
                r = d ^ miss
                if wm >= k:
                    wm2, wo2 = wm - k, wo
                else:
                    wm2, wo2 = 0, wo - (k - wm)
            else:
                k = 0
                r = d
                wm2, wo2 = wm, wo
            rm = r & nzm
            ro = r ^ rm
            c = place(p, needm, availo, idx, m - rm, o - ro, wm2, wo2)
            if c < best:
                best = c
            if ro and w > k:
                # a wildcard may stand for a card of which only optional copies are left
                sub = ro
                while sub:
                    j = sub.bit_count()
                    if j <= w - k:
                        kk = k + j
                        if wm >= kk:
                            wm3, wo3 = wm - kk, wo
                        else:
                            wm3, wo3 = 0, wo - (kk - wm)
                        c = place(p, needm, availo, idx, m - rm, o - (ro ^ sub), wm3, wo3)
                        if c < best:
                            best = c
                    sub = (sub - 1) & ro
        return best

    # ------------------------------------------------------------------ reconstruction

    def trace(self, m: int, o: int, wm: int, wo: int) -> list[tuple[int, tuple[int, ...], int]]:
        """The melds of an optimal solution of a solved state, in search order.

        Returns:
            A list of ``(pivot position, template positions, wildcard weight mask)``; the
            mask has the field of each template slot that a wildcard fills. Jokers left for
            joker-only melds are not listed (see :meth:`leftover`).
        """
        out: list[tuple[int, tuple[int, ...], int]] = []
        while m | o:
            target = self.solve(m, o, wm, wo)
            if target >= INF:
                raise RuntimeError("trace of an infeasible state")
            x = m | o
            sh = ((x & -x).bit_length() - 1) & ~3
            keep = ~(FMASK << sh)
            p = sh >> 2
            m, o, wm, wo = self._trace_place(p, (m >> sh) & FMASK, (o >> sh) & FMASK, 0,
                                             m & keep, o & keep, wm, wo, target, out)
        self.final_wild = (wm, wo)
        return out

    def _trace_place(self, p: int, needm: int, availo: int, start: int, m: int, o: int,
                     wm: int, wo: int, target: int,
                     out: list[tuple[int, tuple[int, ...], int]]
                     ) -> tuple[int, int, int, int]:
        # mirror of place(): take the first branch whose value equals the target
        while True:
            if not needm:
                if self.solve(m, o, wm, wo) + availo * self.cost[p] == target:
                    return m, o, wm, wo
            w = wm + wo
            melds = MELDS_ALL[p] if w else MELDS_HI[p]
            tmpl = MELDS_ALL_T[p] if w else MELDS_HI_T[p]
            nzm = (m | m >> 1 | m >> 2) & LOW
            nzt = nzm | ((o | o >> 1 | o >> 2) & LOW)
            nm, na = (needm - 1, availo) if needm else (0, availo - 1)
            found = None
            for idx in range(start, len(melds)):
                d = melds[idx]
                miss = d & ~nzt
                if miss:
                    if not w:
                        continue
                    k = miss.bit_count()
                    if k > w:
                        continue
                    r = d ^ miss
                else:
                    k, r = 0, d
                rm = r & nzm
                ro = r ^ rm
                options = [(0, miss)]
                if ro and w > k:
                    sub = ro
                    while sub:
                        if sub.bit_count() <= w - k:
                            options.append((sub, miss | sub))
                        sub = (sub - 1) & ro
                for sub, wild in options:
                    kk = k + sub.bit_count()
                    if wm >= kk:
                        wm2, wo2 = wm - kk, wo
                    else:
                        wm2, wo2 = 0, wo - (kk - wm)
                    m2, o2 = m - rm, o - (ro ^ sub)
                    if self.place(p, nm, na, idx, m2, o2, wm2, wo2) == target:
                        found = (idx, wild, m2, o2, wm2, wo2)
                        break
                if found:
                    break
            if found is None:
                raise RuntimeError("trace lost the optimal branch")
            idx, wild, m, o, wm, wo = found
            out.append((p, tmpl[idx], wild))
            needm, availo, start = nm, na, idx
