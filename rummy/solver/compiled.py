"""The search of :mod:`rummy.solver.search`, compiled with numba (an optional wheel).

Same dynamic programme, same state encoding, same move order, same node counting: for every
input the compiled backend returns exactly the plays and ``optimal`` flags of the pure
backend (:class:`~rummy.solver.search.Search` driven by :func:`rummy.solver._best_play`),
which stays the reference (the differential tests in ``tests/solver`` compare the two on
thousands of positions). Only the speed differs: the compiled search expands a state in
about 0.2 microseconds instead of about 5.

:func:`solve_position` enters machine code once per position: the kernel
``_kernels._position`` runs the loop of :func:`rummy.solver._best_play` over the R5.8
choices (counts, dead-card pruning, one search per choice, the trace of the best, its
melds), so a small position costs tens of microseconds rather than the hundred that the
Python around a compiled search cost. What is not the search loop or that phase loop
exists once and is compiled from its pure source: the tables of a search
(:func:`rummy.solver.search.search_tables`), the group feasibility test
(:func:`rummy.solver.search.groups_short`) and the builder of the new table
(:func:`rummy.solver.build.build_melds`). The search loop and the phase loop are written
twice (the memo and the explicit stack of the kernels differ from the pure recursion), and
the tests hold the two to the same plays.

numba (https://numba.pydata.org) is a JIT compiler for a numeric subset of Python that
installs from PyPI as a binary wheel; it is the ``fast`` extra of this project. The kernels
live in :mod:`rummy.solver._kernels`, imported on first use only (so the pure core and the
command line do not load numba until a compiled search runs). Without numba, or with it
unusable (``NUMBA_DISABLE_JIT``), :func:`usable` is False and
:func:`rummy.solver.best_play` runs the pure search. numba caches the machine code on disk
(beside the module, or in ``NUMBA_CACHE_DIR``), so only the first process after an install
compiles (about 8 s on this project's machines); where no cache location is writable, every
process compiles in memory.

Why numba rather than a C extension of our own: the project allows a compiled helper only if
it installs from the registry as a wheel; numba is that wheel, and the code it compiles is
:mod:`rummy.solver._kernels`, which reads like the pure search it mirrors.
"""

from __future__ import annotations

import importlib.util
import threading
from struct import Struct
from struct import error as StructError
from typing import Any

from rummy.solver.search import Aborted

#: numba (and numpy) are installed; whether they can be used here is :func:`usable`
AVAILABLE = (importlib.util.find_spec("numba") is not None
             and importlib.util.find_spec("numpy") is not None)

#: the kernels module once imported (None: numba unusable here); filled on first use
_LOADED: dict[str, Any] = {}

#: each thread's work array for the kernel (``_kernels.scratch``: the constants and
#: memory reused from call to call, never read before a call writes it, but the memos,
#: which each search finds empty, so no answer depends on it)
_SCRATCH = threading.local()


def kernels() -> Any:
    """:mod:`rummy.solver._kernels`, imported on first use (numba compiles the kernels
    or loads them from its cache then), or None when numba cannot be used here."""
    if "k" not in _LOADED:
        mod: Any = None
        if AVAILABLE:
            try:
                from rummy.solver import _kernels as mod
            except ImportError:
                mod = None
        _LOADED["k"] = mod
    return _LOADED["k"]


def usable() -> bool:
    """True when the compiled backend can run in this process (imports numba on the
    first call)."""
    return kernels() is not None


class Overflow(Exception):
    """A step had more moves than the compiled move buffer holds (never seen with real
    game inputs); the caller falls back to the pure search."""


def _constants() -> Any:
    """The kernels' read-only array (``_kernels.K_*`` offsets), made once: the card costs
    of each objective and orientation, the partner masks of the dead-card pruning and the
    search's flat table template (and, beside it, the wildcard cost by objective)."""
    if "c" not in _LOADED:
        from rummy import solver  # the package imports this module: import it late
        k = kernels()
        masks = solver._PARTNER_MASKS
        const: list[int] = []
        for objective in ("points", "cards"):
            cost = solver._COSTS[objective][0]
            const += cost
            const += [cost[solver._MIRROR[c]] for c in range(52)]
        for row in masks:
            const += list(row) + [0] * (k.K_WIDTH - len(row))
        const += list(k._FLAT_TEMPLATE)
        _LOADED["w"] = {objective: solver._COSTS[objective][1]
                        for objective in ("points", "cards")}
        _LOADED["c"] = k.np.array(const, dtype=k.np.int64)
    return _LOADED["c"]


#: index of the cost vectors in the constants, by objective
_COST_ROW = {"points": 0, "cards": 2}


def _entry_point(dispatcher: Any) -> Any:
    """The machine code's Python entry of a numba function compiled for one signature,
    or the function itself. The kernel is only ever called with the work array, so the
    dispatcher's typing of it on every call (a few microseconds on a first call after
    other code ran) is skipped; the entry checks the type itself."""
    try:
        overloads = list(dispatcher.overloads.values())
        return overloads[0].entry_point if len(overloads) == 1 else dispatcher
    except (AttributeError, TypeError):  # another numba's internals
        return dispatcher


def solve_position(cards: list[int], counts: tuple[int, int, int], objective: str,
                   mirror: bool, by_hand: bool, ace_high: bool, node_limit: int | None,
                   abort: int | None, bound: int | None = None) -> list[int]:
    """The compiled :func:`rummy.solver._best_play`: one call into machine code for the
    whole position (counts, R5.8 choices, dead-card pruning, searches, trace, melds).

    Args:
        cards: the table cards, then the hand, then the keep cards (card indices, mirrored
            already when ``mirror``).
        counts: how many of ``cards`` are table cards, hand cards and keep cards.
        objective: ``"points"`` or ``"cards"``; ``mirror``: the costs of the mirror image.
        by_hand, ace_high: the §11 variants ``joker_release="hand"`` and ``ace_high``.
        node_limit, abort, bound: as :func:`rummy.solver._best_play` (``None``: none).

    Returns:
        ``res`` of ``_kernels._position``: ``[status, exceeded, nodes, melds, parked
        wildcards, jokers added before parking, real cards added, R1.5 points added, the
        added real cards ascending, each meld's length, the melds' cards]`` (the melds of
        the whole new table, wildcards parked, each in display order, in ascending order)
        (status ``ST_*`` of :mod:`rummy.solver._kernels`; only ``ST_PLAY`` has the fields
        after ``nodes``).

    Raises:
        Overflow: a step had more than ``_kernels.MAX_MOVES`` moves.
        Aborted: more states than ``abort``.
    """
    if "w" not in _LOADED:
        _constants()
    wcost = _LOADED["w"]
    return run(cards, (*counts, _COST_ROW[objective] + (1 if mirror else 0),
                       wcost[objective], 1 if by_hand else 0, 0 if ace_high else 1,
                       -1 if node_limit is None else min(node_limit, 1 << 62),
                       -1 if abort is None else min(abort, 1 << 62),
                       -1 if bound is None else min(bound, 1 << 62)))


def _first_call(ws: Any) -> int:
    """The kernel's first call in this process: numba compiles it, or loads it from its
    cache; later calls go straight to the machine code's entry."""
    k = _LOADED["k"]
    size: int = k._position(ws)
    _LOADED["e"] = _entry_point(k._position)
    return size


#: a ``struct.Struct`` packing a length and that many int64, by length
_PACKERS: dict[int, Any] = {}


def work() -> tuple[Any, memoryview, tuple[int, int, int]]:
    """This thread's work array for ``_kernels._position``, a memoryview of it and
    ``(byte offset of the input, index of the result, most input integers)`` (made on
    the thread's first call; the constants once a process). The caller checked
    :func:`usable`."""
    try:
        got: tuple[Any, memoryview, tuple[int, int, int]] = _SCRATCH.ws
    except AttributeError:
        k = _LOADED["k"]
        ws = k.scratch(_constants())
        got = _SCRATCH.ws = ws, memoryview(ws), (k.S_IN * 8, k.S_RES, k.I_CAP)
    return got


def packer(n: int) -> Any:
    """``pack_into`` of a ``struct.Struct`` of ``n + 1`` int64: the input's length and
    the input, written into the work array (read back by the kernel; a memoryview
    reads its result: plain ints, one argument that numba's entry takes as its own
    array, nothing allocated)."""
    pack = _PACKERS.get(n)
    if pack is None:
        pack = _PACKERS[n] = Struct(f"={n + 1}q").pack_into
    return pack


def run(cards: list[int], fields: tuple[int, ...]) -> list[int]:
    """``_kernels._position`` on ``cards`` and ``fields`` (the input, see
    :func:`solve_position`; ``fields``: ``_kernels.I_FIELDS`` integers) in this thread's
    work array: its result as a list (:func:`rummy.solver._solve_flat` has this inline).

    Raises:
        Overflow, Aborted: as :func:`solve_position`.
    """
    ws, mv, at = work()
    n = len(cards) + len(fields)
    if n > at[2]:  # more cards than any legal input: _kernels.ST_INPUT
        return [6, 0, 0]
    try:
        packer(n)(mv, at[0], n, *cards, *fields)
    except StructError:  # an integer beyond 64 bits: _kernels.ST_INPUT
        return [6, 0, 0]
    size = _LOADED.get("e", _first_call)(ws)
    if size < 0:  # _kernels.R_ABORTED (-2) or R_OVERFLOW (-3)
        if size == -2:
            raise Aborted
        raise Overflow
    out: list[int] = mv[at[1]:at[1] + size].tolist()
    return out


__all__ = ["AVAILABLE", "Overflow", "kernels", "packer", "run", "solve_position", "usable",
           "work"]
