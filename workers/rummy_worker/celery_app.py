"""The Celery app of the simulation workers: ``celery -A rummy_worker.celery_app worker``.

Settings come from the environment (:mod:`rummy_worker.config`) when this module is first
imported. Production settings, following Celery's task guide:

* ``task_acks_late`` + ``task_reject_on_worker_lost``: a chunk is acknowledged only after it
  ran; if the process running it dies (SIGKILL, OOM) the message is delivered again. Chunk
  tasks are idempotent (results are stored with HSETNX), so a second run is harmless.
* ``worker_prefetch_multiplier=1``: a worker reserves one chunk per pool process; chunks are
  long (seconds to minutes), so prefetching more would only starve other workers.
* soft and hard time limits per chunk; the Redis broker's ``visibility_timeout`` must be
  longer than the hard limit, or a running chunk is handed to a second worker (harmless, but
  wasted work). RabbitMQ's ``consumer_timeout`` (30 min by default) must be too.
* JSON only (task arguments are ids, seeds and names, never objects).
* Redis clients are created after fork (``worker_process_init``), never inherited; the
  solver's compiled kernels are loaded before it (``worker_init``), and inherited.
* URLs may carry ``user:password@`` (or take the password from ``RUMMY_BROKER_PASSWORD_FILE``)
  and use TLS (``rediss://``, ``amqps://``, verified against ``RUMMY_REDIS_CA_FILE``).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any

from celery import Celery
from celery.signals import (
    task_received,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from rummy_worker import config

app = Celery("rummy_worker", broker=config.broker_url(), backend=config.result_url(),
             include=["rummy_worker.tasks"])

_transport: dict[str, Any] = {}
if config.broker_url().startswith(("redis://", "rediss://")):
    # kombu's Redis transport, parking malformed queue entries instead of ending the worker
    app.conf.broker_transport = "rummy_worker.transport:Transport"
if config.broker_url().startswith(("redis://", "rediss://", "unix://")):
    _transport["visibility_timeout"] = config.visibility_timeout()
    if config.restore_interval():
        _transport["unacked_restore_interval"] = config.restore_interval()
        _transport["unacked_restore_throttle"] = 1
    if config.broker_keyprefix():
        _transport["global_keyprefix"] = config.broker_keyprefix()

# TLS (rediss://, amqps://): Celery needs the certificate options spelled out
if config.broker_use_ssl() is not None:
    app.conf.broker_use_ssl = config.broker_use_ssl()
if config.backend_use_ssl() is not None:
    app.conf.redis_backend_use_ssl = config.backend_use_ssl()

app.conf.update(
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_soft_time_limit=config.soft_time_limit(),
    task_time_limit=config.time_limit(),
    task_default_queue=config.queue(),
    result_expires=24 * 3600,
    broker_transport_options=_transport,
    broker_connection_retry_on_startup=True,
    worker_cancel_long_running_tasks_on_connection_loss=True,
    worker_max_tasks_per_child=1000,
    worker_hijack_root_logger=False,
)

_state_client: Any = None
_state_pid: int | None = None


def state_client() -> Any:
    """This process's Redis client of the batch state, created on first use after fork."""
    global _state_client, _state_pid
    if _state_client is None or _state_pid != os.getpid():
        _state_client = config.state_client()
        _state_pid = os.getpid()
    return _state_client


@worker_init.connect
def _warm_solver(**_: Any) -> None:
    """The worker's main process, before it forks its pool: compile or load the solver's
    kernels (:func:`rummy.solver.warm`) once, so that every pool process inherits them and
    no chunk pays for them inside its time limits (a one-game chunk under a 0.5 s soft
    limit used to fail on a loaded machine while numba loaded)."""
    from rummy.solver import warm

    warm()


@worker_process_init.connect
def _after_fork(**_: Any) -> None:
    """A fresh pool process: new Redis client, solver timing hooked in."""
    global _state_client
    _state_client = None
    state_client()
    from rummy_worker.metrics import install_solver_timer

    install_solver_timer()


@worker_process_shutdown.connect
def _on_exit(pid: int | None = None, **_: Any) -> None:
    from rummy_worker.metrics import mark_dead

    mark_dead(pid or os.getpid())


_sweep_stop: Any = None


@dataclass
class _Reservation:
    """A chunk task this worker took off the broker (its Celery request id is the key)."""

    prefix: str
    batch_id: str
    index: int
    spec: Any
    received: float
    recorded: bool  # its lease taken and queued mark cleared (False: state Redis was down)


_reserved: dict[str, _Reservation] = {}
_reserved_lock = threading.Lock()


def _chunk_args(request: Any) -> tuple[str, int, Any, str] | None:
    """``(batch_id, index, spec, prefix)`` of a chunk task request, or ``None``."""
    args = list(request.args or ())
    kwargs = dict(request.kwargs or {})
    try:
        batch_id = args[0] if args else kwargs["batch_id"]
        index = args[1] if len(args) > 1 else kwargs["index"]
        spec = args[2] if len(args) > 2 else kwargs["spec"]
        prefix = args[3] if len(args) > 3 else kwargs.get("prefix", "rummy")
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(batch_id, str) or not isinstance(prefix, str) \
            or not isinstance(index, int):
        return None
    return batch_id, index, spec, prefix


def _record(res: _Reservation) -> bool:
    """Lease a reserved chunk and clear its queued mark, if the task is a chunk of a
    submitted batch with the batch's own spec (a forged task touches nothing). False when
    it is not."""
    from rummy_worker.batches import BatchStore
    from rummy_worker.tasks import BadChunk, check_chunk

    store = BatchStore(state_client(), res.prefix)
    try:
        check_chunk(store, res.batch_id, res.index, res.spec)
    except BadChunk:
        return False
    store.receive(res.batch_id, res.index, config.lease_seconds())
    res.recorded = True
    return True


@task_received.connect
def _on_received(request: Any = None, **_: Any) -> None:
    """A chunk task taken off the broker by this worker (running, or waiting for a pool
    process): the main process leases it at once (and clears its queued mark) and keeps the
    lease alive while Celery holds the request (``_keep_leases``), so a whole worker killed
    with chunks reserved but not started lets all of them lapse, and a request Celery drops
    (a lost broker connection) stops being renewed."""
    from rummy_worker.tasks import TASK_NAME

    if request is None or getattr(request, "name", None) != TASK_NAME:
        return
    parsed = _chunk_args(request)
    if parsed is None:
        return
    res = _Reservation(parsed[3], parsed[0], parsed[1], parsed[2], time.time(), False)
    try:
        if not _record(res):
            return
    except Exception:  # noqa: BLE001 - the state Redis unreachable: record it when back
        pass
    with _reserved_lock:
        _reserved[str(request.id)] = res


def _held(task_id: str) -> bool:
    """True while Celery holds the request: reserved, scheduled or running."""
    from celery.worker import state

    return task_id in state.requests or any(
        getattr(r, "id", None) == task_id for r in tuple(state.scheduled_requests))


def _keep_leases() -> None:
    """Renew the lease of every chunk this worker holds that has no result yet; forget the
    requests Celery finished or dropped (their leases then lapse or were dropped)."""
    from rummy_worker.batches import BatchStore

    now = time.time()
    with _reserved_lock:
        items = list(_reserved.items())
    for task_id, res in items:
        if now - res.received > 1.0 and not _held(task_id):
            with _reserved_lock:
                _reserved.pop(task_id, None)
            continue
        store = BatchStore(state_client(), res.prefix)
        try:
            if store.has_chunk(res.batch_id, res.index):
                with _reserved_lock:
                    _reserved.pop(task_id, None)
                continue
            if not res.recorded:
                if not _record(res):
                    with _reserved_lock:
                        _reserved.pop(task_id, None)
                continue
            store.take_lease(res.batch_id, res.index, config.lease_seconds())
        except Exception:  # noqa: BLE001 - the next beat retries
            continue


@worker_ready.connect
def _start_sweeper(**_: Any) -> None:
    """The worker's main process keeps its reserved chunks' leases alive and sweeps for lost
    chunks, sending them again (self-healing batches, :meth:`rummy_worker.tasks.Sweeper.heal`)."""
    global _sweep_stop
    from rummy_worker.tasks import sweep_forever

    _sweep_stop = threading.Event()
    stop = _sweep_stop
    beat = min(config.sweep_interval(), config.lease_seconds() / 3)

    def heartbeat() -> None:
        while not stop.wait(beat):
            _keep_leases()

    threading.Thread(target=heartbeat, name="chunk-leases", daemon=True).start()
    threading.Thread(target=sweep_forever, args=(_sweep_stop,),
                     kwargs={"prefix": config.key_prefix()}, name="chunk-sweeper",
                     daemon=True).start()


@worker_shutdown.connect
def _stop_sweeper(**_: Any) -> None:
    """Stop the sweeper; the chunks this worker still held without a result go back to the
    broker's queue (a warm shutdown returns unacknowledged tasks), so their leases become
    queued marks rather than lapse into a second copy."""
    if _sweep_stop is not None:
        _sweep_stop.set()
    from rummy_worker.batches import BatchStore

    with _reserved_lock:
        items = list(_reserved.values())
        _reserved.clear()
    for res in items:
        if not res.recorded:
            continue
        try:
            store = BatchStore(state_client(), res.prefix)
            if not store.has_chunk(res.batch_id, res.index):
                store.requeued(res.batch_id, [res.index])
        except Exception:  # noqa: BLE001 - their leases lapse and a sweep sends them
            continue
