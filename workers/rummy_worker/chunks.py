"""One chunk of a batch, computed purely: no Celery, no Redis (hooks do the I/O).

:func:`compute_chunk` plays games ``start .. stop-1`` of a batch with
:func:`rummy.simulate.play_range`, the one simulation loop (same seeds, same line-up rotation,
same aggregate as ``rummy simulate``), through its hooks: each game is timed (metrics), every
K-th game's events go to a recorder, and A/B batches pair the two variants' results by index
(win rates and lengths, :mod:`rummy_worker.paired`; every game-quality figure,
:mod:`rummy.paired_quality`).
``tests/workers/test_chunks.py`` pins ``compute_chunk(...)["a"] ==
run_games(...).to_dict()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from rummy.paired_quality import PairedFigures, result_figures
from rummy.simulate import Aggregate, GameResult, game_seed, lineup_for, play_game, play_range
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
                 record: bool = False, commit: bool = False) -> GameResult:
    """Play game ``index`` of the batch alone (variant ``"a"`` or ``"b"``).

    Same seed and line-up as in the batch, so the result equals the one the batch counted.
    ``commit``: the recorded log's ``GameStarted`` carries a seed commitment
    (:func:`rummy.simulate.play_game`), so ``rummy verify`` checks it.

    Raises:
        IndexError: ``index`` not in ``0 .. games-1``.
        ValueError: an invalid spec.
    """
    if not 0 <= index < spec.games:
        raise IndexError(f"game {index} out of range 0..{spec.games - 1}")
    return play_game(lineup_for(spec.lineup(variant), index, spec.rotate),
                     game_seed(spec.seed, index), spec.ruleset(variant), record=record,
                     commit=commit)


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
    batch, out of the paired comparison. Exceptions of the ``passthrough``
    types (the runner's own, e.g. Celery's soft time limit) propagate.

    Raises:
        IndexError: no such chunk. ValueError: an invalid spec. Whatever a hook raises.
    """
    start, stop = spec.chunk_range(index)
    n = spec.players
    variants = ("a", "b") if spec.is_ab else ("a",)
    finished: dict[str, dict[int, GameResult]] = {v: {} for v in variants}
    aggs: dict[str, Aggregate] = {}
    for v in variants:
        def hook(i: int, r: GameResult, seconds: float, v: str = v) -> None:
            if on_game is not None:
                on_game(r, seconds)
            if recorder is not None and r.events:
                recorder(i, v, r)
            if spec.is_ab:
                finished[v][i] = replace(r, events=()) if r.events else r

        aggs[v] = play_range(spec.lineup(v), spec.seed, start, stop, spec.ruleset(v),
                             spec.rotate,
                             record=(lambda i: should_record(spec, i)) if recorder else None,
                             on_game=hook, passthrough=passthrough)
    paired = None
    quality = PairedFigures()
    if spec.is_ab:  # games in which both variants finished, paired by index
        paired = Paired.empty(n)
        for i in range(start, stop):
            if i in finished["a"] and i in finished["b"]:
                paired = paired.merge(Paired.of_vector(
                    n, game_vector(finished["a"][i], finished["b"][i], i, spec.rotate)))
                quality = quality.merge(PairedFigures.of_game(
                    result_figures(finished["a"][i]), result_figures(finished["b"][i])))
    out: dict[str, Any] = {"chunk": index, "start": start, "stop": stop,
                           "a": aggs["a"].to_dict()}
    if paired is not None:
        out["b"] = aggs["b"].to_dict()
        out["paired"] = paired.to_dict()
        out["paired_quality"] = quality.to_dict()
    return out
