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
* Redis clients are created after fork (``worker_process_init``), never inherited.
* URLs may carry ``user:password@`` (or take the password from ``RUMMY_BROKER_PASSWORD_FILE``)
  and use TLS (``rediss://``, ``amqps://``, verified against ``RUMMY_REDIS_CA_FILE``).
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import (
    task_received,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)

from rummy_worker import config

app = Celery("rummy_worker", broker=config.broker_url(), backend=config.result_url(),
             include=["rummy_worker.tasks"])

_transport: dict[str, Any] = {}
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
_reserved: dict[tuple[str, str, int], float] = {}  # (prefix, batch, chunk) -> when received


@task_received.connect
def _on_received(request: Any = None, **_: Any) -> None:
    """A chunk task reserved by this worker (running, or waiting for a pool process): the
    main process leases it at once and keeps the lease alive (``_keep_leases``), so a
    whole worker killed with chunks reserved but not started lets all of them lapse."""
    from rummy_worker.tasks import TASK_NAME

    if request is None or getattr(request, "name", None) != TASK_NAME:
        return
    args = list(request.args or ())
    kwargs = dict(request.kwargs or {})
    try:
        batch_id = str(args[0] if args else kwargs["batch_id"])
        index = int(args[1] if len(args) > 1 else kwargs["index"])
        prefix = str(args[3] if len(args) > 3 else kwargs.get("prefix", "rummy"))
    except (KeyError, IndexError, TypeError, ValueError):
        return
    import time

    from rummy_worker.batches import BatchStore

    try:  # a task for no chunk of a submitted batch is refused by the task: no lease
        if not BatchStore(state_client(), prefix).chunk_exists(batch_id, index):
            return
    except Exception:  # noqa: BLE001 - the state Redis unreachable: lease it when back
        pass
    _reserved[(prefix, batch_id, index)] = time.time()
    _keep_leases()


def _keep_leases() -> None:
    """Renew the lease of every chunk this worker reserved and that has no result (nor a
    noted failure) yet; forget the others."""
    from rummy_worker.batches import BatchStore

    for key in list(_reserved):
        prefix, batch_id, index = key
        store = BatchStore(state_client(), prefix)
        try:
            if store.has_chunk(batch_id, index) or store.has_failure(batch_id, index):
                _reserved.pop(key, None)
                continue
            store.take_lease(batch_id, index, config.lease_seconds())
        except Exception:  # noqa: BLE001 - the next beat retries
            continue


@worker_ready.connect
def _start_sweeper(**_: Any) -> None:
    """The worker's main process keeps its reserved chunks' leases alive and sweeps for
    chunks whose worker died (their lease lapsed), sending them again (issue 14:
    self-healing batches)."""
    global _sweep_stop
    import threading

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
    if _sweep_stop is not None:
        _sweep_stop.set()
