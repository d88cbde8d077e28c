"""The chunk task, and submitting a batch as chunk tasks.

The task is thin (STYLE.md §10): resolve the batch id, chunk index and spec (plain JSON
arguments), call the pure :func:`rummy_worker.chunks.compute_chunk`, record the result with
HSETNX. It never calls ``.get()`` on another task. Running it twice for one chunk stores one
result: idempotent, as ``acks_late`` requires.
"""

from __future__ import annotations

import contextlib
import json
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


MAX_SPEC_BYTES = 64 * 1024  #: a batch spec is ids, seeds and names: a few hundred bytes


class ChunkTask(Task):
    """Base of the chunk task: notes hard time limits, which kill the pool process before
    the task body can (``on_failure`` runs in the worker's main process then)."""

    def on_failure(self, exc: BaseException, task_id: str, args: Any, kwargs: Any,
                   einfo: Any) -> None:
        """Count a hard time limit as a chunk failure and note it in the batch, when the
        task is a chunk of a submitted batch with the batch's own spec (a forged task notes
        nothing)."""
        if not isinstance(exc, TimeLimitExceeded):
            return  # the task body already counted and noted it
        metrics.CHUNK_FAILURES.inc()
        args = list(args or ())
        kwargs = dict(kwargs or {})
        batch_id = args[0] if args else kwargs.get("batch_id")
        index = args[1] if len(args) > 1 else kwargs.get("index")
        spec = args[2] if len(args) > 2 else kwargs.get("spec")
        prefix = args[3] if len(args) > 3 else kwargs.get("prefix", "rummy")
        store = BatchStore(state_client(), str(prefix))
        try:
            check_chunk(store, batch_id, index, spec)
        except BadChunk:
            return
        store.record_failure(
            batch_id, index, f"hard time limit exceeded ({exc.args[0] if exc.args else '?'} s)")


class BadChunk(ValueError):
    """A chunk task whose arguments are not a chunk of a submitted batch, or whose spec is
    not exactly the batch's own: refused before anything is played, not retried, and noted
    nowhere (:func:`check_chunk`)."""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def check_chunk(store: BatchStore, batch_id: Any, index: Any, spec: Any) -> BatchSpec:
    """The submitted spec of chunk ``index`` of batch ``batch_id`` when the task's ``spec``
    is exactly it (the same JSON document: no extra or missing key, the same JSON types) and
    at most :data:`MAX_SPEC_BYTES` long. Writes nothing: a task message is not trusted, so
    a wrong one cannot write into any batch.

    Raises:
        BadChunk: an unknown batch or prefix, an index outside ``0 .. chunks - 1``, a spec
            that is not the batch's own, or an oversized one.
    """
    if not isinstance(batch_id, str):
        raise BadChunk(f"a batch id is a string, got {type(batch_id).__name__}")
    try:
        text = _canonical(spec)
    except (TypeError, ValueError) as exc:
        raise BadChunk(f"the task's spec is not a JSON document ({exc})") from None
    if len(text) > MAX_SPEC_BYTES:
        raise BadChunk(f"the task's spec is {len(text)} bytes, more than a batch spec's "
                       f"{MAX_SPEC_BYTES}")
    try:
        known = store.spec(batch_id)
    except UnknownBatch as exc:
        raise BadChunk(f"{exc}: a chunk task for a batch never submitted") from None
    if not is_chunk_index(index, known.chunks):
        raise BadChunk(f"batch {batch_id} has chunks 0..{known.chunks - 1}, got {index!r}")
    if not isinstance(spec, dict):
        raise BadChunk(f"batch {batch_id}: the task's spec is not a batch spec")
    if text != _canonical(known.to_dict()):
        raise BadChunk(f"batch {batch_id}: the task's spec differs from the batch's "
                       "submitted spec")
    return known


def admit_chunk(store: BatchStore, batch_id: str, index: int,
                spec: Any) -> BatchSpec:
    """:func:`check_chunk`, then the batch's own spec must still validate (a stored spec
    that no longer does, e.g. a bot a later release dropped, is a failure of the chunk:
    noted and counted like any other).

    Raises:
        BadChunk: either refusal.
    """
    known = check_chunk(store, batch_id, index, spec)
    try:
        known.validate()
    except (ValueError, TypeError) as exc:
        problem = f"its spec is not playable: {exc}"
        store.record_failure(batch_id, index, f"BadChunk: {problem}")
        raise BadChunk(f"batch {batch_id}: {problem}") from None
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
        BadChunk: arguments that are not a chunk of a submitted batch with its own spec
            (nothing is played nor noted), or a batch spec that no longer validates
            (noted; see :func:`admit_chunk`).
        Whatever the simulation raises (counted in ``rummy_sim_chunk_failures_total`` and
        noted in the batch's failures); transient Redis errors are retried.
    """
    store = BatchStore(state_client(), prefix)
    batch = admit_chunk(store, batch_id, index, spec)
    if store.has_chunk(batch_id, index) or store.stopped(batch_id):  # done, or stopped
        metrics.CHUNKS.labels("skipped").inc()  # early (a sequential test decided)
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


SEND_GROUP = 500  #: chunks marked queued, then published, at a time


def send_chunks(batch_id: str, spec: BatchSpec, indices: list[int], *, prefix: str,
                queue: str | None = None, soft_time_limit: float | None = None,
                time_limit: float | None = None, marked: bool = False) -> None:
    """Send one chunk task per index to ``queue`` (default ``RUMMY_QUEUE``), each marked
    queued in the batch state just before it is published (a sweep tells a chunk waiting in
    the broker from a lost one by these marks; ``marked``: the caller claimed the marks).

    Time limits travel in each task message (Celery's ``timelimit`` header), so the
    submitter decides them: the arguments, else ``RUMMY_TASK_SOFT_TIME_LIMIT`` /
    ``RUMMY_TASK_TIME_LIMIT`` of this process (seconds); they are recorded with the batch,
    so chunks sent again by a sweep keep them.

    Raises:
        redis errors: the state Redis is unreachable (nothing is sent).
        kombu errors: the broker is unreachable (the marks stay: a sweep sends them again).
    """
    q = queue or config.queue()
    args_spec = spec.to_dict()
    soft, hard = limits(soft_time_limit, time_limit)
    store = BatchStore(state_client(), prefix)
    store.set_queue(batch_id, q)
    store.set_limits(batch_id, soft, hard)
    with app.producer_or_acquire() as producer:
        for at in range(0, len(indices), SEND_GROUP):
            group = indices[at:at + SEND_GROUP]
            if not marked:
                store.mark_queued(batch_id, group)
            for i in group:
                run_chunk.apply_async((batch_id, i, args_spec, prefix), queue=q,
                                      producer=producer, soft_time_limit=soft,
                                      time_limit=hard)


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


def broker_queue_size(queue: str) -> int:
    """Messages waiting in the broker's ``queue`` (not those workers hold): the Redis
    list's length (every priority), RabbitMQ's ``message_count``; 0 for a queue the broker
    does not have (a Redis broker restarted empty).

    Raises:
        kombu / redis / amqp errors: the broker is unreachable.
    """
    from kombu.exceptions import ChannelError
    from kombu.transport.virtual import Channel as VirtualChannel

    with app.connection_for_read() as conn:
        conn.connect()
        channel = conn.channel()
        try:
            if isinstance(channel, VirtualChannel):  # Redis: LLEN of each priority's list
                return int(channel._size(queue))  # (its passive declare misses the prefix)
            return int(channel.queue_declare(queue=queue, passive=True).message_count)
        except ChannelError:  # amqp's NotFound: no such queue
            return 0
        finally:
            with contextlib.suppress(Exception):
                channel.close()


class Sweeper:
    """Finds lost chunks and sends them again (:meth:`heal`); one per sweeping process, as
    it remembers which queued chunks looked lost at its previous sweep (a chunk is taken
    for lost by its queued mark only when it looks lost at two sweeps in a row)."""

    def __init__(self) -> None:
        self._suspects: dict[tuple[str, str, int], tuple[str, float]] = {}
        self._lock = threading.Lock()

    def heal(self, store: BatchStore, *, queue: str | None = None, batches: int = 50,
             grace: float | None = None, retry: Any = None,
             queue_size: Any = None) -> list[tuple[str, int]]:
        """One sweep over the ``batches`` most recent batches of ``store``; sends again,
        to the batch's own queue (else ``queue``) and with its own time limits:

        * chunks whose lease lapsed (the worker holding them died);
        * failed chunks once their back-off passed, until given up (``retry``, default
          :func:`rummy_worker.config.retry_policy`);
        * chunks marked queued for at least ``grace`` seconds (``RUMMY_CHUNK_LEASE``) that
          the broker lost: when a queue holds fewer messages (``queue_size(queue)``,
          default :func:`broker_queue_size`) than there are such marks, the oldest marks
          beyond its length, if they were so at this sweeper's previous sweep too;
        * chunks with no mark at all (sent by a release without marks) once the batch made
          no progress for ``grace`` seconds or twice its mean chunk time.

        Each chunk is claimed atomically, so of several sweepers one sends it. A chunk that
        only waits in the queue is never sent again. Returns ``(batch_id, chunk)`` pairs
        sent.

        Raises:
            redis errors: the state Redis is unreachable (callers retry at the next sweep).
        """
        grace = grace if grace is not None else config.lease_seconds()
        retry = retry if retry is not None else config.retry_policy()
        queue_size = queue_size or broker_queue_size
        sent: list[tuple[str, int]] = []
        marks_by_queue: dict[str, list[tuple[str, int, str, bool]]] = {}
        sizes: dict[str, int | None] = {}
        for batch_id in store.recent(batches):
            try:
                st = store.status(batch_id, retry.max_failures)
                if st.complete or st.failed or st.stopped:
                    continue
                q = store.queue_of(batch_id) or queue or config.queue()
                if q not in sizes:  # read before the marks: see _lost
                    try:
                        sizes[q] = int(queue_size(q))
                    except Exception as exc:  # noqa: BLE001 - broker down: marks wait
                        log.debug("queue %s: size unknown (%s)", q, exc)
                        sizes[q] = None
                lost = store.claim_stalled(batch_id, retry)
                again = store.claim_unmarked(batch_id, grace, retry)
                if lost or again:
                    self._send(store, batch_id, lost + again, q)
                    if lost:
                        log.warning("batch %s: chunk(s) %s lost their worker; sent again",
                                    batch_id, ", ".join(map(str, lost)))
                    failed = [i for i in again if i in st.attempts]
                    if failed:
                        log.warning("batch %s: failed chunk(s) %s sent again (attempt %s)",
                                    batch_id, ", ".join(map(str, failed)),
                                    ", ".join(str(st.attempts[i] + 1) for i in failed))
                    sent += [(batch_id, i) for i in lost + again]
                leased = store.live_leases(batch_id)
                now = time.time()
                for index, mark in store.queued_marks(batch_id).items():
                    if now - float(mark) >= grace:
                        marks_by_queue.setdefault(q, []).append(
                            (batch_id, index, mark, index in leased))
            except UnknownBatch:
                continue
        for q, marks in marks_by_queue.items():
            size = sizes.get(q)
            if size is not None:
                sent += self._lost(store, q, size, marks)
        return sent

    def _lost(self, store: BatchStore, queue: str, size: int,
              marks: list[tuple[str, int, str, bool]]) -> list[tuple[str, int]]:
        """Send again the chunks of ``marks`` (queued at least a lease ago) that ``queue``,
        holding ``size`` messages, lost: the oldest marks beyond ``size`` that were also
        suspects at this sweeper's previous sweep, a sweep interval ago or more."""
        deficit = len(marks) - size
        now = time.monotonic()
        candidates = sorted(((float(mark), b, i, mark) for b, i, mark, leased in marks
                             if not leased))[:max(0, deficit)]
        confirmed = []
        with self._lock:
            previous = self._suspects
            self._suspects = {k: v for k, v in previous.items() if k[0] != store.prefix}
            for _, batch_id, index, mark in candidates:
                key = (store.prefix, batch_id, index)
                seen = previous.get(key)
                if seen is not None and seen[0] == mark:
                    self._suspects[key] = seen
                    if now - seen[1] >= min(config.sweep_interval(), 1.0) * 0.9:
                        confirmed.append((batch_id, index, mark))
                else:
                    self._suspects[key] = (mark, now)
        sent: dict[str, list[int]] = {}
        for batch_id, index, mark in confirmed:
            if store.claim_queued(batch_id, index, mark):
                sent.setdefault(batch_id, []).append(index)
        for batch_id, indices in sent.items():
            try:
                self._send(store, batch_id, indices, queue)
            except UnknownBatch:
                continue
            log.warning("batch %s: chunk(s) %s were queued but the broker's queue %s lost "
                        "them (%d message(s) for %d queued chunk(s)); sent again", batch_id,
                        ", ".join(map(str, sorted(indices))), queue, size, len(marks))
        return [(b, i) for b, indices in sent.items() for i in sorted(indices)]

    @staticmethod
    def _send(store: BatchStore, batch_id: str, indices: list[int], queue: str) -> None:
        lim = store.limits_of(batch_id)
        soft, hard = lim if lim is not None else (None, None)
        send_chunks(batch_id, store.spec(batch_id), sorted(indices), prefix=store.prefix,
                    queue=queue, soft_time_limit=soft, time_limit=hard, marked=True)


_SWEEPER = Sweeper()


def heal(store: BatchStore, *, queue: str | None = None, batches: int = 50,
         grace: float | None = None) -> list[tuple[str, int]]:
    """One sweep of this process's :class:`Sweeper` (see :meth:`Sweeper.heal`)."""
    return _SWEEPER.heal(store, queue=queue, batches=batches, grace=grace)


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
    harmless duplicates. Chunks given up get their full count of attempts again. Returns the
    indices sent.

    Raises:
        UnknownBatch: no such batch.
    """
    spec = store.spec(batch_id)
    missing = store.missing_chunks(batch_id)
    store.reset_failures(batch_id, missing)
    send_chunks(batch_id, spec, missing, prefix=store.prefix, queue=queue,
                soft_time_limit=soft_time_limit, time_limit=time_limit)
    return missing
