"""One chunk of a batch, computed purely: no Celery, no Redis (hooks do the I/O).

:func:`compute_chunk` plays games ``start .. stop-1`` of a batch exactly as
:func:`rummy.simulate.run_games` does (same seeds, same line-up rotation, same aggregate), but
game by game so that it can time each game (metrics) and hand every K-th game's events to a
recorder. ``tests/workers/test_chunks.py`` pins ``compute_chunk(...)["a"] ==
run_games(...).to_dict()``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rummy.simulate import Aggregate, GameResult, game_seed, lineup_for, play_game, play_or_fail
from rummy_worker.batches import BatchSpec
from rummy_worker.paired import Paired, game_vector

#: called after each game with (result, wall-clock seconds of the game)
GameHook = Callable[[GameResult, float], None]
#: called for each recorded game with (game index, variant "a"/"b", result with events)
Recorder = Callable[[int, str, GameResult], None]


def should_record(spec: BatchSpec, index: int) -> bool:
    """True when game ``index`` is sampled for the event store (``index % K == 0``)."""
    return spec.record_every > 0 and index % spec.record_every == 0


def play_indexed(spec: BatchSpec, index: int, variant: str = "a", *,
                 record: bool = False) -> GameResult:
    """Play game ``index`` of the batch alone (variant ``"a"`` or ``"b"``).

    Same seed and line-up as in the batch, so the result equals the one the batch counted.

    Raises:
        IndexError: ``index`` not in ``0 .. games-1``.
        ValueError: an invalid spec.
    """
    if not 0 <= index < spec.games:
        raise IndexError(f"game {index} out of range 0..{spec.games - 1}")
    return play_game(lineup_for(spec.lineup(variant), index, spec.rotate),
                     game_seed(spec.seed, index), spec.ruleset(variant), record=record)


def compute_chunk(spec: BatchSpec, index: int, *, on_game: GameHook | None = None,
                  recorder: Recorder | None = None,
                  passthrough: tuple[type[BaseException], ...] = ()) -> dict[str, Any]:
    """Play chunk ``index`` of a batch and return its JSON-ready result.

    Returns:
        ``{"chunk": index, "start": s, "stop": e, "a": Aggregate.to_dict()}`` and, for an A/B
        batch, ``"b"`` (variant B's aggregate) and ``"paired"`` (``Paired.to_dict()``).
        Deterministic: the same spec and index always give the same dict.

    A game in which a bot raises is not an error of the chunk: it is counted in the
    aggregate's ``failed`` (index and error) and left out of every figure, and, in an A/B
    batch, out of the paired comparison (issue 10). Exceptions of the ``passthrough``
    types (the runner's own, e.g. Celery's soft time limit) propagate.

    Raises:
        IndexError: no such chunk. ValueError: an invalid spec. Whatever a hook raises.
    """
    start, stop = spec.chunk_range(index)
    n = spec.players
    variants = ("a", "b") if spec.is_ab else ("a",)
    rules = {v: spec.ruleset(v) for v in variants}
    lineups = {v: spec.lineup(v) for v in variants}
    aggs = {v: Aggregate.empty(n) for v in variants}
    paired = Paired.empty(n) if spec.is_ab else None
    for i in range(start, stop):
        seed = game_seed(spec.seed, i)
        record = recorder is not None and should_record(spec, i)
        results: dict[str, GameResult] = {}
        for v in variants:
            t0 = time.perf_counter()
            r = play_or_fail(lineup_for(lineups[v], i, spec.rotate), seed, rules[v], i,
                             record=record, passthrough=passthrough)
            if isinstance(r, Aggregate):  # a bot failed: a failed game, not a lost chunk
                aggs[v] = aggs[v].merge(r)
                continue
            if on_game is not None:
                on_game(r, time.perf_counter() - t0)
            if record and recorder is not None:
                recorder(i, v, r)
            aggs[v] = aggs[v].merge(Aggregate.of_game(r))
            results[v] = r
        if paired is not None and len(results) == 2:  # both variants finished
            paired = paired.merge(Paired.of_vector(
                n, game_vector(results["a"], results["b"], i, spec.rotate)))
    out: dict[str, Any] = {"chunk": index, "start": start, "stop": stop,
                           "a": aggs["a"].to_dict()}
    if paired is not None:
        out["b"] = aggs["b"].to_dict()
        out["paired"] = paired.to_dict()
    return out
