"""Prometheus metrics of the simulation workers (prometheus-client multiprocess mode).

Celery's prefork pool runs tasks in child processes, so every process writes its samples to
files in ``PROMETHEUS_MULTIPROC_DIR`` and one HTTP exposition in the worker's main process
(:func:`start_exposition`) reads them all through a ``MultiProcessCollector``. The variable
must be set before ``prometheus_client`` is first imported (``rummy worker`` does it, creating
a temporary directory if needed); without it the metrics are plain per-process metrics.

Metrics (Prometheus naming: ``rummy_`` prefix, base units, ``_total`` on counters; no
labels with unbounded values):
    rummy_sim_games_total: games played by chunk tasks (both variants of an A/B batch; a
        redelivered chunk's games are counted again: this counts work, the report counts
        games once).
    rummy_sim_turns_total: turns of those games.
    rummy_sim_game_seconds: wall-clock seconds per game (histogram).
    rummy_solver_seconds: seconds per ``best_play`` call of the solver-based bots
        (histogram; see :func:`install_solver_timer`).
    rummy_sim_chunks_total{outcome}: chunk tasks by outcome: ``stored`` (first result),
        ``duplicate`` (computed again, not counted again), ``skipped`` (already stored).
    rummy_sim_chunk_failures_total: chunk tasks that raised (including time limits).
"""

from __future__ import annotations

import functools
import importlib
import os
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

from rummy.simulate import GameResult

GAMES = Counter("rummy_sim_games", "Games played by simulation chunk tasks.")
TURNS = Counter("rummy_sim_turns", "Turns of the games played by simulation chunk tasks.")
GAME_SECONDS = Histogram(
    "rummy_sim_game_seconds", "Wall-clock seconds to play one simulated game.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
SOLVER_SECONDS = Histogram(
    "rummy_solver_seconds", "Seconds per best_play call of a solver-based bot.",
    buckets=(1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 0.01, 0.05, 0.1, 0.5, 1, 5))
CHUNKS = Counter("rummy_sim_chunks", "Simulation chunk tasks by outcome.", ["outcome"])
CHUNK_FAILURES = Counter("rummy_sim_chunk_failures",
                         "Simulation chunk tasks that raised (errors and time limits).")

#: modules whose ``best_play`` attribute is timed; bots that ``from rummy.solver import
#: best_play`` hold their own reference, so their modules are patched too.
SOLVER_MODULES = ("rummy.solver", "rummy.bots.greedy", "rummy.bots.strategic")


def observe_game(result: GameResult, seconds: float) -> None:
    """Count one finished game (a :data:`rummy_worker.chunks.GameHook`)."""
    GAMES.inc()
    TURNS.inc(sum(result.turns))
    GAME_SECONDS.observe(seconds)


def _timed(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            SOLVER_SECONDS.observe(time.perf_counter() - t0)

    wrapper.__rummy_timed__ = True  # type: ignore[attr-defined]
    return wrapper


def install_solver_timer(modules: tuple[str, ...] = SOLVER_MODULES) -> list[str]:
    """Wrap ``best_play`` in each importable module of ``modules`` to observe
    ``rummy_solver_seconds``, without touching the core's source (idempotent).

    Only worker processes call this: the pure core stays unaware of metrics. A module that
    is missing or has no ``best_play`` is skipped (solver-based bots not built yet).

    Returns:
        The names of the modules patched by this call.
    """
    patched = []
    for name in modules:
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        fn = getattr(mod, "best_play", None)
        if callable(fn) and not getattr(fn, "__rummy_timed__", False):
            mod.best_play = _timed(fn)  # type: ignore[attr-defined]
            patched.append(name)
    return patched


def multiprocess_dir() -> str | None:
    """``PROMETHEUS_MULTIPROC_DIR`` if set (multiprocess mode), else ``None``."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def exposition_registry() -> CollectorRegistry:
    """A registry that collects every process's samples (multiprocess mode).

    Raises:
        RuntimeError: ``PROMETHEUS_MULTIPROC_DIR`` is not set.
    """
    from prometheus_client import multiprocess

    if multiprocess_dir() is None:
        raise RuntimeError("PROMETHEUS_MULTIPROC_DIR is not set")
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    return registry


def start_exposition(port: int, addr: str = "0.0.0.0") -> None:
    """Serve ``/metrics`` of all worker processes on ``addr:port`` from a daemon thread.

    Raises:
        RuntimeError: not in multiprocess mode. OSError: the port is taken.
    """
    start_http_server(port, addr=addr, registry=exposition_registry())


def mark_dead(pid: int) -> None:
    """Tell the multiprocess collector a child process exited (its live gauges go away)."""
    if multiprocess_dir() is not None:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
