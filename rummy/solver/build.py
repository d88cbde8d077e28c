"""The one builder of the new table: a traced solution of the search turned into melds.

Both backends run this source: the pure search calls :func:`build_melds` on Python lists,
the compiled backend (:mod:`rummy.solver._kernels`) compiles the same function with numba
and calls it on int64 arrays. It is therefore written in the subset both accept: integers,
flat buffers indexed by position, no helper calls, no allocation (the caller passes the
buffers, sized by :func:`room`).

A trace is 56 rows of 6 integers, one per step ``i`` (line position ``i >> 2``, suit
``i & 3``, see :mod:`rummy.solver.search`): ``(ou, h, j, t, nb, g)`` = optional copies
used, aces kept back for a high ace, wildcards declared as the step's card, long sequences
extended, new sequences started, cards put into groups. The sweep tracks sequences
explicitly (oldest first, so the oldest stop first) and cuts each position's group cards
into groups of 3–4 distinct suits (R4.2), each suit left out of ``G - g`` of the ``G``
groups (the most groups: the search counts groups of 3 for parking wildcards).
"""

from __future__ import annotations

from typing import Any

#: integers per traced step: (ou, h, j, t, nb, g)
ROW = 6
#: the most cards one sequence holds before it is cut (A..K..A, R4.3)
RUN_CARDS = 14
#: aces of one suit a trace may keep back for a high ace (the search keeps at most 3)
RESERVED = 8


def room(rows: Any, mand: Any) -> int:
    """Capacity that :func:`build_melds` needs for a trace: one more than the cards of the
    new table (every mandatory copy, every optional copy used, every wildcard placed), which
    bounds the sequences, the melds and the copies of any one step."""
    total = 0
    for c in range(52):
        total += mand[c]
    for i in range(56):
        total += rows[i * ROW] + rows[i * ROW + 2]
    return total + 1


def workspace_size(n: int) -> int:
    """Length of the ``ws`` buffer of :func:`build_melds` for capacity ``n`` (zeros)."""
    return (RUN_CARDS + 1 + 4 + 4 + 1 + 1 + 4 + 1 + 1 + 4) * n + 4 + 4 + 4 * RESERVED + 4 + 4


def build_melds(rows: Any, mand: Any, kept: Any, n: int, ws: Any, out: Any,
                lens: Any) -> int:  # noqa: C901 - one sweep, kept whole for numba
    """Build the melds of a traced solution, before wildcards are parked.

    Args:
        rows: the trace, ``56 * ROW`` integers (step-major).
        mand: mandatory copies of each real card 0..51.
        kept: table jokers that keep their declared card, by card 0..51 (consumed: changed
            in place).
        n: the capacity, at least :func:`room` of the trace.
        ws: a work buffer of :func:`workspace_size` ``(n)`` zeros.
        out: receives the cards of every meld, meld after meld (at least ``n`` slots).
        lens: receives each meld's number of cards (at least ``n`` slots).

    Returns:
        The number of melds: meld ``k`` is ``out[sum(lens[:k]) : sum(lens[:k + 1])]``, in
        the sweep's order (a sequence when it stops, a position's groups after its last
        suit, the sequences still open at the end), each in display order but a 13-card
        sequence, whose ace the sweep may put last. ``-1`` when the trace does not add up
        (a step places more or fewer copies than it has: a solver bug).
    """
    joker = 53  # rummy.cards.TABLE_JOKER_BASE (a plain int: numba compiles this)
    # offsets of the parts of ws
    o_rc = 0  # the cards of each sequence, RUN_CARDS slots each
    o_rl = o_rc + RUN_CARDS * n  # the length of each sequence
    o_sh = o_rl + n  # per suit: open sequences of 1-2 cards, oldest first
    o_lg = o_sh + 4 * n  # per suit: open sequences of 3+ cards, oldest first
    o_ns = o_lg + 4 * n  # per suit: how many short ones
    o_nl = o_ns + 4  # per suit: how many long ones
    o_nsh = o_nl + 4  # the short ones after this step
    o_nlg = o_nsh + n  # the long ones after this step
    o_rs = o_nlg + n  # per suit: the aces kept back for a high ace
    o_nr = o_rs + 4 * RESERVED
    o_gc = o_nr + 4  # per suit: this position's group cards
    o_ng = o_gc + 4 * n
    o_cp = o_ng + 4  # the copies this step places
    o_gl = o_cp + n  # the length of each group being cut
    o_gb = o_gl + n  # the cards of each group being cut, 4 slots each
    n_runs = 0
    n_out = 0
    n_melds = 0
    for i in range(56):
        s = i & 3
        pos = i >> 2
        ou = rows[i * ROW]
        h = rows[i * ROW + 1]
        j = rows[i * ROW + 2]
        t = rows[i * ROW + 3]
        nb = rows[i * ROW + 4]
        g = rows[i * ROW + 5]
        if (ou or h or j or t or nb or g or ws[o_ns + s] or ws[o_nl + s]
                or (pos < 13 and mand[s * 13 + pos])):
            nc = 0
            card = s * 13 + (pos if pos < 13 else 0)
            if pos < 13:
                m = mand[card]
                k = kept[card]
                if k > m:
                    k = m
                for _ in range(k):  # table jokers that keep this card come first
                    ws[o_cp + nc] = joker + card
                    nc += 1
                for _ in range(m - k + ou):
                    ws[o_cp + nc] = card
                    nc += 1
                if pos == 0 and h:  # the last h copies wait for the high ace
                    if h > RESERVED:
                        return -1
                    for q in range(h):
                        ws[o_rs + s * RESERVED + q] = ws[o_cp + nc - h + q]
                    ws[o_nr + s] = h
                    nc -= h
                kept[card] -= k
            else:
                for q in range(ws[o_nr + s]):
                    ws[o_cp + nc] = ws[o_rs + s * RESERVED + q]
                    nc += 1
                ws[o_nr + s] = 0
            for _ in range(j):  # wildcards declared as this card
                ws[o_cp + nc] = joker + card
                nc += 1
            # the oldest long sequences stop; the newest t continue
            stop = ws[o_nl + s] - t
            if stop > 0:
                for q in range(stop):
                    r = ws[o_lg + s * n + q]
                    for x in range(ws[o_rl + r]):
                        out[n_out] = ws[o_rc + r * RUN_CARDS + x]
                        n_out += 1
                    lens[n_melds] = ws[o_rl + r]
                    n_melds += 1
                for q in range(stop, ws[o_nl + s]):
                    ws[o_lg + s * n + q - stop] = ws[o_lg + s * n + q]
                ws[o_nl + s] -= stop
            ns = 0
            nl = 0
            for q in range(ws[o_ns + s]):  # every short sequence goes on
                r = ws[o_sh + s * n + q]
                nc -= 1
                if nc < 0:
                    return -1
                ws[o_rc + r * RUN_CARDS + ws[o_rl + r]] = ws[o_cp + nc]
                ws[o_rl + r] += 1
                if ws[o_rl + r] >= 3:
                    ws[o_nlg + nl] = r
                    nl += 1
                else:
                    ws[o_nsh + ns] = r
                    ns += 1
            for q in range(ws[o_nl + s]):  # then the long ones that continue
                r = ws[o_lg + s * n + q]
                nc -= 1
                if nc < 0 or ws[o_rl + r] >= RUN_CARDS:
                    return -1
                ws[o_rc + r * RUN_CARDS + ws[o_rl + r]] = ws[o_cp + nc]
                ws[o_rl + r] += 1
                ws[o_nlg + nl] = r
                nl += 1
            for _ in range(nb):  # new sequences
                nc -= 1
                if nc < 0:
                    return -1
                ws[o_rc + n_runs * RUN_CARDS] = ws[o_cp + nc]
                ws[o_rl + n_runs] = 1
                ws[o_nsh + ns] = n_runs
                ns += 1
                n_runs += 1
            for q in range(ns):
                ws[o_sh + s * n + q] = ws[o_nsh + q]
            ws[o_ns + s] = ns
            for q in range(nl):
                ws[o_lg + s * n + q] = ws[o_nlg + q]
            ws[o_nl + s] = nl
            for q in range(g):  # the rest joins this position's groups
                nc -= 1
                if nc < 0:
                    return -1
                ws[o_gc + s * n + q] = ws[o_cp + nc]
            ws[o_ng + s] = g
            if nc != 0:
                return -1
        if s == 3 and pos < 13:
            tot = ws[o_ng] + ws[o_ng + 1] + ws[o_ng + 2] + ws[o_ng + 3]
            if tot:
                # the most groups G (3G <= tot <= 4G, at most G cards of a suit); suit s2
                # is left out of G - g[s2] of them, the first free ones in turn
                mx = max(max(ws[o_ng], ws[o_ng + 1]), max(ws[o_ng + 2], ws[o_ng + 3]))
                big = -1
                for cand in range(mx, tot + 1):
                    if 3 * cand <= tot <= 4 * cand:
                        big = cand
                if big < 0:
                    return -1
                for gi in range(big):
                    ws[o_gl + gi] = 0
                kk = 0
                for s2 in range(4):
                    skip_lo = kk
                    skip_hi = kk + big - ws[o_ng + s2]
                    kk = skip_hi
                    for gi in range(big):
                        if not skip_lo <= gi < skip_hi:
                            ws[o_ng + s2] -= 1
                            ws[o_gb + gi * 4 + ws[o_gl + gi]] = ws[o_gc + s2 * n
                                                                  + ws[o_ng + s2]]
                            ws[o_gl + gi] += 1
                for gi in range(big):
                    for x in range(ws[o_gl + gi]):
                        out[n_out] = ws[o_gb + gi * 4 + x]
                        n_out += 1
                    lens[n_melds] = ws[o_gl + gi]
                    n_melds += 1
            for s2 in range(4):
                ws[o_ng + s2] = 0
    for s in range(4):  # the sequences still open: short ones first, then long, by suit
        for q in range(ws[o_ns + s] + ws[o_nl + s]):
            if q < ws[o_ns + s]:
                r = ws[o_sh + s * n + q]
            else:
                r = ws[o_lg + s * n + q - ws[o_ns + s]]
            for x in range(ws[o_rl + r]):
                out[n_out] = ws[o_rc + r * RUN_CARDS + x]
                n_out += 1
            lens[n_melds] = ws[o_rl + r]
            n_melds += 1
    return n_melds


def split_melds(out: list[int], lens: list[int], count: int) -> list[list[int]]:
    """The melds of :func:`build_melds`'s buffers (as Python lists) as lists of table cards.

    Raises:
        RuntimeError: ``count`` is -1 (the trace did not add up: a solver bug).
    """
    if count < 0:
        raise RuntimeError("the traced solution does not add up to a table")
    melds: list[list[int]] = []
    at = 0
    for ln in lens[:count]:
        melds.append(out[at:at + ln])
        at += ln
    return melds


__all__ = ["ROW", "build_melds", "room", "split_melds", "workspace_size"]
