"""The exact search behind :func:`rummy.solver.best_play` (pure, stdlib only).

Model
-----
A meld action (R5) takes the table to a new table that partitions *all* table cards (R5.2,
jokers included, R5.9) plus a chosen non-empty multiset of hand cards (R5.1, R5.4) into
legal melds (R5.3). Cards are counted, not named (R1.3: copies are interchangeable).

The search sweeps the 14 *line positions* of R4.3 (0 = low ace, 1..12 = 2..K, 13 = high
ace) and, within a position, the four suits: 56 steps. Its state is, per suit, the number of
sequences still open with 1, 2 and 3+ cards (a sequence must reach 3 cards before it may
stop), the group tally of the current position (sum and maximum of the cards each suit puts
into groups), the aces each suit keeps back for a high ace, and the wildcards still to place.
At each step it chooses how many copies of the card go on the table (every *mandatory* copy
— a table card — and any number of *optional* ones — hand cards), how many wildcards stand
for that card, and how the copies split between extending open sequences, starting new ones
and joining groups. This is the rank-sweep dynamic programme for Rummikub of van Rijn,
Takes and Vis ("The complexity of Rummikub problems", 2015), adapted to cards: memoised on
(step, state), exact.

Wildcards are jokers that may take any declaration: hand jokers (R5.6, optional) and table
jokers freed under R5.8 (mandatory: they stay on the table, R5.9). A table joker that keeps
its declared card (R5.7) is one more mandatory copy of that card. Which table jokers are
freed is decided outside the search (see :func:`rummy.solver.best_play`).

Exactness arguments (why the restricted choices lose nothing):

* a position's cards either extend open sequences, start new ones or join groups; groups of
  one position with per-suit counts ``g`` exist iff some ``G`` has ``max g <= G`` and
  ``3G <= sum g <= 4G`` (each group of 3–4 distinct suits leaves out at most one suit, R4.2);
* an open sequence with fewer than 3 cards must be extended; one with 3+ may stop;
* closing a 3+ sequence and starting a new one of the same suit at the same position is
  never needed (extending the old one instead dominates it);
* no sequence needs to start with a wildcard, except ``*Q K A``: one of 4+ cards stays
  legal without it (the wildcard is parked, see :meth:`Search.finish`), one of 3 cards
  ending below the high ace takes it at its other end instead;
* a sequence of 6+ cards splits into legal pieces, so a sequence that runs through all 14
  positions (A..K..A, illegal as one meld) is output as two.

Cost of the search: the states met at a step are (at most) the product over the four suits
of their open-sequence states, times the group tallies, the aces kept back and the
wildcards left. Without jokers that is typically a few dozen states per step; every
wildcard can be placed at any step, which multiplies the states by the positions it may
take, and the aces kept back for high sequences multiply them again (8-13x on the slowest
positions seen). Three devices keep that down, all exact:

* *fail-soft bounds*: a state that cannot beat its bound ``beta`` returns (and memoises)
  the lowest cost it saw, so a later visit with a larger bound is answered from the memo;
* *a relaxed search* (:attr:`Search.relaxed`) on the same cards that forgets the aces kept
  back and lets any ace end a high sequence for free. Every solution of this search is one
  of the relaxed search at the same cost, so the relaxed value of a state (its aces-kept
  field cleared) is a lower bound of its value; at each position boundary a state holding
  kept-back aces first asks the relaxed search and stops when that bound reaches ``beta``;
* :meth:`Search.solve_root`: the relaxed search alone from the root first; when its
  optimal solution happens to keep back exactly the aces it uses high, it is optimal here.

``node_limit`` bounds the work for bots (see benchmarks/bench_solver.py).
:mod:`rummy.solver.compiled` is the same search compiled with numba.

Costs are minimised: each optional card left in hand costs its weight (points objective:
``POINTS * W + 1`` so ties favour playing more cards). The search value of a state is the
minimum total cost of the optional cards still to be decided that stay in hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rummy.solver.build import build_melds, room, split_melds, workspace_size

INF = 1 << 60

# state layout (one int): per suit 9 bits (runs of length 1, 2, 3+: 3 bits each),
# then group sum (5 bits), group max (3 bits), reserved high aces (2 bits per suit),
# mandatory wildcards (3 bits), optional wildcards (3 bits).
_SUIT_BITS = 9
_GSUM = 36
_GMAX = 41
_RES = 44
_WM = 52
_WO = 55
_SEQ = 58  # a sequence exists on the new table (extra jokers can join it)
_P3 = 59   # groups of 3 formed so far, capped at 3 (an extra joker can join each)
_NO_PARK = ~((1 << _SEQ) | (3 << _P3))
_NO_P3 = ~(3 << _P3)
_NO_RES = ~(255 << _RES)
_TALLY_CLEAR = ~((31 << _GSUM) | (7 << _GMAX))
MAX_COUNT = 7
_NO_NEED: tuple[int, ...] = (0,) * 256

#: group feasibility of (sum, max) for one position: some G with max<=G, 3G<=sum<=4G
_GROUPS_OK: frozenset[tuple[int, int]] = frozenset(
    (tot, mx) for tot in range(32) for mx in range(8)
    if any(mx <= g and 3 * g <= tot <= 4 * g for g in range(0, 11)))

#: most groups of 3 that one position's group cards (sum, max) can make
_THREES: dict[tuple[int, int], int] = {
    (tot, mx): max(4 * g - tot for g in range(0, 11) if mx <= g and 3 * g <= tot <= 4 * g)
    for tot, mx in _GROUPS_OK}


#: :data:`_GROUPS_OK` and :data:`_THREES` as flat tables indexed by ``sum * 8 + max``
GROUPS_TABLE: tuple[int, ...] = tuple(1 if (k >> 3, k & 7) in _GROUPS_OK else 0
                                      for k in range(256))
THREES_TABLE: tuple[int, ...] = tuple(_THREES.get((k >> 3, k & 7), 0) for k in range(256))

# offsets in the flat table of a search (:func:`search_tables`)
O_CAP = 52 * 6  #: info rows first: row i = (mandatory, optional, unit cost, cap +1, cap +2,
#: copies of the card's rank in the later suits); then cap[s][p], 16 per suit
O_HMAX = O_CAP + 4 * 16  #: high aces worth keeping, per suit
O_NEED = O_HMAX + 4  #: wildcards the kept-back aces need, by the 8-bit reserved field
O_GOK = O_NEED + 256  #: GROUPS_TABLE
O_THREES = O_GOK + 256  #: THREES_TABLE
O_EMPTY = O_THREES + 256  #: 1 for a step whose card has no copy at all
O_FILL = O_EMPTY + 56  #: 1: wildcards are placed during the sweep
O_EX = O_FILL + 1  #: scratch: wildcards one suit's r kept-back aces need, at 4 * s + r
T_SIZE = O_EX + 16
#: the flat table before :func:`search_tables` fills it: zeros, and the group tables
FLAT_TEMPLATE: tuple[int, ...] = ((0,) * O_GOK + GROUPS_TABLE + THREES_TABLE
                                  + (0,) * (T_SIZE - O_EMPTY))
#: positions per suit in the dead-card bounds (a suffix sum, 0 past the last position)
LOWER_POS = 19


def search_tables(mand: Any, opt: Any, cost: Any, wild: int, fill: int, dead: Any,
                  n_dead: int, flat: Any, lower: Any) -> int:
    """Fill the tables of one search: the one builder, run by :class:`Search` on Python
    lists and, compiled from this source, by the compiled backend on int64 arrays.

    Args:
        mand, opt, cost: mandatory and optional copies and the cost of leaving one optional
            copy in hand, by card 0..51 (``suit * 13 + rank``).
        wild: the wildcards of the position; ``fill``: 1 if the sweep places them.
        dead: ``n_dead * 52`` costs (row ``w``: the optional copies no meld can use with
            only ``w`` wildcards left).
        flat: a copy of :data:`FLAT_TEMPLATE` (``T_SIZE`` integers), filled at the
            offsets ``O_*``.
        lower: ``n_dead * 4 * LOWER_POS`` zeros, filled with the dead-card bounds:
            ``lower[(w * 4 + s) * LOWER_POS + p]`` = the dead cost of suit ``s`` at
            positions ``p..12`` with ``w`` wildcards left.

    Returns:
        The number of suits that can keep high aces back (two or more: the search is
        bounded by a relaxed one, see :meth:`Search.solve`).
    """
    for s in range(4):
        for p in range(13):
            flat[O_CAP + s * 16 + p] = mand[s * 13 + p] + opt[s * 13 + p]
        flat[O_CAP + s * 16 + 13] = flat[O_CAP + s * 16]  # the high ace is the ace
    for p in range(13):
        for s in range(4):
            c = s * 13 + p
            r = (p * 4 + s) * 6
            flat[r] = mand[c]
            flat[r + 1] = opt[c]
            flat[r + 2] = cost[c]
            flat[r + 3] = flat[O_CAP + s * 16 + p + 1]
            flat[r + 4] = flat[O_CAP + s * 16 + p + 2]
            later = 0
            for s2 in range(s + 1, 4):
                later += flat[O_CAP + s2 * 16 + p]
            flat[r + 5] = later
            if flat[O_CAP + s * 16 + p] == 0:
                flat[O_EMPTY + p * 4 + s] = 1
    suits = 0
    for s in range(4):
        # each ace kept back needs its own Q and K (real or wildcards); at most 3
        a = min(flat[O_CAP + s * 16], 3)
        b = min(flat[O_CAP + s * 16 + 11], flat[O_CAP + s * 16 + 12]) + wild
        flat[O_HMAX + s] = min(a, b)
        if flat[O_HMAX + s]:
            suits += 1
    if wild:
        # wildcards needed as the Q and K of the kept-back aces' sequences, beyond the
        # real copies, by the reserved field (2 bits per suit: 0..3 aces)
        for s in range(4):
            for k in range(4):
                e = 0
                if k > flat[O_CAP + s * 16 + 11]:
                    e += k - flat[O_CAP + s * 16 + 11]
                if k > flat[O_CAP + s * 16 + 12]:
                    e += k - flat[O_CAP + s * 16 + 12]
                flat[O_EX + 4 * s + k] = e
        key = 0
        for k3 in range(4):
            for k2 in range(4):
                for k1 in range(4):
                    e = flat[O_EX + 12 + k3] + flat[O_EX + 8 + k2] + flat[O_EX + 4 + k1]
                    for k0 in range(4):
                        flat[O_NEED + key] = e + flat[O_EX + k0]
                        key += 1
    flat[O_FILL] = fill
    for d in range(n_dead):
        for s in range(4):
            acc = 0
            for p in range(12, -1, -1):
                acc += dead[d * 52 + s * 13 + p]
                lower[(d * 4 + s) * LOWER_POS + p] = acc
    return suits


class Aborted(Exception):
    """The search expanded more states than its ``abort`` budget (see :func:`rummy.solver.solve`,
    which then tries the other orientation of the line)."""


def parked(st: int) -> int:
    """Number of wildcards that :meth:`Search.finish` parks in end state ``st``."""
    wm = (st >> _WM) & 7
    wo = (st >> _WO) & 7
    if (st >> _SEQ) & 1 or wm + wo >= 3:
        return wm + wo
    return min(wm + wo, (st >> _P3) & 3)


def groups_short(gs: int, gm: int, av1: int, av2: int, av3: int, spare: int) -> bool:
    """True when a position's group cards so far (sum ``gs``, per-suit maximum ``gm``)
    cannot make G groups (3G <= cards <= 4G, at most G per suit) even if the later suits
    give all they can (``av1..av3`` each, at most G) plus ``spare`` wildcards; the
    smallest allowed G is the easiest to reach."""
    gg = gm if 4 * gm >= gs else (gs + 3) >> 2
    return 3 * gg > gs + (av1 if av1 < gg else gg) + (av2 if av2 < gg else gg) \
        + (av3 if av3 < gg else gg) + spare


def close_tally(ns: int, gs: int, gm: int) -> int:
    """State ``ns`` after the last suit of a position: the group tally (sum ``gs``,
    maximum ``gm``) cleared and the groups of 3 counted (parking room), or -1 when no
    set of groups has that tally."""
    if (gs, gm) not in _GROUPS_OK:
        return -1
    ns &= _TALLY_CLEAR
    if gs:
        p3 = ((ns >> _P3) & 3) + _THREES[gs, gm]
        ns = (ns & ~(3 << _P3)) | ((p3 if p3 < 3 else 3) << _P3)
    return ns


def pack_state(wm: int, wo: int) -> int:
    """Initial search state: no open sequences, ``wm``/``wo`` wildcards to place."""
    if wm > MAX_COUNT or wo > MAX_COUNT:
        raise ValueError("too many jokers in one position")
    return (wm << _WM) | (wo << _WO)


class Search:
    """One memoised search over fixed card counts (see module docstring).

    Args:
        mand: mandatory copies of each real card 0..51 (table cards, kept jokers, forced
            hand cards).
        opt: optional copies of each real card (hand cards).
        cost: cost of leaving one optional copy of each card 0..51 in the hand.
        wcost: cost of leaving one hand joker in the hand.
        wild: total wildcards (used for look-ahead bounds only).
        node_limit: maximum number of states to expand (``None``: no limit). When reached,
            unexpanded states count as dead ends: results stay feasible but may not be
            optimal (``exceeded`` is then True).
        fill: if False, wildcards are never placed during the sweep, only *parked* at the
            end (a quick first bound, see :func:`rummy.solver.best_play`).
        dead_costs: for each number of wildcards ``w`` below ``wild``, the cost of the
            optional copies of each card that no meld can use with only ``w`` wildcards
            (an admissible lower bound once wildcards have been spent).
        abort: raise :class:`Aborted` once more states than this were expanded (counted
            with the relaxed search's; ``None``: never).
        counter: the one-element list that counts expanded states, shared with the relaxed
            search (a new one by default).
        relax: this is the relaxed search of another one (see :meth:`solve`): reserved
            high aces are forgotten and any ace may end a high sequence, for free.
        bounded: build the relaxed search that bounds this one (when
            :meth:`wants_relaxed`); the compiled backend builds its own.
    """

    __slots__ = ("mand", "opt", "cost", "wcost", "memo", "counter", "abort", "node_limit",
                 "exceeded", "cap", "high_max", "fill", "empty", "lower", "info",
                 "high_need", "relax", "relaxed", "root_trace")

    def __init__(self, mand: Sequence[int], opt: Sequence[int], cost: Sequence[int],
                 wcost: int, wild: int, node_limit: int | None, fill: bool = True,
                 dead_costs: Sequence[Sequence[int]] = (), relax: bool = False,
                 bounded: bool = True, abort: int | None = None,
                 counter: list[int] | None = None) -> None:
        if max(mand) > MAX_COUNT or max(opt) > MAX_COUNT:
            raise ValueError(f"more than {MAX_COUNT} copies of one card in a position")
        self.mand = tuple(mand)
        self.opt = tuple(opt)
        self.cost = tuple(cost)
        self.wcost = wcost
        self.memo: dict[int, int] = {}
        #: states expanded, shared with the relaxed search (one count, as in the kernel)
        self.counter = counter if counter is not None else [0]
        self.abort = abort
        self.node_limit = node_limit
        self.exceeded = False
        self.fill = fill
        self.relax = relax
        # the tables of the search (:func:`search_tables`, the one builder, which the
        # compiled backend runs compiled), as tuples
        flat = list(FLAT_TEMPLATE)
        lower = [0] * (len(dead_costs) * 4 * LOWER_POS)
        search_tables(self.mand, self.opt, self.cost, wild, 1 if fill else 0,
                      [x for row in dead_costs for x in row], len(dead_costs), flat, lower)
        #: cap[s][L]: most copies that line position L of suit s can hold (0 past the end)
        self.cap = tuple(tuple(flat[O_CAP + 16 * s:O_CAP + 16 * s + 16]) for s in range(4))
        #: most aces of each suit worth keeping for a high ace: each needs its own Q and K
        self.high_max = tuple(flat[O_HMAX:O_HMAX + 4])
        #: per step i < 52: (mandatory, optional copies, unit cost, cap of the next two
        #: positions, copies of the same rank in the suits after step i's suit)
        self.info = tuple(tuple(flat[6 * i:6 * i + 6]) for i in range(52))
        # lower[w][s][p]: cost of the optional copies of suit s at positions p..12 that no
        # meld can use with only w wildcards. Once wildcards have been spent, such a copy
        # still stays in the hand if every meld piece (3-5 cards, R4.3) that could hold it
        # lies wholly ahead of the sweep, so holds none of the spent wildcards: true from
        # position pos(i)+5 on in every suit, and from pos(i)+1 on in a suit with no open
        # sequence (see :meth:`solve`).
        self.lower = tuple(
            tuple(tuple(lower[(d * 4 + s) * LOWER_POS:(d * 4 + s + 1) * LOWER_POS])
                  for s in range(4))
            for d in range(len(dead_costs)))
        #: steps whose card has no copy at all (a high ace step is never "empty": its
        #: copies are the reserved aces, which live in the state)
        self.empty = tuple(bool(x) for x in flat[O_EMPTY:O_EMPTY + 56])
        #: per reserved-aces field (2 bits per suit): wildcards needed as the Q and K of
        #: the sequences that those high aces end, beyond the real Q and K copies (always
        #: 0 without wildcards: then ``high_max`` already keeps within the real copies)
        self.high_need = tuple(flat[O_NEED:O_NEED + 256]) if wild else _NO_NEED
        #: the relaxed search that bounds this one (see :meth:`solve`), when high aces
        #: can be reserved in at least two suits (else it would prune next to nothing)
        self.relaxed: Search | None = None
        self.root_trace: tuple[list[tuple[int, tuple[int, ...]]], int] | None = None
        if bounded and not relax and self.wants_relaxed():
            self.relaxed = Search(mand, opt, cost, wcost, wild, None, fill, dead_costs,
                                  relax=True, abort=abort, counter=self.counter)

    # ------------------------------------------------------------------ transitions

    def options(self, i: int, st: int, dec: bool = False) -> list[tuple[Any, ...]]:
        """Every move of step ``i`` from state ``st`` as ``(cost, new state)``, or with
        ``dec`` as ``(cost, new state, decision)``.

        ``decision`` is ``(used optional, reserved high aces, wildcards, long sequences
        extended, new sequences, group cards)`` for the step's card.
        """
        pos = i >> 2
        s = i & 3
        sh = _SUIT_BITS * s
        x = (st >> sh) & 511
        a = x & 7
        b = (x >> 3) & 7
        c = x >> 6
        wm = (st >> _WM) & 7
        wo = (st >> _WO) & 7
        w = wm + wo if self.fill else 0
        base = st & ~(511 << sh)
        if b:
            base |= 1 << _SEQ
        out: list[tuple[Any, ...]] = []
        if pos == 13:  # high ace: only extensions (a 1-card sequence at K cannot finish)
            if a:
                return out
            rsh = _RES + 2 * s
            res = (st >> rsh) & 3
            base &= ~(3 << rsh)
            for r in (range(self.high_max[s] + 1) if self.relax else (res,)):
                for j in range(w + 1):
                    n = r + j
                    if n < b:
                        continue
                    t = n - b
                    if t > c:
                        break
                    if j <= wm:
                        nw = base - (j << _WM)
                    else:
                        nw = base - (wm << _WM) - ((j - wm) << _WO)
                    if dec:
                        out.append((0, nw | ((b + t) << (sh + 6)), (0, r if self.relax else 0,
                                                                    j, t, 0, 0)))
                    else:
                        out.append((0, nw | ((b + t) << (sh + 6))))
            return out
        m, o, unit, cap1, cap2, _later = self.info[i]
        gsum = (st >> _GSUM) & 31
        gmax = (st >> _GMAX) & 7
        last = s == 3
        ab = a + b
        # group look-ahead: what the suits after s can still give to this position's groups
        # is their copies of the card less their short runs, which must take one each first
        # (``defi``: wildcards those short runs need beyond the real copies)
        av1 = av2 = av3 = defi = 0
        if not last:
            cap = self.cap
            for t in range(s + 1, 4):
                y = (st >> (_SUIT_BITS * t)) & 511
                v = cap[t][pos] - (y & 7) - ((y >> 3) & 7)
                if v < 0:
                    defi -= v
                    v = 0
                if t == s + 1:
                    av1 = v
                elif t == s + 2:
                    av2 = v
                else:
                    av3 = v
        if not w and pos:
            # fast path (no wildcard, not an ace): same moves, same order as below
            if defi:
                return out  # a later suit cannot extend its short runs
            base &= _TALLY_CLEAR
            for ou in range(o, -1, -1):
                dc = (o - ou) * unit
                rem = m + ou - ab
                if rem < 0:
                    break
                for t in range(min(c, rem) + 1):
                    r2 = rem - t
                    lng0 = b + t
                    for nb in (range(r2 + 1) if t == c else (0,)):
                        short = nb + a
                        if short > cap1 or nb > cap2:
                            break
                        g = r2 - nb
                        lng = lng0 if lng0 <= cap1 - short else cap1 - short
                        gs = gsum + g
                        gm = gmax if gmax >= g else g
                        if last:
                            ns = close_tally(base, gs, gm)
                            if ns < 0:
                                continue
                        else:
                            if gs and groups_short(gs, gm, av1, av2, av3, 0):
                                continue
                            if gs > 31:
                                continue
                            ns = base | (gs << _GSUM) | (gm << _GMAX)
                        ns |= (nb | (a << 3) | (lng << 6)) << sh
                        if dec:
                            out.append((dc, ns, (ou, 0, 0, t, nb, g)))
                        else:
                            out.append((dc, ns))
            return out
        # wildcards that the short runs of the suits already done at this position need at
        # the next two positions: one wildcard fills one gap, so they count with the rest
        prevdef = 0
        for t in range(s):
            y = (st >> (_SUIT_BITS * t)) & 511
            v = (y & 7) + ((y >> 3) & 7) - self.cap[t][pos + 1]
            if v > 0:
                prevdef += v
            v = (y & 7) - self.cap[t][pos + 2]
            if v > 0:
                prevdef += v
        defi += prevdef
        highs = range(0, self.high_max[s] + 1) if pos == 0 else (0,)
        if pos == 0:
            base &= ~(3 << (_RES + 2 * s))
        for ou in range(o, -1, -1):
            dc = (o - ou) * unit
            real = m + ou
            for h in highs:
                if h > real:
                    break
                hbase = base | (h << (_RES + 2 * s)) if h and not self.relax else base
                # new sequences start with a real card (see the module docstring), except
                # *Q K A: a sequence led by a wildcard can drop it (4+ cards: the wildcard is
                # parked) or move it past its other end, unless that end is the high ace
                starts = real - h if pos != 11 else MAX_COUNT
                # wildcards that the reserved high aces need as their Q and K (each high
                # ace ends its own sequence ...Q K A), while those steps are still ahead
                need = self.high_need[(hbase >> _RES) & 255] if pos < 11 else 0
                for j in range(w + 1 - need):
                    n = real - h + j
                    if n < ab:
                        continue
                    if j <= wm:
                        jb = hbase - (j << _WM)
                    else:
                        jb = hbase - (wm << _WM) - ((j - wm) << _WO)
                    rem = n - ab
                    wl = w - j  # wildcards left after this step
                    if defi > wl:
                        break  # later suits cannot extend their short runs
                    c1 = cap1 + wl
                    c2 = cap2 + wl
                    for t in range(min(c, rem) + 1):
                        r2 = rem - t
                        for nb in (range(r2 + 1) if t == c else (0,)):
                            # look-ahead: short sequences need the next positions
                            short = nb + a
                            if short > c1 or nb > c2 or nb > starts:
                                break
                            need2 = defi
                            if short > cap1:
                                need2 += short - cap1
                            if nb > cap2:
                                need2 += nb - cap2
                            if need2 > wl:
                                break  # all suits' short runs need more wildcards than left
                            g = r2 - nb
                            # long sequences beyond what the next position can extend
                            # must stop there anyway: forget them (canonical state)
                            lng = b + t
                            if lng > c1 - short:
                                lng = c1 - short
                            gs = gsum + g
                            gm = gmax if gmax >= g else g
                            if last:
                                ns = close_tally(jb, gs, gm)
                                if ns < 0:
                                    continue
                            else:
                                if gs and groups_short(gs, gm, av1, av2, av3, wl - defi):
                                    continue  # too few cards left here for the groups
                                if gs > 31:
                                    continue
                                ns = (jb & _TALLY_CLEAR) | (gs << _GSUM) | (gm << _GMAX)
                            ns |= (nb | (a << 3) | (lng << 6)) << sh
                            if dec:
                                out.append((dc, ns, (ou, h, j, t, nb, g)))
                            else:
                                out.append((dc, ns))
        return out

    # ------------------------------------------------------------------ the value function

    def skip(self, i: int, st: int) -> tuple[int, int]:
        """Advance over steps where nothing can happen: no copy of the card, no open
        sequence of its suit, no wildcard to place. Returns the next step and state, or
        ``(56, -1)`` when a group tally on the way is infeasible."""
        if self.fill and (st >> _WM) & 63:
            return i, st
        empty = self.empty
        while i < 52 and empty[i] and not (st >> (_SUIT_BITS * (i & 3))) & 511:
            if i & 3 == 3:
                gs = (st >> _GSUM) & 31
                if gs:
                    st = close_tally(st, gs, (st >> _GMAX) & 7)
                    if st < 0:
                        return 56, -1
            i += 1
        return i, st

    def solve(self, i: int, st: int, beta: int = INF) -> int:
        """Minimum cost of the remaining steps ``i..55`` from state ``st`` (``INF`` if no
        legal completion).

        Fail-soft bound: a result below ``beta`` is exact; a result ``>= beta`` is a lower
        bound of the true value (memoised as such, so a later visit with a larger ``beta``
        that is still at most this bound needs no new search).
        """
        if i < 52 and self.empty[i]:
            i, st = self.skip(i, st)
            if st < 0:
                return INF
        if i == 56:
            return self.finish(st)
        # the parking flags only matter while wildcards are left; once a sequence exists
        # the group count does not matter either (canonical states share memo entries)
        w = (st >> _WM) & 63
        if not w:
            st &= _NO_PARK
        elif (st >> _SEQ) & 1:
            st &= _NO_P3
        left = ((st >> _WM) & 7) + ((st >> _WO) & 7)
        if left < len(self.lower):
            low = self.lower[left]
            p1 = (i >> 2) + 1
            p5 = p1 + 4
            lb = (low[0][p5 if st & 511 else p1] + low[1][p5 if (st >> 9) & 511 else p1]
                  + low[2][p5 if (st >> 18) & 511 else p1]
                  + low[3][p5 if (st >> 27) & 511 else p1])
            if lb >= beta:
                return lb
        key = (st << 6) | i
        memo = self.memo
        v = memo.get(key)
        if v is not None:
            if v >= 0:
                return v
            if -v - 1 >= beta:
                return -v - 1
        relaxed = self.relaxed
        if relaxed is not None and i >= 4 and not i & 3 and (st >> _RES) & 255:
            # the relaxed search forgets reserved high aces (any ace may end a high
            # sequence, for free): its value is a lower bound of this state's value
            lb = relaxed.solve(i, st & _NO_RES, beta)
            if lb >= beta:
                memo[key] = -lb - 1
                return lb
        counter = self.counter
        counter[0] += 1
        if self.abort is not None and counter[0] > self.abort:
            raise Aborted
        if not self.relax and self.node_limit is not None and counter[0] > self.node_limit:
            self.exceeded = True
            return INF
        best = INF
        bound = beta
        solve = self.solve
        nxt = i + 1
        for dc, ns in self.options(i, st):
            if dc >= bound:
                if dc < best:
                    best = dc  # fail-soft: a pruned move costs at least dc
                continue
            v = dc + solve(nxt, ns, bound - dc)
            if v < best:
                best = v
                if v < bound:
                    bound = v
                    if not v:
                        break
        memo[key] = best if best < beta else -best - 1
        return best

    @property
    def nodes(self) -> int:
        """States expanded so far, by this search and its relaxed search."""
        return self.counter[0]

    def wants_relaxed(self) -> bool:
        """True when high aces can be kept back in two or more suits: only then is the
        relaxed search (see :meth:`solve`) worth building."""
        return sum(1 for h in self.high_max if h) >= 2

    def solve_root(self, st: int, beta: int = INF) -> int:
        """:meth:`solve` from step 0, trying the relaxed search alone first.

        Without a node budget, the relaxed search (see :meth:`solve`) runs from the root:
        if its value ``v`` reaches ``beta``, so does this search's (it is a lower bound);
        if its optimal solution keeps back, in every suit, exactly the aces it ends high
        sequences with, that solution is legal here too and, being optimal for the
        relaxation, optimal here: :meth:`trace` returns it. Otherwise this search runs,
        bounded by the relaxed one: first with the bound ``v + 1``, which settles the
        common case where both values are equal, then, if that fails, with ``beta``. With
        a node budget only the last.
        """
        self.root_trace = None
        relaxed = self.relaxed
        if relaxed is None or self.node_limit is not None:
            return self.solve(0, st, beta)
        v = relaxed.solve(0, st, beta)
        if v < beta:
            steps, end = relaxed.trace(st)
            if all(steps[s][1][1] == steps[52 + s][1][1] for s in range(4)):
                self.root_trace = (steps, end)
        if v >= beta or self.root_trace is not None:
            return v
        if v + 1 < beta:
            tight = self.solve(0, st, v + 1)
            if tight <= v:
                return tight
        return self.solve(0, st, beta)

    def finish(self, st: int) -> int:
        """Cost of the end state: every sequence has 3+ cards, every wildcard left over is
        parked (joins a sequence, a group of 3, or a meld of 3+ jokers) or, if a hand
        joker, stays in hand."""
        if st & 0o77 or (st >> 9) & 0o77 or (st >> 18) & 0o77 or (st >> 27) & 0o77:
            return INF
        wm = (st >> _WM) & 7
        wo = (st >> _WO) & 7
        if not wm + wo or (st >> _SEQ) & 1 or wm + wo >= 3:
            return 0
        room = (st >> _P3) & 3
        if wm > room:
            return INF
        left = wo - (room - wm)
        return left * self.wcost if left > 0 else 0

    def parked(self, st: int) -> int:
        """Number of wildcards that :meth:`finish` parks in end state ``st``."""
        return parked(st)

    def melds(self, steps: Sequence[tuple[int, Sequence[int]]],
              kept: Sequence[int]) -> list[list[int]]:
        """The melds of the trace ``steps`` (:meth:`trace`), before wildcards are parked:
        :func:`rummy.solver.build.build_melds` on Python lists. ``kept[c]``: table jokers
        that keep their declared card ``c``.

        Raises:
            RuntimeError: the trace does not add up (a solver bug).
        """
        rows = [x for _, d in steps for x in d]
        n = room(rows, self.mand)
        out = [0] * n
        lens = [0] * n
        count = build_melds(rows, self.mand, list(kept), n, [0] * workspace_size(n), out,
                            lens)
        return split_melds(out, lens, count)

    def trace(self, st: int) -> tuple[list[tuple[int, tuple[int, ...]]], int]:
        """The decisions of an optimal solution from the initial state ``st``, as
        ``(step, decision)`` for every step (see :meth:`options`), and the end state."""
        if self.root_trace is not None:
            return self.root_trace
        target = self.solve(0, st)
        if target >= INF:
            raise RuntimeError("trace of an infeasible position")
        out: list[tuple[int, tuple[int, ...]]] = []
        i = 0
        while True:
            if i < 52 and self.empty[i]:
                j, st = self.skip(i, st)
                out.extend((k, (0, 0, 0, 0, 0, 0)) for k in range(i, j))
                i = j
            if i == 56:
                break
            moves = self.options(i, st, True)
            if self.relax and i >= 52:
                # a relaxed trace ends high sequences with the aces it kept back, where it
                # can: then its solution is one of the exact search too (solve_root)
                h = out[i - 52][1][1]
                moves.sort(key=lambda m: m[2][1] != h)
            for dc, ns, d in moves:
                if dc <= target and dc + self.solve(i + 1, ns, target - dc + 1) == target:
                    out.append((i, d))
                    target -= dc
                    st = ns
                    break
            else:
                raise RuntimeError("trace lost the optimal branch")
            i += 1
        return out, st
