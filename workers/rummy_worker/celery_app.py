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
from celery.signals import worker_process_init, worker_process_shutdown

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
