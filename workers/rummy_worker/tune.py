"""``rummy batch tune``: rule tuning on the Celery workers.

It is ``rummy tune`` (:mod:`rummy_cli.tune`) with each evaluation block
played as one batch on the workers (the block's seed, the candidate's rules, the line-up):
the same options give the same document as the local command, plus the batch ids.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable
from typing import Any

from rummy.simulate import Aggregate


class TuneFailure(RuntimeError):
    """A block's batch could not be sent, failed, or timed out (message for the user)."""


class WorkerEvaluator:
    """Evaluation blocks of ``rummy tune`` as batches on the Celery workers
    (:class:`rummy_cli.tune.Evaluator`); ``batches`` lists their ids in order."""

    def __init__(self, store: Any, bots: tuple[str, ...], chunk_size: int, soft: float,
                 hard: float, timeout: float | None = None, interval: float = 0.2) -> None:
        self.store = store
        self.bots = bots
        self.chunk_size = chunk_size
        self.soft, self.hard = soft, hard
        self.timeout = timeout
        self.interval = interval
        self.batches: list[str] = []

    def __call__(self, rules: dict[str, Any], seed: int, games: int,
                 advance: Callable[[int], None]) -> Aggregate:
        """Send the block as one batch, follow it, return its merged aggregate.

        Raises:
            TuneFailure: the broker refused the chunks, a chunk was given up after its
                failed attempts, or ``timeout`` seconds passed.
        """
        from rummy_worker import config
        from rummy_worker.batches import BatchSpec
        from rummy_worker.cli import _create_and_send

        spec = BatchSpec(games=games, bots=self.bots, seed=seed, rules=rules,
                         chunk_size=self.chunk_size).validate()
        label = ", ".join(f"{k}={v}" for k, v in rules.items()) or "default rules"
        batch_id, failure = _create_and_send(self.store, spec, self.soft, self.hard, label)
        if failure:
            raise TuneFailure(failure)
        self.batches.append(batch_id)
        most = config.max_failures()
        shown = 0
        t0 = swept = time.monotonic()
        while True:
            if time.monotonic() - swept >= config.sweep_interval():
                swept = time.monotonic()
                with contextlib.suppress(Exception):  # the waiter also heals lost chunks
                    from rummy_worker.tasks import heal
                    heal(self.store)
            st = self.store.status(batch_id, most)
            done = min(games, st.done * spec.chunk_size)
            if done > shown:
                advance(done - shown)
                shown = done
            if st.complete:
                break
            if st.failed:
                raise TuneFailure(f"batch {batch_id} ({label}): {len(st.given_up)} chunk(s) "
                                  f"failed {most} times and were given up; see `rummy "
                                  f"batch status {batch_id}`")
            if self.timeout is not None and time.monotonic() - t0 > self.timeout:
                raise TuneFailure(f"batch {batch_id} ({label}): not complete after "
                                  f"{self.timeout:g} s (it goes on; `rummy batch status "
                                  f"{batch_id}`)")
            time.sleep(self.interval)
        if games > shown:
            advance(games - shown)
        _, merged = self.store.merged(batch_id)
        agg: Aggregate = merged.a
        return agg


def cmd_tune(args: argparse.Namespace) -> int:
    """``rummy batch tune``: ``rummy tune`` with every block a batch on the workers.

    Exit codes: 0 done; 1 a batch failed or timed out (the batches stay); 2 bad options.
    """
    from rummy_cli.outputs import output_problem
    from rummy_cli.tune import optuna_missing, run_with_progress, tuner_from_args, write_outputs
    from rummy_worker.cli import _die, _store, _usage
    from rummy_worker.tasks import limits

    try:
        tuner = tuner_from_args(args)
    except SystemExit as e:  # the message is printed already
        return int(e.code) if isinstance(e.code, int) else 2
    if optuna_missing():
        return 1
    problem = output_problem(args.json, args.html)
    if problem:
        return _usage(problem)
    if args.chunk_size < 1:
        return _usage("--chunk-size must be at least 1")
    try:
        soft, hard = limits(args.soft_time_limit, args.time_limit)
    except ValueError as e:
        return _usage(str(e))
    evaluate = WorkerEvaluator(_store(), tuner.bots, args.chunk_size, soft, hard,
                               args.timeout)
    try:
        doc = run_with_progress(tuner, evaluate, args.quiet)
    except TuneFailure as e:
        return _die(str(e))
    doc["batches"] = evaluate.batches
    return write_outputs(doc, args)


def add_tune_parser(bsub: Any, connection_options: Callable[[Any], None],
                    limit_options: Callable[[Any], None], guarded: Callable[[Any], Any]
                    ) -> None:
    """Register ``rummy batch tune``."""
    from rummy_cli.tune import EPILOG, add_tune_options

    p = bsub.add_parser(
        "tune", help="`rummy tune` on the workers: search rule variants for an objective",
        description="Search rule variants for settings whose balance report meets an\n"
        "objective (Optuna, paired seeds, the best re-evaluated with more games), every\n"
        "evaluation block a batch on the Celery workers; one progress display. The same\n"
        "options give the same JSON as `rummy tune` (local processes), plus the batch ids.",
        epilog=EPILOG.replace("rummy tune --", "rummy batch tune --"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_tune_options(p)
    p.add_argument("--chunk-size", type=int, default=50,
                   help="games per chunk task (default 50)")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="give up when one block takes longer (exit 1; its batch goes on)")
    limit_options(p)
    connection_options(p)
    p.set_defaults(func=guarded(cmd_tune))


__all__ = ["TuneFailure", "WorkerEvaluator", "add_tune_parser", "cmd_tune"]
