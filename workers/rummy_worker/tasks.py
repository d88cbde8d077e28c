"""The chunk task, and submitting a batch as chunk tasks.

The task is thin (STYLE.md §10): resolve the batch id, chunk index and spec (plain JSON
arguments), call the pure :func:`rummy_worker.chunks.compute_chunk`, record the result with
HSETNX. It never calls ``.get()`` on another task. Running it twice for one chunk stores one
result: idempotent, as ``acks_late`` requires.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import traceback
from collections.abc import Iterator
from typing import Any

import redis
from celery import Task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded

from rummy_worker import config, metrics
from rummy_worker.batches import BatchSpec, BatchStore, UnknownBatch, is_chunk_index
from rummy_worker.celery_app import app, state_client
from rummy_worker.chunks import compute_chunk
from rummy_worker.recording import GameRecorder

TASK_NAME = "rummy_worker.run_chunk"

log = logging.getLogger("rummy_worker")


@contextlib.contextmanager
def leased(store: BatchStore, batch_id: str, index: int,
           seconds: float | None = None) -> Iterator[None]:
    """Hold a lease on chunk ``index`` while the block runs: take it, renew it every third
    of ``seconds`` (``RUMMY_CHUNK_LEASE``) from a heartbeat thread, drop it at the end. A
    worker killed mid-chunk stops renewing, and a sweep (:func:`heal`) sends the chunk
    again once the lease lapsed."""
    seconds = seconds if seconds is not None else config.lease_seconds()
    store.take_lease(batch_id, index, seconds)
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(seconds / 3):
            with contextlib.suppress(Exception):  # a missed beat only risks a duplicate
                store.take_lease(batch_id, index, seconds)

    thread = threading.Thread(target=beat, name=f"lease-{batch_id}-{index}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=seconds)
        with contextlib.suppress(Exception):
            store.drop_lease(batch_id, index)

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
        store = BatchStore(state_client(), prefix)
        if batch_id is not None and store.chunk_exists(batch_id, index):
            store.record_failure(
                batch_id, index,
                f"hard time limit exceeded ({exc.args[0] if exc.args else '?'} s)")


class BadChunk(ValueError):
    """A chunk task whose arguments are not a chunk of a submitted batch, or whose spec is
    not the batch's own playable spec: refused before anything is played (not retried;
    :func:`admit_chunk` says what is noted)."""


def admit_chunk(store: BatchStore, batch_id: str, index: int,
                spec: Any) -> BatchSpec:
    """The spec of chunk ``index`` of batch ``batch_id``, checked against the batch as it
    was submitted (``BatchStore.create`` validated and stored it): a task message is not
    trusted to carry a playable spec.

    A task for no chunk of a submitted batch (an unknown batch or prefix, an index outside
    ``0 .. chunks - 1``) stores nothing. A task for a real chunk whose spec is wrong (not
    the batch's own, or a stored spec that no longer validates) notes the refusal in the
    batch's failures (``rummy batch status`` shows it; the worker stops renewing the
    chunk's lease), and plays nothing.

    Raises:
        BadChunk: any of these.
    """
    try:
        known = store.spec(batch_id)
    except UnknownBatch as exc:
        raise BadChunk(f"{exc}: a chunk task for a batch never submitted") from None
    if not is_chunk_index(index, known.chunks):
        raise BadChunk(f"batch {batch_id} has chunks 0..{known.chunks - 1}, got {index!r}")
    problem = None
    try:
        given = BatchSpec.from_dict(spec)
    except Exception as exc:  # noqa: BLE001 - KeyError, TypeError: not a spec at all
        problem = f"the task's spec is not a batch spec ({type(exc).__name__}: {exc})"
    else:
        if given != known:
            problem = "the task's spec differs from the batch's submitted spec"
        else:
            try:
                known.validate()
            except (ValueError, TypeError) as exc:
                problem = f"its spec is not playable: {exc}"
    if problem is not None:
        store.record_failure(batch_id, index, f"BadChunk: {problem}")
        raise BadChunk(f"batch {batch_id}: {problem}")
    return known


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
        BadChunk: arguments that are not a chunk of a submitted batch, or a wrong spec
            (nothing is played; see :func:`admit_chunk` for what is noted).
        Whatever the simulation raises (counted in ``rummy_sim_chunk_failures_total`` and
        noted in the batch's failures); transient Redis errors are retried.
    """
    store = BatchStore(state_client(), prefix)
    batch = admit_chunk(store, batch_id, index, spec)
    if store.has_chunk(batch_id, index):
        metrics.CHUNKS.labels("skipped").inc()
        return {"batch": batch_id, "chunk": index, "games": 0, "outcome": "skipped"}
    recorder = (GameRecorder(batch_id, config.event_store_url(), config.event_store_prefix())
                if batch.record_every else None)
    try:
        with leased(store, batch_id, index):
            t0 = time.monotonic()
            result = compute_chunk(batch, index, on_game=metrics.observe_game,
                                   recorder=recorder,
                                   passthrough=(SoftTimeLimitExceeded, TimeLimitExceeded))
            if recorder is not None:
                recorder.flush()
            stored = store.put_chunk(batch_id, index, result, time.monotonic() - t0)
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
    with contextlib.suppress(Exception):  # where a sweep sends this batch's lost chunks
        BatchStore(state_client(), prefix).set_queue(batch_id, q)
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


def heal(store: BatchStore, *, queue: str | None = None, batches: int = 50,
         grace: float | None = None) -> list[tuple[str, int]]:
    """One sweep: in the ``batches`` most recent batches, send again every chunk without a
    result whose lease lapsed (its worker died mid-chunk), to the batch's own queue (else
    ``queue``), claiming each atomically so that of several sweepers one sends it; and the
    chunks with no lease at all once the batch made no progress for a lease or twice its
    mean chunk time (sent, reserved by a worker that died before starting them). Returns
    ``(batch_id, chunk)`` pairs sent.

    Raises:
        redis errors: the state Redis is unreachable (callers retry at the next sweep).
    """
    grace = grace if grace is not None else config.lease_seconds()
    sent: list[tuple[str, int]] = []
    for batch_id in store.recent(batches):
        try:
            if store.status(batch_id).complete:
                continue
            stalled = store.claim_stalled(batch_id, grace)
            stalled += store.claim_orphans(batch_id, grace, patience=grace)
            if stalled:
                send_chunks(batch_id, store.spec(batch_id), stalled, prefix=store.prefix,
                            queue=store.queue_of(batch_id) or queue)
                log.warning("batch %s: chunk(s) %s lost their worker; sent again", batch_id,
                            ", ".join(map(str, stalled)))
                sent += [(batch_id, i) for i in stalled]
        except UnknownBatch:
            continue
    return sent


def sweep_forever(stop: threading.Event, *, prefix: str, queue: str | None = None,
                  interval: float | None = None) -> None:
    """Run :func:`heal` every ``interval`` seconds (``RUMMY_SWEEP_INTERVAL``) until
    ``stop`` is set; errors are logged and retried at the next sweep."""
    interval = interval if interval is not None else config.sweep_interval()
    store = BatchStore(config.state_client(), prefix)
    while not stop.wait(interval):
        try:
            heal(store, queue=queue)
        except Exception as exc:  # noqa: BLE001 - the next sweep retries
            log.warning("chunk sweep failed (%s: %s); retrying in %.0f s",
                        type(exc).__name__, exc, interval)


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
