"""The chunk task, and submitting a batch as chunk tasks.

The task is thin (STYLE.md §10): resolve the batch id, chunk index and spec (plain JSON
arguments), call the pure :func:`rummy_worker.chunks.compute_chunk`, record the result with
HSETNX. It never calls ``.get()`` on another task. Running it twice for one chunk stores one
result: idempotent, as ``acks_late`` requires.
"""

from __future__ import annotations

import traceback
from typing import Any

import redis
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded

from rummy_worker import config, metrics
from rummy_worker.batches import BatchSpec, BatchStore
from rummy_worker.celery_app import app, state_client
from rummy_worker.chunks import compute_chunk
from rummy_worker.recording import GameRecorder

TASK_NAME = "rummy_worker.run_chunk"

#: errors worth retrying (the chunk is recomputed: it is deterministic)
TRANSIENT = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


class ChunkTask(Task):
    """Base of the chunk task: notes hard time limits, which kill the pool process before
    the task body can (``on_failure`` runs in the worker's main process then)."""

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any,
                   einfo: Any) -> None:
        """Count a hard time limit as a chunk failure and note it in the batch."""
        if not isinstance(exc, TimeLimitExceeded):
            return  # the task body already counted and noted it
        metrics.CHUNK_FAILURES.inc()
        args = list(args or ())
        batch_id = args[0] if args else kwargs.get("batch_id")
        index = args[1] if len(args) > 1 else kwargs.get("index")
        prefix = args[3] if len(args) > 3 else kwargs.get("prefix", "rummy")
        if batch_id is not None and index is not None:
            BatchStore(state_client(), prefix).record_failure(
                batch_id, index,
                f"hard time limit exceeded ({exc.args[0] if exc.args else '?'} s)")


@app.task(name=TASK_NAME, bind=True, base=ChunkTask, acks_late=True,
          reject_on_worker_lost=True, ignore_result=True, autoretry_for=TRANSIENT,
          retry_backoff=True, retry_backoff_max=60, max_retries=8)
def run_chunk(self: Any, batch_id: str, index: int, spec: dict[str, Any],
              prefix: str = "rummy") -> dict[str, Any]:
    """Play chunk ``index`` of batch ``batch_id`` and store its result once.

    Args:
        batch_id: the batch id (``BatchStore`` key part).
        index: chunk index, ``0 .. spec.chunks-1``.
        spec: ``BatchSpec.to_dict()`` of the batch.
        prefix: key prefix of the batch state.

    Returns:
        ``{"batch", "chunk", "games", "outcome"}`` where outcome is ``"stored"``,
        ``"duplicate"`` (computed, an earlier copy was already stored) or ``"skipped"``
        (already stored before starting).

    Raises:
        Whatever the simulation raises (counted in ``rummy_sim_chunk_failures_total`` and
        noted in the batch's failures); transient Redis errors are retried.
    """
    store = BatchStore(state_client(), prefix)
    if store.has_chunk(batch_id, index):
        metrics.CHUNKS.labels("skipped").inc()
        return {"batch": batch_id, "chunk": index, "games": 0, "outcome": "skipped"}
    batch = BatchSpec.from_dict(spec)
    recorder = (GameRecorder(batch_id, config.event_store_url(), config.event_store_prefix())
                if batch.record_every else None)
    try:
        result = compute_chunk(batch, index, on_game=metrics.observe_game, recorder=recorder,
                               passthrough=(SoftTimeLimitExceeded, TimeLimitExceeded))
        if recorder is not None:
            recorder.flush()
        stored = store.put_chunk(batch_id, index, result)
    except TRANSIENT:
        metrics.CHUNK_FAILURES.inc()
        raise
    except SoftTimeLimitExceeded:
        metrics.CHUNK_FAILURES.inc()
        store.record_failure(batch_id, index, "soft time limit exceeded")
        raise
    except Exception as exc:
        metrics.CHUNK_FAILURES.inc()
        store.record_failure(batch_id, index, f"{type(exc).__name__}: {exc}\n"
                             + traceback.format_exc(limit=5))
        raise
    outcome = "stored" if stored else "duplicate"
    metrics.CHUNKS.labels(outcome).inc()
    return {"batch": batch_id, "chunk": index, "games": result["stop"] - result["start"],
            "outcome": outcome}


def limits(soft_time_limit: float | None = None,
           time_limit: float | None = None) -> tuple[float, float]:
    """``(soft, hard)`` chunk time limits in seconds: the arguments, else the environment.

    Raises:
        ValueError: the soft limit is not below the hard one (the soft limit is what stops
            a chunk cleanly; the hard one only kills a process that ignored it).
    """
    soft = soft_time_limit if soft_time_limit is not None else config.soft_time_limit()
    hard = time_limit if time_limit is not None else config.time_limit()
    if not 0 < soft < hard:
        raise ValueError(f"the soft time limit ({soft} s) must be positive and below the hard "
                         f"time limit ({hard} s)")
    return soft, hard


def send_chunks(batch_id: str, spec: BatchSpec, indices: list[int], *, prefix: str,
                queue: str | None = None, soft_time_limit: float | None = None,
                time_limit: float | None = None) -> None:
    """Send one chunk task per index to ``queue`` (default ``RUMMY_QUEUE``).

    Time limits travel in each task message (Celery's ``timelimit`` header), so the
    submitter decides them: the arguments, else ``RUMMY_TASK_SOFT_TIME_LIMIT`` /
    ``RUMMY_TASK_TIME_LIMIT`` of this process (seconds).
    """
    q = queue or config.queue()
    args_spec = spec.to_dict()
    soft, hard = limits(soft_time_limit, time_limit)
    with app.producer_or_acquire() as producer:
        for i in indices:
            run_chunk.apply_async((batch_id, i, args_spec, prefix), queue=q, producer=producer,
                                  soft_time_limit=soft, time_limit=hard)


def submit(spec: BatchSpec, *, store: BatchStore, queue: str | None = None,
           batch_id: str | None = None, soft_time_limit: float | None = None,
           time_limit: float | None = None) -> str:
    """Record a batch and send all its chunk tasks; return the batch id.

    Raises:
        ValueError: invalid spec or time limits, or an existing batch id.
        kombu errors: broker unreachable (the batch is recorded; ``resume`` sends its
            missing chunks later).
    """
    limits(soft_time_limit, time_limit)  # refuse bad limits before recording the batch
    batch_id = store.create(spec, batch_id)
    send_chunks(batch_id, spec, list(range(spec.chunks)), prefix=store.prefix, queue=queue,
                soft_time_limit=soft_time_limit, time_limit=time_limit)
    return batch_id


def resume(batch_id: str, *, store: BatchStore, queue: str | None = None,
           soft_time_limit: float | None = None, time_limit: float | None = None) -> list[int]:
    """Send the chunk tasks of a batch whose results are missing (after a lost broker, a
    purged queue, or failed chunks once their cause is fixed); chunks still queued are
    harmless duplicates. Returns the indices sent.

    Raises:
        UnknownBatch: no such batch.
    """
    spec = store.spec(batch_id)
    missing = store.missing_chunks(batch_id)
    send_chunks(batch_id, spec, missing, prefix=store.prefix, queue=queue,
                soft_time_limit=soft_time_limit, time_limit=time_limit)
    return missing
