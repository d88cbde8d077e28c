"""Warm the server's solver bots before the server reports SERVING.

The solver-based bots (``greedy``, ``strategic``, ``human``, ``search``) run the compiled
search of :mod:`rummy.solver.compiled`, whose numba kernels are compiled on their first call
in a process (or loaded from numba's on-disk cache: about 1 s). Compiling takes 35 s on an
idle machine with an empty cache (``NUMBA_CACHE_DIR``) and over a minute under load, and it
holds the interpreter lock most of that time. Without a warm-up that happened inside the
first call of the first game with a solver bot (the human's command waits for the bot's
move that follows it) and slowed every other call meanwhile, while health already said
SERVING. :meth:`rummy_grpc.server.RummyServer.start` calls :func:`warm_bots` before it
reports SERVING, so the first bot move of a new server costs what any later one does.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from rummy.bots import make_bot
from rummy.commands import CreateGame
from rummy.decide import step
from rummy.rules import RuleSet
from rummy.solver import compiled
from rummy.state import GAME_OVER
from rummy.views import view
from rummy_grpc.bot_driver import INLINE_BOTS

log = logging.getLogger("rummy_grpc")

WARMUP_MOVES = 60
"""Most moves of the warm-up game of one strategy (a two-seat game of that bot against
itself, target 40): the first meld decision compiles the kernels; the moves after it take
milliseconds each, and cover the paths a longer game takes."""

_warmed: set[str] = set()
_lock = threading.Lock()


def warm_bots(strategies: Iterable[str], *, moves: int = WARMUP_MOVES) -> float:
    """Play a short game of each strategy in ``strategies`` that thinks (every one but
    ``rummy_grpc.bot_driver.INLINE_BOTS``) against itself through the pure core, so that
    the compiled kernels its moves run are compiled (or loaded from numba's cache) in this
    process. Each strategy is warmed once per process; blocking (call it in a thread).

    Args:
        strategies: bot names of ``rummy.bots.BOTS``.
        moves: most moves of each warm-up game.

    Returns:
        The seconds it took (0.0 when nothing was left to warm).

    Without numba (or with ``NUMBA_DISABLE_JIT``) the bots run the pure search, which has
    nothing to compile: nothing is played then.

    Raises:
        Nothing from a bot: a warm-up move that fails is logged and the strategy counted as
        warm (a bot that fails in a game plays the default move there too).
    """
    todo = sorted(set(strategies) - INLINE_BOTS)
    t0 = time.perf_counter()
    if todo and not compiled.usable():  # the pure search: nothing to compile
        return 0.0
    with _lock:
        todo = [s for s in todo if s not in _warmed]
        for strategy in todo:
            try:
                _play(strategy, moves)
            except Exception:  # noqa: BLE001 - a bot bug must not stop the server starting
                log.exception("warming the %s bot failed; its first move in a game may be "
                              "slow", strategy)
            _warmed.add(strategy)
    took = time.perf_counter() - t0 if todo else 0.0
    if todo:
        log.info("warmed the %s bots in %.1f s", ", ".join(todo), took)
    return took


def _play(strategy: str, moves: int) -> None:
    state, _ = step(None, CreateGame(2, 7, RuleSet.from_dict({"target_score": "40"}),
                                     ("a", "b"), 0))
    seats = [make_bot(strategy, 1), make_bot(strategy, 2)]
    for _ in range(moves):
        if state.phase == GAME_OVER:
            break
        state, _ = step(state, seats[state.turn].act(view(state, state.turn)))


__all__ = ["WARMUP_MOVES", "warm_bots"]
