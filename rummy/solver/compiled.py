"""The search of :mod:`rummy.solver.search`, compiled with numba (an optional wheel).

Same dynamic programme, same state encoding, same move order, same node counting: for every
input the compiled search returns exactly the values, traces and ``optimal`` flags of the
pure :class:`~rummy.solver.search.Search`, which stays the reference (the differential tests
in ``tests/solver`` compare the two on thousands of positions). Only the speed differs: the
compiled search expands a state in about 0.3 microseconds instead of about 5.

What is not the search loop exists once and is compiled from its pure source: the tables
of a search (:func:`rummy.solver.search.search_tables`), the group feasibility test
(:func:`rummy.solver.search.groups_short`) and the builder of the new table
(:func:`rummy.solver.build.build_melds`). Only the search loop itself is written twice
(the memo and the explicit stack of the kernels differ from the pure recursion), and the
tests hold the two to the same plays.

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
from collections.abc import Sequence
from typing import Any

from rummy.solver.build import split_melds, workspace_size
from rummy.solver.search import INF, LOWER_POS, MAX_COUNT, Aborted, parked

#: numba (and numpy) are installed; whether they can be used here is :func:`usable`
AVAILABLE = (importlib.util.find_spec("numba") is not None
             and importlib.util.find_spec("numpy") is not None)

#: the kernels module once imported (None: numba unusable here); filled on first use
_LOADED: dict[str, Any] = {}


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


class CompiledSearch:
    """Drop-in for :class:`~rummy.solver.search.Search` backed by the compiled functions.

    Same constructor arguments; exposes ``mand``, ``nodes``, ``exceeded``,
    ``solve_root(st, beta)``, ``trace(st)`` and ``parked(st)`` as the pure search does
    (that is all :func:`rummy.solver.best_play` needs). ``solve_root`` solves and, when the
    value is below ``beta``, traces at once, so the memo never crosses into Python.

    Raises:
        ValueError: as :class:`Search` (more than ``MAX_COUNT`` copies of a card).
        Overflow: a step had more than ``_kernels.MAX_MOVES`` moves.
        Aborted: more states than ``abort`` (counted as in :class:`Search`).
    """

    def __init__(self, mand: Sequence[int], opt: Sequence[int], cost: Sequence[int],
                 wcost: int, wild: int, node_limit: int | None, fill: bool = True,
                 dead_costs: Sequence[Sequence[int]] = (), abort: int | None = None) -> None:
        k = kernels()
        np = k.np
        self._k = k
        if max(mand) > MAX_COUNT or max(opt) > MAX_COUNT:
            raise ValueError(f"more than {MAX_COUNT} copies of one card in a position")
        self.mand = tuple(mand)
        # the tables of Search.__init__, built in one compiled call (same values: the tests
        # hold the two backends to the same plays)
        i64 = np.int64
        n_dead = len(dead_costs)
        dead = (np.array(dead_costs, dtype=i64).reshape(-1) if n_dead
                else np.zeros(0, dtype=i64))
        self._mand = np.array(mand, dtype=i64)
        flat = k._FLAT_TEMPLATE.copy()
        lower = np.zeros(n_dead * 4 * LOWER_POS, dtype=i64)
        # the tables of Search.__init__, by the same builder, compiled (one call)
        suits = k._tables(self._mand, np.array(opt, dtype=i64), np.array(cost, dtype=i64),
                          wild, 1 if fill else 0, dead, n_dead, flat, lower)
        wants_relaxed = suits >= 2  # as Search.wants_relaxed
        self._params = (flat, lower.reshape(n_dead, 4, LOWER_POS))
        limit = -1 if node_limit is None else min(node_limit, 1 << 62)
        self._cnt = np.array([0, 0, 0, limit, wcost,
                              0, 0, 0, 1 if wants_relaxed else 0, 0,
                              -1 if abort is None else min(abort, 1 << 62), 0],
                             dtype=np.int64)
        self._out = np.zeros((56, 6), dtype=np.int64)
        self._solved: tuple[int, int] | None = None

    @property
    def nodes(self) -> int:
        """States expanded so far (as :attr:`Search.nodes`)."""
        return int(self._cnt[0])

    @property
    def exceeded(self) -> bool:
        """True once ``node_limit`` was reached (as :attr:`Search.exceeded`)."""
        return bool(self._cnt[1])

    def solve_root(self, st: int, beta: int = INF) -> int:
        """As :meth:`Search.solve_root`. Runs once. Raises :class:`Overflow`."""
        if self._solved is not None:
            raise ValueError("CompiledSearch.solve_root runs once")
        v = int(self._k._run(st, beta, self._params, self._cnt, self._out))
        if self._cnt[11]:
            raise Aborted
        if self._cnt[2]:
            raise Overflow
        self._solved = (st, v if v < beta else INF)
        return v

    def trace(self, st: int) -> tuple[list[tuple[int, tuple[int, ...]]], int]:
        """As :meth:`Search.trace` of the state last solved (which must have had a value
        below its bound). Raises RuntimeError otherwise."""
        if self._solved is None or self._solved != (st, self._solved[1]) \
                or self._solved[1] >= INF or self._cnt[7]:
            raise RuntimeError("trace of an infeasible position")
        rows = self._out.tolist()
        return [(i, tuple(rows[i])) for i in range(56)], int(self._cnt[6])

    def parked(self, st: int) -> int:
        """As :meth:`Search.parked`."""
        return parked(st)

    def melds(self, steps: Sequence[tuple[int, Sequence[int]]],
              kept: Sequence[int]) -> list[list[int]]:
        """As :meth:`Search.melds`, for the last trace (``steps`` is what :meth:`trace`
        returned; the compiled builder reads the same rows from its buffer): the one
        builder :func:`rummy.solver.build.build_melds`, compiled.

        Raises:
            RuntimeError: the trace does not add up (a solver bug).
        """
        k = self._k
        np = k.np
        rows = self._out.reshape(-1)
        n = int(k._room(rows, self._mand))
        out = np.empty(n, np.int64)
        lens = np.empty(n, np.int64)
        count = int(k._build(rows, self._mand, np.array(kept, dtype=np.int64), n,
                             np.zeros(workspace_size(n), np.int64), out, lens))
        return split_melds(out.tolist(), lens.tolist(), count)




__all__ = ["AVAILABLE", "CompiledSearch", "Overflow", "kernels", "usable"]
