"""The compiled kernels of :mod:`rummy.solver.compiled` (numba). Imported on first use.

Importing this module imports numpy and numba and compiles the kernels, or loads them from
numba's on-disk cache. It raises ImportError when numba cannot be used here (not installed,
or disabled with ``NUMBA_DISABLE_JIT``). When no cache location is writable (a read-only
install without a writable home or ``NUMBA_CACHE_DIR``) the kernels are compiled in memory
for each process instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import config, njit

from rummy.solver.build import build_melds, room, workspace_size
from rummy.solver.search import (
    _GMAX,
    _GSUM,
    _NO_P3,
    _NO_PARK,
    _NO_RES,
    _P3,
    _RES,
    _SEQ,
    _SUIT_BITS,
    _TALLY_CLEAR,
    _WM,
    _WO,
    FLAT_TEMPLATE,
    INF,
    MAX_COUNT,
    O_CAP,
    O_EMPTY,
    O_FILL,
    O_GOK,
    O_HMAX,
    O_LOW,
    O_NEED,
    O_THREES,
    groups_short,
    parked,
    search_tables,
)

# numba's debug switch: the kernels would run as slow Python
if getattr(config, "DISABLE_JIT", False):
    raise ImportError("numba JIT is disabled (NUMBA_DISABLE_JIT)")


def _jit(fn: Callable[..., Any]) -> Any:
    """``njit`` with numba's on-disk cache when a cache location is writable, else
    without (numba raises RuntimeError at decoration when it finds none)."""
    try:
        return njit(cache=True, nogil=True)(fn)
    except RuntimeError:
        return njit(nogil=True)(fn)


#: rows of move buffer per step; a step with more moves makes the compiled search give up
#: (``overflow``) and the caller runs the pure search instead
MAX_MOVES = 512

_VMASK = (1 << 57) - 1  # memo value field (see _slot)
_VSIGN = 1 << 56
_VBIG = 1 << 55  # saturated INF
_LOW6 = 0o77
#: :data:`rummy.solver.search.FLAT_TEMPLATE` as an array (copied for each search)
_FLAT_TEMPLATE = np.array(FLAT_TEMPLATE, dtype=np.int64)

#: the one builder of a search's tables (:func:`rummy.solver.search.search_tables`),
#: compiled from its source
_tables = _jit(search_tables)

#: :func:`rummy.solver.search.groups_short`, compiled from the same source
_groups_short = _jit(groups_short)


@_jit
def _close_tally(ns: int, gs: int, gm: int, T: Any) -> int:
    """:func:`rummy.solver.search.close_tally` on the flat table ``T`` (-1: infeasible)."""
    if gs > 31 or gm > 7 or not T[O_GOK + gs * 8 + gm]:
        return -1
    ns &= _TALLY_CLEAR
    if gs:
        p3 = ((ns >> _P3) & 3) + T[O_THREES + gs * 8 + gm]
        if p3 > 3:
            p3 = 3
        ns = (ns & ~(3 << _P3)) | (p3 << _P3)
    return ns


@_jit
def _moves(i: int, st: int, P: Any, buf: Any, relax: int, row0: int) -> int:  # noqa: C901
    """Write every move of step ``i`` from ``st`` into ``buf[row0:]`` as rows
    ``(cost, new state, ou, h, j, t, nb, g)``; return the number of rows (-1: overflow).
    Mirrors :meth:`Search.options` (general path; the pure fast path is the same) of
    the search (``relax`` 0) or of its relaxed search (``relax`` 1)."""
    T = P[0]
    fill = T[O_FILL]
    n_out = 0
    pos = i >> 2
    s = i & 3
    sh = _SUIT_BITS * s
    x = (st >> sh) & 511
    a = x & 7
    b = (x >> 3) & 7
    c = x >> 6
    wm = (st >> _WM) & 7
    wo = (st >> _WO) & 7
    w = wm + wo if fill else 0
    base = st & ~(511 << sh)
    if b:
        base |= 1 << _SEQ
    if pos == 13:
        if a:
            return 0
        if T[O_LOW]:
            w = 0  # the ace is low only (ace_high=false): no wildcard goes high either
        rsh = _RES + 2 * s
        res = (st >> rsh) & 3
        base &= ~(3 << rsh)
        r_lo = 0 if relax else res
        r_hi = T[O_HMAX + s] if relax else res
        for rr in range(r_lo, r_hi + 1):
            for j in range(w + 1):
                nn = rr + j
                if nn < b:
                    continue
                t = nn - b
                if t > c:
                    break
                if j <= wm:
                    nw = base - (j << _WM)
                else:
                    nw = base - (wm << _WM) - ((j - wm) << _WO)
                if n_out == MAX_MOVES or row0 + n_out >= buf.shape[0]:
                    return -1
                buf[row0 + n_out, 0] = 0
                buf[row0 + n_out, 1] = nw | ((b + t) << (sh + 6))
                buf[row0 + n_out, 2] = 0
                buf[row0 + n_out, 3] = rr if relax else 0
                buf[row0 + n_out, 4] = j
                buf[row0 + n_out, 5] = t
                buf[row0 + n_out, 6] = 0
                buf[row0 + n_out, 7] = 0
                n_out += 1
        return n_out
    m = T[6 * i + 0]
    o = T[6 * i + 1]
    unit = T[6 * i + 2]
    cap1 = T[6 * i + 3]
    cap2 = T[6 * i + 4]
    gsum = (st >> _GSUM) & 31
    gmax = (st >> _GMAX) & 7
    last = s == 3
    ab = a + b
    av1 = 0
    av2 = 0
    av3 = 0
    defi = 0
    if not last:
        for t in range(s + 1, 4):
            y = (st >> (_SUIT_BITS * t)) & 511
            v = T[O_CAP + 16 * t + pos] - (y & 7) - ((y >> 3) & 7)
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
        # Search.options, fast path (no wildcard, not an ace): same moves, same order
        if defi:
            return 0
        base &= _TALLY_CLEAR
        for ou in range(o, -1, -1):
            dc = (o - ou) * unit
            rem = m + ou - ab
            if rem < 0:
                break
            tmax = c if c < rem else rem
            for t in range(tmax + 1):
                r2 = rem - t
                lng0 = b + t
                nb_hi = r2 if t == c else 0
                for nb in range(nb_hi + 1):
                    short = nb + a
                    if short > cap1 or nb > cap2:
                        break
                    g = r2 - nb
                    lng = lng0 if lng0 <= cap1 - short else cap1 - short
                    gs = gsum + g
                    gm = gmax if gmax >= g else g
                    if last:
                        ns = _close_tally(base, gs, gm, T)
                        if ns < 0:
                            continue
                    else:
                        if gs and _groups_short(gs, gm, av1, av2, av3, 0):
                            continue
                        if gs > 31:
                            continue
                        ns = base | (gs << _GSUM) | (gm << _GMAX)
                    ns |= (nb | (a << 3) | (lng << 6)) << sh
                    if n_out == MAX_MOVES or row0 + n_out >= buf.shape[0]:
                        return -1
                    buf[row0 + n_out, 0] = dc
                    buf[row0 + n_out, 1] = ns
                    buf[row0 + n_out, 2] = ou
                    buf[row0 + n_out, 3] = 0
                    buf[row0 + n_out, 4] = 0
                    buf[row0 + n_out, 5] = t
                    buf[row0 + n_out, 6] = nb
                    buf[row0 + n_out, 7] = g
                    n_out += 1
        return n_out
    for t in range(s):  # Search.options: the short runs of the suits done here
        y = (st >> (_SUIT_BITS * t)) & 511
        v = (y & 7) + ((y >> 3) & 7) - T[O_CAP + 16 * t + pos + 1]
        if v > 0:
            defi += v
        v = (y & 7) - T[O_CAP + 16 * t + pos + 2]
        if v > 0:
            defi += v
    hmax = T[O_HMAX + s] if pos == 0 else 0
    if pos == 0:
        base &= ~(3 << (_RES + 2 * s))
    for ou in range(o, -1, -1):
        dc = (o - ou) * unit
        real = m + ou
        for h in range(hmax + 1):
            if h > real:
                break
            hbase = base | (h << (_RES + 2 * s)) if h and not relax else base
            starts = real - h if pos != (10 if T[O_LOW] else 11) else MAX_COUNT
            need = T[O_NEED + ((hbase >> _RES) & 255)] if pos < 11 else 0
            for j in range(w + 1 - need):
                nn = real - h + j
                if nn < ab:
                    continue
                if j <= wm:
                    jb = hbase - (j << _WM)
                else:
                    jb = hbase - (wm << _WM) - ((j - wm) << _WO)
                rem = nn - ab
                wl = w - j
                if defi > wl:
                    break
                c1 = cap1 + wl
                c2 = cap2 + wl
                for t in range(min(c, rem) + 1):
                    r2 = rem - t
                    nb_hi = r2 if t == c else 0
                    for nb in range(nb_hi + 1):
                        short = nb + a
                        if short > c1 or nb > c2 or nb > starts:
                            break
                        need2 = defi
                        if short > cap1:
                            need2 += short - cap1
                        if nb > cap2:
                            need2 += nb - cap2
                        if need2 > wl:
                            break
                        g = r2 - nb
                        lng = b + t
                        if lng > c1 - short:
                            lng = c1 - short
                        gs = gsum + g
                        gm = gmax if gmax >= g else g
                        if last:
                            ns = _close_tally(jb, gs, gm, T)
                            if ns < 0:
                                continue
                        else:
                            if gs and _groups_short(gs, gm, av1, av2, av3, wl - defi):
                                continue
                            if gs > 31:
                                continue
                            ns = (jb & _TALLY_CLEAR) | (gs << _GSUM) | (gm << _GMAX)
                        ns |= (nb | (a << 3) | (lng << 6)) << sh
                        if n_out == MAX_MOVES or row0 + n_out >= buf.shape[0]:
                            return -1
                        buf[row0 + n_out, 0] = dc
                        buf[row0 + n_out, 1] = ns
                        buf[row0 + n_out, 2] = ou
                        buf[row0 + n_out, 3] = h
                        buf[row0 + n_out, 4] = j
                        buf[row0 + n_out, 5] = t
                        buf[row0 + n_out, 6] = nb
                        buf[row0 + n_out, 7] = g
                        n_out += 1
    return n_out

@_jit
def _skip(i: int, st: int, P: Any) -> tuple[int, int]:
    """Mirrors :meth:`Search.skip`."""
    T = P[0]
    if T[O_FILL] and (st >> _WM) & 63:
        return i, st
    while i < 52 and T[O_EMPTY + i] and not (st >> (_SUIT_BITS * (i & 3))) & 511:
        if i & 3 == 3:
            gs = (st >> _GSUM) & 31
            if gs:
                st = _close_tally(st, gs, (st >> _GMAX) & 7, T)
                if st < 0:
                    return 56, -1
        i += 1
    return i, st


@_jit
def _finish(st: int, wcost: int) -> int:
    """Mirrors :meth:`Search.finish`."""
    if st & _LOW6 or (st >> 9) & _LOW6 or (st >> 18) & _LOW6 or (st >> 27) & _LOW6:
        return INF
    wm = (st >> _WM) & 7
    wo = (st >> _WO) & 7
    if not wm + wo or (st >> _SEQ) & 1 or wm + wo >= 3:
        return 0
    room = (st >> _P3) & 3
    if wm > room:
        return INF
    left = wo - (room - wm)
    return left * wcost if left > 0 else 0

# ------------------------------------------------------------------ the memo
# An open-addressing hash table keyed by (step, state), 16 bytes a slot so that a
# probe touches one cache line: ``mem[h] = (state, (step + 1) << 57 | value)`` (0: an
# empty slot), the value as in Search.memo (>= 0 exact, -(bound)-1 a lower bound) in
# 57 bits, INF and -INF-1 saturated. ``cnt[5]``/``cnt[9]`` count the entries.

@_jit
def _slot(i: int, st: int, mem: Any) -> Any:
    mask = mem.shape[0] - 1
    x = st * 0x5851F42D4C957F2D + i * 0x14057B7EF767814F
    x ^= x >> 32
    x *= 0x2545F4914F6CDD1D
    h = (x ^ (x >> 29)) & mask
    tag = i + 1
    while True:
        w = mem[h, 1]
        if w == 0 or ((w >> 57) == tag and mem[h, 0] == st):
            return h
        h = (h + 1) & mask

@_jit
def _value(mem: Any, h: int) -> Any:
    x = mem[h, 1] & _VMASK
    if x >= _VSIGN:
        x -= _VSIGN << 1
    if x == _VBIG:
        return INF
    if x == -_VBIG - 1:
        return -INF - 1
    return x

@_jit
def _store(mem: Any, h: int, i: int, st: int, v: int) -> Any:
    """Write the entry; returns 1 if the slot was empty."""
    new = 1 if mem[h, 1] == 0 else 0
    if v >= _VBIG:
        v = _VBIG
    elif v <= -_VBIG - 1:
        v = -_VBIG - 1
    mem[h, 0] = st
    mem[h, 1] = ((i + 1) << 57) | (v & _VMASK)
    return new

@_jit
def _note(fr: Any, which: int, h: int) -> None:
    """Add slot ``h`` of the first memo ``which`` (0: the search's, 1: the relaxed
    search's) to its list of used slots in ``fr`` (rows ``TL_ROW`` on, see :data:`TL_ROW`)."""
    n = fr[TL_ROW, which]
    k = (TL_MEM if which == 0 else TL_RMEM) + n
    fr[TL_ROW + (k >> 7), k & 127] = h
    fr[TL_ROW, which] = n + 1


@_jit
def _clear(mem: Any, fr: Any, which: int) -> None:
    """Empty the slots of the first memo ``which`` listed in ``fr`` (:func:`_note`), and
    the list: the memo is all zeros again, at the cost of the entries the last search
    made rather than of the whole table."""
    at = TL_MEM if which == 0 else TL_RMEM
    for n in range(fr[TL_ROW, which]):
        k = at + n
        mem[fr[TL_ROW + (k >> 7), k & 127], 1] = 0
    fr[TL_ROW, which] = 0


@_jit
def _grown(mem: Any, arena: Any, which: int) -> Any:
    """A memo 4 times the size of ``mem`` (few rehashes on big searches) holding its
    entries: a table of the work array's arena (``which`` 0: the search's tables, 1: the
    relaxed search's; see :data:`ARENA_TOP`), zeroed here, or a new array past the
    arena's largest."""
    size = mem.shape[0] * 4
    level = (MEM0 if which == 0 else RMEM0) * 4
    at = 0 if which == 0 else ARENA_MEM
    while level < size:
        at += level
        level *= 4
    if size <= ARENA_TOP:
        new = arena[2 * at:2 * (at + size)].reshape(size, 2)
        new[:] = 0
    else:
        new = np.zeros((size, 2), np.int64)
    for h in range(mem.shape[0]):
        w = mem[h, 1]
        if w != 0:
            g = _slot((w >> 57) - 1, mem[h, 0], new)
            new[g, 0] = mem[h, 0]
            new[g, 1] = w
    return new

@_jit
def _dead_bound(i: int, st: int, lower: Any, left: int) -> Any:
    """The dead-card lower bound of the state ``(i, st)`` with ``left`` wildcards still
    to place: the sum over the four suits of ``lower[left, suit, column]``, the column
    that of the rank ``i`` has reached, 4 further on when the suit's nine state bits are
    not all zero. Shared by :func:`_solve` and :func:`_known` (the same bound in both, so
    the values and the states counted agree)."""
    p1 = (i >> 2) + 1
    p5 = p1 + 4
    return (lower[left, 0, p5 if st & 511 else p1]
            + lower[left, 1, p5 if (st >> 9) & 511 else p1]
            + lower[left, 2, p5 if (st >> 18) & 511 else p1]
            + lower[left, 3, p5 if (st >> 27) & 511 else p1])


@_jit
def _solve(i: int, st: int, beta: int, P: Any, mem: Any, rmem: Any, buf: Any,
           cnt: Any, relax0: int, fr: Any, base0: int) -> tuple[int, Any, Any]:  # noqa: C901
    """Mirrors :meth:`Search.solve` (fail-soft bound ``beta``) with an explicit stack
    instead of recursion (numba caches non-recursive functions safely). The relaxed
    search (:attr:`Search.relaxed`, when ``cnt[8]``) runs on the same stack: frame mode
    0 is a state of the search waiting for its relaxed bound, 1 a state of the search
    expanding its moves, 2 a state of the relaxed search. ``mem``/``rmem`` are the two
    memo tables, returned with the value (they grow; a new entry in a first memo, the
    work array's, is listed in ``fr``, see :data:`TL_ROW`). ``cnt`` holds ``[nodes, exceeded,
    overflow, node_limit (-1: none), wcost, memo entries, end state, trace lost,
    has relaxed search, relaxed memo entries]``. The moves of the frames lie one after
    the other in ``buf`` from row ``base0`` (the frames of one chain of steps, at most
    ``MAX_MOVES`` rows each: the rows touched stay few and close together)."""
    T = P[0]
    lower = P[1]
    has_lower = lower.shape[0]
    wcost = cnt[4]
    limit = cnt[3]
    abort = cnt[10]
    has_relaxed = cnt[8]
    k_mem = cnt[0] * 0  # the memo kinds of _note and _grown, as run-time values
    k_rmem = k_mem + 1
    f_i = fr[0]  # the explicit stack (rows 0-8 of fr, part of the work array)
    f_st = fr[1]
    f_beta = fr[2]
    f_best = fr[3]
    f_bound = fr[4]
    f_k = fr[5]
    f_n = fr[6]
    f_mode = fr[7]
    f_base = fr[8]  # the frame's first row in buf
    sp = 0
    ret = 0
    descend = True
    relax = relax0  # the search that the state being entered belongs to
    while True:
        if descend:
            descend = False
            # --- the part of Search.solve before the moves
            if i < 52 and T[O_EMPTY + i]:
                i, st = _skip(i, st, P)
                if st < 0:
                    ret = INF
                    i = -1
            if i == 56:
                ret = _finish(st, wcost)
            elif i >= 0:
                w = (st >> _WM) & 63
                if not w:
                    st &= _NO_PARK
                elif (st >> _SEQ) & 1:
                    st &= _NO_P3
                known = False
                left = ((st >> _WM) & 7) + ((st >> _WO) & 7)
                if left < has_lower:
                    lb = _dead_bound(i, st, lower, left)
                    if lb >= beta:
                        ret = lb
                        known = True
                if not known:
                    if relax:
                        h = _slot(i, st, rmem)
                        found = rmem[h, 1] != 0
                        v = _value(rmem, h) if found else 0
                    else:
                        h = _slot(i, st, mem)
                        found = mem[h, 1] != 0
                        v = _value(mem, h) if found else 0
                    if found:
                        if v >= 0:
                            ret = v
                            known = True
                        elif -v - 1 >= beta:
                            ret = -v - 1
                            known = True
                if not known:
                    f_i[sp] = i
                    f_st[sp] = st
                    f_beta[sp] = beta
                    f_best[sp] = INF
                    f_bound[sp] = beta
                    f_k[sp] = -1
                    if not relax and has_relaxed and i >= 4 and not i & 3 \
                            and (st >> _RES) & 255:
                        # ask the relaxed search for a bound first
                        if sp >= 126:  # never with 56 steps; cheap to check
                            cnt[2] = 1
                            return INF, mem, rmem
                        f_mode[sp] = 0
                        f_n[sp] = 0
                        f_base[sp] = f_base[sp - 1] + f_n[sp - 1] if sp else base0
                        sp += 1
                        st &= _NO_RES
                        relax = 1
                        descend = True
                        continue
                    expand = True
                    if not relax:
                        cnt[0] += 1
                        if abort >= 0 and cnt[0] > abort:
                            cnt[11] = 1  # over the abort budget: stop everything
                            cnt[2] = 1
                            return INF, mem, rmem
                        if limit >= 0 and cnt[0] > limit:
                            cnt[1] = 1
                            ret = INF
                            expand = False
                    else:
                        cnt[0] += 1
                        if abort >= 0 and cnt[0] > abort:
                            cnt[11] = 1
                            cnt[2] = 1
                            return INF, mem, rmem
                    if expand:
                        fb = f_base[sp - 1] + f_n[sp - 1] if sp else base0
                        n = _moves(i, st, P, buf, relax, fb)
                        if n < 0:
                            cnt[2] = 1
                            return INF, mem, rmem
                        if sp >= 126:
                            cnt[2] = 1
                            return INF, mem, rmem
                        f_mode[sp] = 2 if relax else 1
                        f_n[sp] = n
                        f_base[sp] = fb
                        sp += 1
        if sp == 0:
            return ret, mem, rmem
        t = sp - 1
        mode = f_mode[t]
        if mode == 0:  # the relaxed bound of this state arrived
            ti = f_i[t]
            b0 = f_beta[t]
            relax = 0
            if ret >= b0:
                h = _slot(ti, f_st[t], mem)
                new = _store(mem, h, ti, f_st[t], -ret - 1)
                if new and mem.shape[0] == MEM0:
                    _note(fr, k_mem, h)
                cnt[5] += new
                if 2 * cnt[5] > mem.shape[0]:
                    mem = _grown(mem, P[2], k_mem)
                sp -= 1
                relax = 1 if sp and f_mode[sp - 1] == 2 else 0
                continue
            cnt[0] += 1
            if abort >= 0 and cnt[0] > abort:
                cnt[11] = 1
                cnt[2] = 1
                return INF, mem, rmem
            if limit >= 0 and cnt[0] > limit:
                cnt[1] = 1
                ret = INF
                sp -= 1
                relax = 1 if sp and f_mode[sp - 1] == 2 else 0
                continue
            n = _moves(ti, f_st[t], P, buf, relax, f_base[t])  # relax is 0 here
            if n < 0:
                cnt[2] = 1
                return INF, mem, rmem
            f_mode[t] = 1
            f_n[t] = n
            f_k[t] = -1
            mode = 1
            # fall through: start on the moves (no child has returned yet)
        fb = f_base[t]
        k = f_k[t]
        if k >= 0:  # child k returned ret
            v = buf[fb + k, 0] + ret
            if v < f_best[t]:
                f_best[t] = v
                if v < f_bound[t]:
                    f_bound[t] = v
                    if not v:
                        k = f_n[t]
        k += 1
        bound = f_bound[t]
        n = f_n[t]
        while k < n and buf[fb + k, 0] >= bound:
            if buf[fb + k, 0] < f_best[t]:
                f_best[t] = buf[fb + k, 0]  # fail-soft: a pruned move costs at least this
            k += 1
        if k < n:
            f_k[t] = k
            i = f_i[t] + 1
            st = buf[fb + k, 1]
            beta = bound - buf[fb + k, 0]
            relax = 1 if mode == 2 else 0
            descend = True
            continue
        best = f_best[t]
        b0 = f_beta[t]
        ret = best
        val = best if best < b0 else -best - 1
        ti = f_i[t]
        tst = f_st[t]
        if mode == 2:
            h = _slot(ti, tst, rmem)
            new = _store(rmem, h, ti, tst, val)
            if new and rmem.shape[0] == RMEM0:
                _note(fr, k_rmem, h)
            cnt[9] += new
            if 2 * cnt[9] > rmem.shape[0]:
                rmem = _grown(rmem, P[2], k_rmem)
        else:
            h = _slot(ti, tst, mem)
            new = _store(mem, h, ti, tst, val)
            if new and mem.shape[0] == MEM0:
                _note(fr, k_mem, h)
            cnt[5] += new
            if 2 * cnt[5] > mem.shape[0]:
                mem = _grown(mem, P[2], k_mem)
        sp -= 1
        relax = 1 if sp and f_mode[sp - 1] == 2 else 0

@_jit
def _known(i: int, st: int, beta: int, P: Any, mem: Any, rmem: Any, relax: int,
           wcost: int) -> tuple[int, int]:
    """What :func:`_solve` ``(i, st, beta)`` returns without expanding a state: ``(1,
    value)`` when the state is an end state, is cut by its dead-card bound or is answered
    by the memo (the same steps in the same order as the start of :func:`_solve`, so that
    the value and the states counted are the same), else ``(0, 0)``. Saves the trace a
    call of :func:`_solve` per move it checks."""
    T = P[0]
    if i < 52 and T[O_EMPTY + i]:
        i, st = _skip(i, st, P)
        if st < 0:
            return 1, INF
    if i == 56:
        return 1, _finish(st, wcost)
    if not (st >> _WM) & 63:
        st &= _NO_PARK
    elif (st >> _SEQ) & 1:
        st &= _NO_P3
    lower = P[1]
    left = ((st >> _WM) & 7) + ((st >> _WO) & 7)
    if left < lower.shape[0]:
        lb = _dead_bound(i, st, lower, left)
        if lb >= beta:
            return 1, lb
    if relax:
        h = _slot(i, st, rmem)
        if rmem[h, 1] == 0:
            return 0, 0
        v = _value(rmem, h)
    else:
        h = _slot(i, st, mem)
        if mem[h, 1] == 0:
            return 0, 0
        v = _value(mem, h)
    if v >= 0:
        return 1, v
    if -v - 1 >= beta:
        return 1, -v - 1
    return 0, 0


@_jit
def _trace(st: int, target: int, P: Any, mem: Any, rmem: Any, buf: Any, cnt: Any,
           out: Any, relax: int, fr: Any) -> tuple[int, Any, Any]:
    """Mirrors :meth:`Search.trace` (``relax``: of the relaxed search) from the initial
    state ``st`` whose value is ``target``: fills ``out[step] = (ou, h, j, t, nb, g)``
    and returns the end state (-1: trace lost, -2: move overflow) and the memos."""
    T = P[0]
    i = 0
    while True:
        if i < 52 and T[O_EMPTY + i]:
            j, st = _skip(i, st, P)
            for k in range(i, j):
                for q in range(6):
                    out[k, q] = 0
            i = j
        if i == 56:
            break
        n = _moves(i, st, P, buf, relax, 0)
        if n < 0:
            return -2, mem, rmem
        found = False
        h = out[i - 52, 1] if relax and i >= 52 else -1
        for rnd in range(2 if h >= 0 else 1):
            for k in range(n):
                if h >= 0 and (buf[k, 3] == h) != (rnd == 0):
                    continue  # the relaxed trace tries ending with the kept aces first
                dc = buf[k, 0]
                ns = buf[k, 1]
                if dc <= target:
                    known, sub = _known(i + 1, ns, target - dc + 1, P, mem, rmem, relax,
                                        cnt[4])
                    if not known:
                        sub, mem, rmem = _solve(i + 1, ns, target - dc + 1, P, mem, rmem,
                                                buf, cnt, relax, fr, n)
                        if cnt[2]:
                            return -2, mem, rmem
                    if dc + sub == target:
                        for q in range(6):
                            out[i, q] = buf[k, 2 + q]
                        target -= dc
                        st = ns
                        found = True
                        break
            if found:
                break
        if not found:
            return -1, mem, rmem
        i += 1
    return st, mem, rmem

@_jit
def _solve_traced(st: int, beta: int, P: Any, mem: Any, rmem: Any, buf: Any, cnt: Any,
                  out: Any, relax: int, zero: int, inf: int, fr: Any) -> Any:
    """Solve from the initial state ``st`` with bound ``beta`` and, when the value is below
    it, trace an optimal solution into ``out``. Returns ``(value, end, mem, rmem)``, ``end``
    the end state, or -1 (trace lost), -2 (move overflow), -3 (value not below ``beta``)."""
    value, mem, rmem = _solve(zero, st, beta, P, mem, rmem, buf, cnt, relax, fr, zero)
    if cnt[2]:
        return value, -2, mem, rmem
    if value >= beta:
        return value, -3, mem, rmem
    target, mem, rmem = _solve(zero, st, inf, P, mem, rmem, buf, cnt, relax, fr, zero)
    end, mem, rmem = _trace(st, target, P, mem, rmem, buf, cnt, out, relax, fr)
    return value, end, mem, rmem


@_jit
def _run(st: int, beta: int, P: Any, cnt: Any, out: Any, buf: Any, fr: Any, mem: Any,
         rmem: Any) -> Any:
    """As :meth:`Search.solve_root` then :meth:`Search.trace`: the value from the
    initial state ``st`` with bound ``beta`` and, when it is below ``beta``, an optimal
    solution in ``out[step] = (ou, h, j, t, nb, g)`` with ``cnt[6]`` = the end state.
    ``cnt[2]`` is set on move overflow, ``cnt[7]`` on a lost trace. ``buf``, ``fr``,
    ``mem`` and ``rmem`` are views of the work array of :func:`scratch` (the memos are
    zeroed here; a memo that fills up is replaced by a larger one for the rest of the
    run)."""
    # the search kind as run-time values: numba compiles a function again for every
    # literal argument value, so literals 0/1 here would double the compile time
    zero = cnt[0] * 0
    one = zero + 1
    inf = zero + INF
    # both memos grow when half full: most searches meet a few dozen states. They are
    # the work array's first memos, which _position empties after each search (here
    # nothing is left to empty then)
    _clear(mem, fr, zero)
    _clear(rmem, fr, one)
    if cnt[8] and cnt[3] < 0:  # relaxed search alone first (Search.solve_root)
        value, end, mem, rmem = _solve_traced(st, beta, P, mem, rmem, buf, cnt, out, one,
                                              zero, inf, fr)
        if end == -3:
            return value
        if end < 0:
            cnt[2 if end == -2 else 7] = 1
            return value
        if out[0, 1] == out[52, 1] and out[1, 1] == out[53, 1] \
                and out[2, 1] == out[54, 1] and out[3, 1] == out[55, 1]:
            cnt[6] = end
            return value
        if value + 1 < beta:  # Search.solve_root: the tight bound first
            tight, mem, rmem = _solve(zero, st, value + 1, P, mem, rmem, buf, cnt, zero, fr,
                                      zero)
            if cnt[2]:
                return tight
            if tight <= value:
                beta = value + 1
    value, end, mem, rmem = _solve_traced(st, beta, P, mem, rmem, buf, cnt, out, zero,
                                          zero, inf, fr)
    if end == -2:
        cnt[2] = 1
    elif end == -1:
        cnt[7] = 1
    elif end >= 0:
        cnt[6] = end
    return value


#: the one builder of the new table (:mod:`rummy.solver.build`), compiled from its source
_build = _jit(build_melds)
_room = _jit(room)


# ------------------------------------------------------------------ one whole position
# rummy.solver._best_play's loop over the R5.8 choices, compiled, so that a call of the
# compiled backend crosses from Python into machine code once: the counts of the position,
# the dead-card pruning, the tables of every search, the searches, the trace and the new
# table's melds. Same phases in the same order, same pruning, same searches: the tests
# hold it to the pure backend's plays.

_parked = _jit(parked)
_workspace = _jit(workspace_size)

#: status codes of :func:`_position` (``res[0]``)
ST_NONE = 0  # no play (or none within the node budget)
ST_PLAY = 1  # a play: see _position
ST_ABORTED = 2  # over the abort budget (Aborted)
ST_OVERFLOW = 3  # a step with more than MAX_MOVES moves: the pure search instead
ST_KEEP = 4  # a keep card not in the hand (res[1]: the card)
ST_LOST = 5  # the trace or the builder did not add up (a solver bug)
ST_INPUT = 6  # a card out of range or too many copies: the Python check words it
#: what :func:`_position` returns instead of the result's length when the abort budget
#: ran out (:class:`rummy.solver.search.Aborted`) and when a step had too many moves
R_ABORTED = -2
R_OVERFLOW = -3


@_jit
def _prune(mand: Any, opt: Any, wild: int, partners: Any, dead: Any) -> None:
    """:func:`rummy.solver._prune_dead` on bit masks: adds the dead optional copies to
    ``dead`` and zeroes them in ``opt`` (``partners[c]``: the masks of the other cards of
    every group of 3-4 and sequence of 3-5 holding ``c``, 0-padded; the fixed point does
    not depend on the order the cards are visited in)."""
    absent = 0
    for c in range(52):
        if mand[c] == 0 and opt[c] == 0:
            absent |= 1 << c
    changed = True
    while changed:
        changed = False
        for c in range(52):
            if opt[c] and not mand[c]:
                alive = False
                for q in range(partners.shape[1]):
                    pm = partners[c, q]
                    if pm == 0:
                        break
                    x = pm & absent
                    k = 0
                    while x and k <= wild:  # bit count, up to wild + 1
                        x &= x - 1
                        k += 1
                    if k <= wild and not x:
                        alive = True
                        break
                if not alive:
                    dead[c] += opt[c]
                    opt[c] = 0
                    absent |= 1 << c
                    changed = True


@_jit
def _eff(c: int) -> int:
    """The card a table card stands for (a declared joker: its declaration)."""
    return c - 53 if c >= 53 else c


@_jit
def _line_of(M: Any, k: int, n: int) -> tuple[int, int, int, int]:
    """:func:`rummy.solver._line` of row ``k`` (``n`` cards): ``(1, suit, lowest,
    highest)`` for a sequence, ``(0, 0, 0, 0)`` for a group."""
    ranks = 0
    for x in range(n):
        ranks |= 1 << (_eff(M[k, x]) % 13)
    if (ranks & (ranks - 1)) == 0:
        return 0, 0, 0, 0
    high = (ranks & 1) == 1 and ((ranks >> 12) & 1) == 1 and n != 13
    lo = 99
    hi = -1
    for r in range(13):
        if (ranks >> r) & 1:
            p = 13 if r == 0 and high else r
            if p < lo:
                lo = p
            if p > hi:
                hi = p
    return 1, _eff(M[k, 0]) // 13, lo, hi


@_jit
def _canonical_row(M: Any, k: int, n: int, keys: Any) -> None:
    """:func:`rummy.melds.canonical_meld` of row ``k`` in place (``keys``: scratch)."""
    ranks = 0
    for x in range(n):
        ranks |= 1 << (_eff(M[k, x]) % 13)
    group = (ranks & (ranks - 1)) == 0 and n <= 4
    high = (ranks & 1) == 1 and ((ranks >> 12) & 1) == 1 and n < 13
    for x in range(n):
        c = M[k, x]
        e = _eff(c)
        if group:
            keys[x] = (e // 13) << 8 | c
        elif high:
            r = e % 13
            keys[x] = (r if r else 13) << 8 | c
        else:
            keys[x] = (e % 13) << 8 | c
    for x in range(1, n):  # insertion sort by key
        kx = keys[x]
        cx = M[k, x]
        y = x - 1
        while y >= 0 and keys[y] > kx:
            keys[y + 1] = keys[y]
            M[k, y + 1] = M[k, y]
            y -= 1
        keys[y + 1] = kx
        M[k, y + 1] = cx


@_jit
def _row_less(M: Any, ml: Any, a: int, b: int) -> Any:
    """Row ``a`` sorts before row ``b`` as Python compares tuples."""
    na = ml[a]
    nb = ml[b]
    for x in range(min(na, nb)):
        if M[a, x] != M[b, x]:
            return M[a, x] < M[b, x]
    return na < nb


@_jit
def _final_table(melds: Any, lens: Any, count: int, n: int, low: int, M: Any,
                 aux: Any, keys: Any) -> int:  # noqa: C901
    """The builder's melds as the new table: what :func:`rummy.solver._finish_melds`
    does (A..K..A cut in two, ``n`` wildcards parked by :func:`rummy.solver._park`, the
    melds that parking changed in display order), then every 13-card sequence with its
    ace first (R4.5) and the melds in ascending order (as Python sorts tuples).
    ``low``: the ace is low only. ``M``: rows of at least ``3 * count + 8`` x 16;
    ``aux``: ``3`` x as many (row lengths, flags, order); ``keys``: ``W_WIDTH`` scratch
    integers. Returns the number of melds,
    their order in ``aux[2 * rows:]`` (``rows = M.shape[0]``), or -1 when no place is
    left for a wildcard (a solver bug)."""
    rows = M.shape[0]
    ml = aux[:rows]
    touched = aux[rows:2 * rows]
    order = aux[2 * rows:3 * rows]
    r = 0
    q = 0
    for k in range(count):
        L = lens[k]
        if L == 14:
            for x in range(7):
                M[r, x] = melds[q + x]
                M[r + 1, x] = melds[q + 7 + x]
            ml[r] = 7
            ml[r + 1] = 7
            touched[r] = 0
            touched[r + 1] = 0
            r += 2
        else:
            for x in range(L):
                M[r, x] = melds[q + x]
            ml[r] = L
            touched[r] = 0
            r += 1
        q += L
    top = 12 if low else 13
    while n:
        done = False
        for k in range(r):
            if ml[k] < 0 or ml[k] >= 13:
                continue
            is_seq, suit, lo, hi = _line_of(M, k, ml[k])
            if is_seq:
                p = hi + 1 if hi < top else lo - 1
                M[k, ml[k]] = 53 + suit * 13 + p % 13
                ml[k] += 1
                touched[k] = 1
                n -= 1
                done = True
                break
        if done:
            continue
        f = -1
        for k in range(r):
            if ml[k] > 0 and _line_of(M, k, ml[k])[0] == 1:
                f = k
                break
        if f < 0 or r + 2 > rows:
            break
        # a sequence of 13 has no free end: cut it in two (6 and 7 cards), by rank
        L = ml[f]
        for x in range(1, L):  # stable insertion sort by rank
            cx = M[f, x]
            rx = _eff(cx) % 13
            y = x - 1
            while y >= 0 and _eff(M[f, y]) % 13 > rx:
                M[f, y + 1] = M[f, y]
                y -= 1
            M[f, y + 1] = cx
        for x in range(L):
            if x < 6:
                M[r, x] = M[f, x]
            else:
                M[r + 1, x - 6] = M[f, x]
        ml[r] = 6
        ml[r + 1] = L - 6
        touched[r] = 1
        touched[r + 1] = 1
        ml[f] = -1
        r += 2
    if n >= 3:
        if r >= rows:
            return -1
        for x in range(n):
            M[r, x] = 53 + x
        ml[r] = n
        touched[r] = 0
        r += 1
        n = 0
    while n:
        done = False
        for k in range(r):
            if ml[k] == 3 and _line_of(M, k, 3)[0] == 0:
                e0 = _eff(M[k, 0])
                used = 0
                for x in range(3):
                    used |= 1 << (_eff(M[k, x]) // 13)
                suit = 0
                while (used >> suit) & 1:
                    suit += 1
                M[k, 3] = 53 + suit * 13 + e0 % 13
                ml[k] = 4
                touched[k] = 1
                n -= 1
                done = True
                break
        if not done:
            return -1
    live = 0
    for k in range(r):
        if ml[k] < 0:
            continue
        if touched[k] or ml[k] == 13:
            _canonical_row(M, k, ml[k], keys)
        # insertion into the sorted order
        y = live - 1
        while y >= 0 and _row_less(M, ml, k, order[y]):
            order[y + 1] = order[y]
            y -= 1
        order[y + 1] = k
        live += 1
    return live


#: offsets in the constant array of :func:`_position` (built by rummy.solver.compiled)
K_COSTS = 0  #: four cost vectors of 52: (points, cards) x (line, mirror image)
K_PARTNERS = 4 * 52  #: the partner masks, 52 rows of K_WIDTH (0-padded)
K_WIDTH = 16
K_TEMPLATE = K_PARTNERS + 52 * K_WIDTH  #: FLAT_TEMPLATE
#: fields at the end of ``inp``: table, hand and keep card counts, the cost vector
#: (0..3), the wildcard cost, joker_release="hand", ace low only, node limit, abort
I_FIELDS = 10

#: the scratch array ``W`` of :func:`_position`: offsets of its parts. Capacity of the
#: new table's builder (cards + 1): every input that passes the input check fits (at most
#: 7 copies of each of the 52 cards counting every joker, 364 cards; a real game has at
#: most 108)
W_CAP = 512
W_FLAT = 0  #: the flat table of a search (T_SIZE)
W_OUT = len(FLAT_TEMPLATE)  #: the trace of a search, 56 x 6
W_BEST = W_OUT + 56 * 6  #: the trace of the best search so far, 56 x 6
W_DEADS = W_BEST + 56 * 6  #: dead-card costs by wildcards left, up to MAX_COUNT x 52
W_LOWER = W_DEADS + MAX_COUNT * 52  #: their suffix sums, up to MAX_COUNT x 4 x 19
W_BUILD = W_LOWER + MAX_COUNT * 4 * 19  #: the builder's work buffer
W_MELDS = W_BUILD + workspace_size(W_CAP)  #: the builder's melds and their lengths
W_LENS = W_MELDS + W_CAP
W_RES = W_LENS + W_CAP  #: the result of a call (see :func:`_position`)
W_RES_SIZE = 8 + 4 * W_CAP
W_ROWS = 3 * W_CAP + 8  #: the melds of the new table as rows (:func:`_final_table`)
W_WIDTH = 16
W_M = W_RES + W_RES_SIZE
W_AUX = W_M + W_ROWS * W_WIDTH
#: the vectors of one call, 53 integers each (by card, the hand's joker last), then the
#: search's counters (12) and the sort keys of :func:`_final_table` (W_WIDTH)
W_VEC = W_AUX + 3 * W_ROWS
N_VEC = 18
W_CNT = W_VEC + 53 * N_VEC
W_KEYS = W_CNT + 12
W_SIZE = W_KEYS + W_WIDTH


#: the one array :func:`_position` works in (:func:`scratch`): the constants ``K``,
#: then the move buffer, the frame stack, the two memos and ``W``
S_BUF = K_TEMPLATE + len(FLAT_TEMPLATE)
S_FR = S_BUF + 56 * MAX_MOVES * 8
#: the memos' first sizes (slots; they grow when half full, into arrays of their own):
#: most searches meet a few dozen states
MEM0 = 1 << 10
RMEM0 = 1 << 8
#: ``fr``: 9 rows of 128 for the frame stack of :func:`_solve`, then, from row
#: ``TL_ROW``, the used slots of the first memos (the work array's), so that only those
#: are emptied after a search (:func:`_clear`), not both tables zeroed before the next
#: one (20 KB written before every search, one per R5.8 choice): ``fr[TL_ROW, 0]``
#: and ``fr[TL_ROW, 1]`` count them, and they are listed from flat index ``TL_MEM`` and
#: ``TL_RMEM`` of those rows (index ``k`` at ``fr[TL_ROW + k // 128, k % 128]``). A first
#: memo holds at most half its slots, plus one, before it is replaced by a larger one
TL_ROW = 9
TL_MEM = 2
TL_RMEM = TL_MEM + MEM0 // 2 + 1
FR_ROWS = TL_ROW + (TL_RMEM + RMEM0 // 2 + 1 + 127) // 128
S_MEM = S_FR + FR_ROWS * 128
S_RMEM = S_MEM + MEM0 * 2
#: the arena of the memos that outgrow the first ones: for the search and for its relaxed
#: search, one table of each size (4x the last, up to ``ARENA_TOP`` slots; a larger memo
#: is an array of its own), zeroed when a search grows into it. Its pages, faulted in by
#: the first search that needs them, stay with the work array: a new array of a
#: megabyte cost a big search more in page faults than its whole rehash
ARENA_TOP = 1 << 16


def _arena_slots(first: int) -> int:
    """Slots of the arena's tables for a memo that starts with ``first`` slots."""
    size = first * 4
    total = 0
    while size <= ARENA_TOP:
        total += size
        size *= 4
    return total


ARENA_MEM = _arena_slots(MEM0)  #: the relaxed search's tables start at this slot
S_ARENA = S_RMEM + RMEM0 * 2
S_W = S_ARENA + 2 * (ARENA_MEM + _arena_slots(RMEM0))
S_SIZE = S_W + W_SIZE
#: where the result of :func:`_position` starts in the work array
S_RES = S_W + W_RES
#: the input of :func:`_position`: its length, then ``inp`` (at most ``I_CAP`` integers:
#: every input that passes the input check fits)
S_IN = S_SIZE
I_CAP = 1024
S_TOTAL = S_IN + 1 + I_CAP


@_jit
def _zeros(n: int) -> Any:
    """``n`` zeros, allocated by numba: an array that numba's entry takes as its own
    (no wrapper made on every call, as for an array numpy allocated)."""
    return np.zeros(n, np.int64)


def scratch(K: Any) -> Any:
    """A new work array for :func:`_position`: the constants ``K`` (of
    ``rummy.solver.compiled``) and room for everything a call writes, its result
    included. A caller keeps one per thread and passes it to every call: the kernel
    allocates nothing (an allocation cost more than a small search when the allocator's
    free lists were long, after another library ran), one argument instead of six saves
    numba's dispatch some work, and reusing the array costs nothing: no call reads what a
    previous one left, but the constants and the first memos, which a search finds all
    zeros (the slots a search used, listed beside them, are emptied right after it: see
    :data:`TL_ROW`; an array made here is all zeros)."""
    ws = _zeros(S_TOTAL)
    ws[:S_BUF] = K
    ws[S_W + W_FLAT:S_W + W_FLAT + len(FLAT_TEMPLATE)] = K[K_TEMPLATE:]
    return ws


@_jit
def _position(ws: Any) -> Any:  # noqa: C901
    """The best play of one position, as :func:`rummy.solver._best_play` finds it.

    ``ws``: the work array of :func:`scratch` (reused from call to call: its contents
    after the constants do not matter on entry), with the input at ``S_IN``: its length,
    then ``inp`` = the cards of the table, of the hand and of ``keep``, then ``I_FIELDS``
    fields: ``[table cards, hand cards, keep cards, cost vector, wildcard cost, by_hand,
    low, limit, abort, bound]``: the costs of the objective (see search.py), ``by_hand``: §11
    ``joker_release="hand"``; ``low``: §11 ``ace_high=false``; ``limit``/``abort``: the
    node limit and the abort budget (-1: none); ``bound``: only a play leaving less than
    it is found (-1: none; see :func:`rummy.solver._best_play`). ``K``: the constants
    (``K_*`` offsets) at the start of ``ws``.

    Writes the result ``res`` at ``ws[S_RES:]`` and returns its length (or
    ``R_ABORTED``, ``R_OVERFLOW``): ``[status, exceeded, nodes, melds, parked, jokers
    added, real cards added, points added, the added real cards ascending, each meld's
    length, the melds' cards]``, the status ``ST_*``, the melds those of the new table
    (:func:`_final_table`); only ``ST_PLAY`` has the fields after ``nodes``
    (``ST_KEEP``: ``res[1]`` is the card). The result is read from Python through a
    memoryview: plain ints, and no array to box.
    """
    K = ws[:S_BUF]
    buf = ws[S_BUF:S_FR].reshape(56 * MAX_MOVES, 8)
    fr = ws[S_FR:S_MEM].reshape(FR_ROWS, 128)
    mem = ws[S_MEM:S_RMEM].reshape(MEM0, 2)
    rmem = ws[S_RMEM:S_ARENA].reshape(RMEM0, 2)
    arena = ws[S_ARENA:S_W]
    W = ws[S_W:S_SIZE]
    res = W[W_RES:W_RES + W_RES_SIZE]
    res[0] = 0
    res[1] = 0
    res[2] = 0
    n_in = ws[S_IN]
    k_mem = n_in * 0  # the first memo's kind for _clear, as a run-time value
    if n_in < 0 or n_in > I_CAP:
        res[0] = ST_INPUT
        return 3
    inp = ws[S_IN + 1:S_IN + 1 + n_in]
    f = n_in - I_FIELDS
    if f < 0:
        res[0] = ST_INPUT
        return 3
    cost = K[K_COSTS + 52 * inp[f + 3]:K_COSTS + 52 * inp[f + 3] + 52]
    wcost = inp[f + 4]
    by_hand = inp[f + 5]
    low = inp[f + 6]
    limit = inp[f + 7]
    abort = inp[f + 8]
    bound = inp[f + 9]
    partners = K[K_PARTNERS:K_TEMPLATE].reshape(52, K_WIDTH)
    template = K[K_TEMPLATE:]
    nt = inp[f]
    nh = inp[f + 1]
    nk = inp[f + 2]
    if nt < 0 or nh < 0 or nk < 0 or nt + nh + nk != f:
        res[0] = ST_INPUT
        return 3
    vec = W[W_VEC:W_VEC + 53 * N_VEC]
    vec[:318] = 0  # the counts and `releasing`; the other vectors are written before read
    real_table = vec[0:52]
    before = vec[53:105]
    hand = vec[106:159]
    keep = vec[159:212]
    copies = vec[212:264]
    releasing = vec[265:317]
    cs = vec[318:370]
    los = vec[371:423]
    his = vec[424:476]
    digit = vec[477:529]
    best_mand = vec[530:582]
    best_kept = vec[583:635]
    mand = vec[636:688]
    opt = vec[689:741]
    dead = vec[742:794]
    freed = vec[795:847]
    opt_w = vec[848:900]
    new_real = vec[901:953]
    new_real[:] = 0
    cnt = W[W_CNT:W_CNT + 12]
    keys = W[W_KEYS:W_KEYS + W_WIDTH]
    jokers = 0
    for q in range(nt):
        c = inp[q]
        if 0 <= c < 52:
            real_table[c] += 1
            copies[c] += 1
        elif 53 <= c < 105:
            before[c - 53] += 1
            copies[c - 53] += 1
            jokers += 1
        else:
            res[0] = ST_INPUT
            return 3
    for q in range(nt, nt + nh):
        c = inp[q]
        if c < 0 or c > 52:
            res[0] = ST_INPUT
            return 3
        hand[c] += 1
        if c < 52:
            copies[c] += 1
        else:
            jokers += 1
    for q in range(nt + nh, nt + nh + nk):
        c = inp[q]
        if c < 0 or c > 52:
            res[0] = ST_INPUT
            return 3
        keep[c] += 1
    most = 0
    for c in range(52):
        if copies[c] > most:
            most = copies[c]
    if most + jokers > MAX_COUNT:
        res[0] = ST_INPUT
        return 3
    for c in range(53):
        if hand[c] < keep[c]:
            res[0] = ST_KEEP
            res[1] = c
            return 3
        hand[c] -= keep[c]
    hand_jokers = hand[52]
    sum_before = 0
    all_cost = wcost * hand_jokers
    for c in range(52):
        sum_before += before[c]
        all_cost += cost[c] * hand[c]
    if not by_hand:
        releasing[:] = real_table
    # the R5.8 choices (rummy.solver._joker_options): per declared card, how many of its
    # table jokers are freed, lo..hi; enumerated as its list is, the last card fastest
    ncs = 0
    for c in range(52):
        if before[c]:
            cs[ncs] = c
            b = before[c]
            los[ncs] = min(b, releasing[c])
            his[ncs] = min(b, releasing[c] + hand[c])
            digit[ncs] = los[ncs]
            ncs += 1
    phase_a = sum_before > 0 or hand_jokers > 0
    best_left = all_cost if bound < 0 else min(bound, all_cost + 1)
    found = False
    exceeded = 0
    used = 0
    best_out = W[W_BEST:W_BEST + 56 * 6].reshape(56, 6)
    out = W[W_OUT:W_OUT + 56 * 6].reshape(56, 6)
    best_end = 0
    first = True
    done = False
    while not done:
        if first and phase_a:
            fill = 0
            freed[:] = 0
        else:
            fill = 1
            freed[:] = 0
            for k in range(ncs):
                freed[cs[k]] = digit[k]
            # next choice (odometer, the last card fastest)
            k = ncs - 1
            while k >= 0:
                if digit[k] < his[k]:
                    digit[k] += 1
                    break
                digit[k] = los[k]
                k -= 1
            if k < 0:
                done = True
        first = False
        if best_left == 0:
            break  # every hand card is played: nothing can be better
        wm = 0
        for c in range(52):
            wm += freed[c]
        if fill and hand_jokers == 0 and wm == 0 and phase_a:
            continue  # no wildcard: the same search as phase A
        top = 0
        for c in range(52):
            mand[c] = real_table[c] + before[c] - freed[c]
            opt[c] = hand[c]
            forced = freed[c] - releasing[c]
            if forced > 0:
                mand[c] += forced
                opt[c] -= forced
            dead[c] = 0
            if mand[c] > top:
                top = mand[c]
            if opt[c] > top:
                top = opt[c]
        wild = wm + hand_jokers if fill else 0
        if wild > MAX_COUNT:  # never: the input check above bounds the jokers
            res[0] = ST_INPUT
            return 3
        _prune(mand, opt, wild, partners, dead)
        dead_cost = 0
        for c in range(52):
            dead_cost += cost[c] * dead[c]
        if dead_cost >= best_left:
            continue
        # lower bounds: with only w wildcards left, more hand cards are dead
        deads = W[W_DEADS:W_DEADS + wild * 52]
        deads[:] = 0
        for w in range(wild):
            opt_w[:] = opt
            _prune(mand, opt_w, w, partners, deads[w * 52:(w + 1) * 52])
            for c in range(52):
                deads[w * 52 + c] *= cost[c]
        if abort >= 0 and used >= abort:
            res[0] = ST_ABORTED
            return R_ABORTED
        if top > MAX_COUNT or wm > MAX_COUNT or hand_jokers > MAX_COUNT:
            res[0] = ST_INPUT
            return 3
        flat = W[W_FLAT:W_FLAT + template.shape[0]]
        # _tables writes every info row, cap and high-ace count, and the wildcard needs
        # when there are wildcards; the group tables (O_GOK..O_EMPTY) and the caps past
        # the high ace are never written (scratch copied them from the template)
        if not wild:
            flat[O_NEED:O_GOK] = 0
        flat[O_EMPTY:] = template[O_EMPTY:]
        lower = W[W_LOWER:W_LOWER + wild * 4 * 19]
        lower[:] = 0
        suits = _tables(mand, opt, cost, wild, fill, deads, wild, flat, lower, low)
        cnt[:] = 0
        cnt[3] = limit
        cnt[4] = wcost
        cnt[8] = 1 if suits >= 2 else 0
        cnt[10] = abort - used if abort >= 0 else -1
        out[:] = 0
        st = (wm << _WM) | (hand_jokers << _WO)
        v = _run(st, best_left - dead_cost, (flat, lower.reshape(wild, 4, 19), arena), cnt,
                 out, buf, fr, mem, rmem)
        # the first memos emptied while their lines are still in the caches: the next
        # search (of this call or the next one) finds them all zeros
        _clear(mem, fr, k_mem)
        _clear(rmem, fr, k_mem + 1)
        if cnt[11]:
            res[0] = ST_ABORTED
            return R_ABORTED
        if cnt[2]:
            res[0] = ST_OVERFLOW
            return R_OVERFLOW
        used += cnt[0]
        if cnt[1]:
            exceeded = 1
        if v + dead_cost < best_left:
            if cnt[7]:
                res[0] = ST_LOST
                return 3
            best_left = v + dead_cost
            found = True
            best_out[:] = out
            best_mand[:] = mand
            for c in range(52):
                best_kept[c] = before[c] - freed[c]
            best_end = cnt[6]
    res[1] = exceeded
    res[2] = used
    if not found:
        res[0] = ST_NONE
        return 3
    rows = best_out.reshape(-1)
    n = _room(rows, best_mand)
    if n > W_CAP:  # never: the input check bounds the cards
        res[0] = ST_OVERFLOW
        return R_OVERFLOW
    melds = W[W_MELDS:W_MELDS + n]
    lens = W[W_LENS:W_LENS + n]
    bws = W[W_BUILD:W_BUILD + _workspace(n)]
    bws[:] = 0
    count = _build(rows, best_mand, best_kept, n, bws, melds, lens)
    if count < 0:
        res[0] = ST_LOST
        return 3
    total = 0
    for k in range(count):
        total += lens[k]
    table_jokers = 0
    for q in range(total):
        c = melds[q]
        if c < 52:
            new_real[c] += 1
        else:
            table_jokers += 1
    n_added = 0
    for c in range(52):
        if new_real[c] > real_table[c]:
            n_added += new_real[c] - real_table[c]
    parked_n = _parked(best_end)
    rows_cap = 3 * count + 8
    if rows_cap > W_ROWS:  # never: count < W_CAP
        res[0] = ST_OVERFLOW
        return R_OVERFLOW
    M = W[W_M:W_M + rows_cap * W_WIDTH].reshape(rows_cap, W_WIDTH)
    aux = W[W_AUX:W_AUX + 3 * rows_cap]
    n_rows = _final_table(melds, lens, count, parked_n, low, M, aux, keys)
    if n_rows < 0:
        res[0] = ST_LOST
        return 3
    size = 8 + n_added + n_rows + total + parked_n
    if size > W_RES_SIZE:  # never: total < W_CAP
        res[0] = ST_OVERFLOW
        return R_OVERFLOW
    res[0] = ST_PLAY
    res[3] = n_rows
    res[4] = parked_n
    res[5] = table_jokers - sum_before
    res[6] = n_added
    points = 25 * (res[5] + parked_n)
    q = 8
    for c in range(52):
        for _ in range(new_real[c] - real_table[c]):
            res[q] = c
            points += min(c % 13 + 1, 10)
            q += 1
    res[7] = points
    ml = aux[:rows_cap]
    order = aux[2 * rows_cap:3 * rows_cap]
    for x in range(n_rows):
        res[q] = ml[order[x]]
        q += 1
    for x in range(n_rows):
        k = order[x]
        for y in range(ml[k]):
            res[q] = M[k, y]
            q += 1
    return size
