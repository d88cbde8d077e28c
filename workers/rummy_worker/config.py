"""Worker settings from the environment (read when called, never cached at import).

Environment:
    RUMMY_BROKER_URL: Celery broker, ``redis://...`` or ``amqp://...``
        (default ``redis://127.0.0.1:6379/1``).
    RUMMY_RESULT_URL: Celery result backend (default ``redis://127.0.0.1:6379/1``).
    RUMMY_STATE_URL: Redis of the batch state (spec, chunk results); default
        ``RUMMY_RESULT_URL`` when that is a ``redis://`` URL, else ``redis://127.0.0.1:6379/1``.
    RUMMY_KEY_PREFIX: key prefix of the batch state (default ``rummy``).
    RUMMY_QUEUE: queue of the chunk tasks (default ``rummy-sim``).
    RUMMY_EVENT_STORE_URL: event store of sampled games (default ``redis://127.0.0.1:6379/0``).
    RUMMY_EVENT_STORE_PREFIX: its key prefix (default ``rummy``).
    RUMMY_TASK_SOFT_TIME_LIMIT / RUMMY_TASK_TIME_LIMIT: per-chunk limits in seconds
        (default 900 / 960). Celery puts them in each task message, so the submitter's
        values apply (``rummy batch submit --soft-time-limit/--time-limit``).
    RUMMY_VISIBILITY_TIMEOUT: Redis broker: seconds before an unacknowledged task is
        delivered again (default 3600; must exceed the hard time limit; tests set it short).
    RUMMY_CHUNK_LEASE / RUMMY_SWEEP_INTERVAL: a chunk's lease without a heartbeat (default
        15 s) and the seconds between two sweeps for lost chunks (default 5).
    RUMMY_CHUNK_MAX_FAILURES / RUMMY_CHUNK_RETRY_BACKOFF: failed attempts after which a
        chunk is given up (default 3), seconds before the first retry (default 5, doubled
        after each further failure).
    RUMMY_BROKER_KEYPREFIX: Redis broker: a prefix for all the broker's keys (tests).
    RUMMY_BROKER_RESTORE_INTERVAL: Redis broker: seconds between sweeps that re-deliver
        unacknowledged tasks older than the visibility timeout (default: kombu's, about
        100 s; tests set 1).
    RUMMY_BROKER_PASSWORD_FILE: the broker's password, for a broker, result or state URL
        without one (a mounted secret; :mod:`rummy_store.urls`).
    RUMMY_REDIS_PASSWORD_FILE: the event store's password, for ``RUMMY_EVENT_STORE_URL``
        without one (applied where the store is opened, ``RedisEventStore.from_url``).
    RUMMY_REDIS_CA_FILE: CA bundle verifying ``rediss://`` / ``amqps://`` servers; Celery gets
        it as ``broker_use_ssl`` / ``redis_backend_use_ssl`` (:func:`broker_use_ssl`).

Every URL may carry ``user:password@`` (Redis ACL users) and use TLS (``rediss://``,
``amqps://``). Print a URL only through ``rummy_store.urls.redact_url``.
"""

from __future__ import annotations

import os
import ssl
from typing import Any

from rummy_store.urls import BROKER_PASSWORD_FILE, ca_file, redis_tls_kwargs, resolve_url

DEFAULT_URL = "redis://127.0.0.1:6379/1"


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


def broker_url() -> str:
    """Celery broker URL, with the password of ``RUMMY_BROKER_PASSWORD_FILE`` if it has none.

    Raises:
        rummy_store.urls.SecretFileError: the password file cannot be used.
    """
    return resolve_url(_env("RUMMY_BROKER_URL", DEFAULT_URL), BROKER_PASSWORD_FILE)


def result_url() -> str:
    """Celery result backend URL (password as for :func:`broker_url`)."""
    return resolve_url(_env("RUMMY_RESULT_URL", DEFAULT_URL), BROKER_PASSWORD_FILE)


def state_url() -> str:
    """Redis URL of the batch state (password as for :func:`broker_url`)."""
    default = result_url() if result_url().startswith(("redis://", "rediss://")) else DEFAULT_URL
    return resolve_url(_env("RUMMY_STATE_URL", default), BROKER_PASSWORD_FILE)


def _celery_ssl(url: str) -> dict[str, Any] | None:
    """The SSL options Celery needs for a TLS ``url``, or ``None`` for a plain one."""
    ca = ca_file()
    if url.startswith("rediss://"):  # kombu's Redis transport / Celery's Redis backend
        opts: dict[str, Any] = {"ssl_cert_reqs": ssl.CERT_REQUIRED}
        if ca:
            opts["ssl_ca_certs"] = ca
        return opts
    if url.startswith("amqps://"):  # py-amqp: ssl.SSLContext.wrap_socket-style options
        amqp: dict[str, Any] = {"cert_reqs": ssl.CERT_REQUIRED}
        if ca:
            amqp["ca_certs"] = ca
        return amqp
    return None


def broker_use_ssl() -> dict[str, Any] | None:
    """Celery's ``broker_use_ssl`` for :func:`broker_url`: certificates required (against
    ``RUMMY_REDIS_CA_FILE`` when set) for ``rediss://`` and ``amqps://``; ``None`` otherwise.
    Celery refuses a ``rediss://`` URL without these options."""
    return _celery_ssl(broker_url())


def backend_use_ssl() -> dict[str, Any] | None:
    """Celery's ``redis_backend_use_ssl`` for a ``rediss://`` :func:`result_url`, else
    ``None``."""
    url = result_url()
    return _celery_ssl(url) if url.startswith("rediss://") else None


def key_prefix() -> str:
    """Key prefix of the batch state."""
    return _env("RUMMY_KEY_PREFIX", "rummy")


def queue() -> str:
    """Queue of the chunk tasks."""
    return _env("RUMMY_QUEUE", "rummy-sim")


def event_store_url() -> str:
    """Event store URL of sampled games."""
    return _env("RUMMY_EVENT_STORE_URL", "redis://127.0.0.1:6379/0")


def event_store_prefix() -> str:
    """Event store key prefix."""
    return _env("RUMMY_EVENT_STORE_PREFIX", "rummy")


def soft_time_limit() -> float:
    """Soft time limit of a chunk task, seconds (raises ``SoftTimeLimitExceeded``)."""
    return float(_env("RUMMY_TASK_SOFT_TIME_LIMIT", "900"))


def time_limit() -> float:
    """Hard time limit of a chunk task, seconds (the pool process is killed)."""
    return float(_env("RUMMY_TASK_TIME_LIMIT", "960"))


def visibility_timeout() -> int:
    """Redis broker visibility timeout, seconds."""
    return int(_env("RUMMY_VISIBILITY_TIMEOUT", "3600"))


def lease_seconds() -> float:
    """How long a chunk's lease lasts without a heartbeat, seconds (``RUMMY_CHUNK_LEASE``,
    default 15): a chunk whose worker died is sent again about this long after its last
    heartbeat (every third of it), not after the broker's visibility timeout."""
    return float(_env("RUMMY_CHUNK_LEASE", "15"))


def sweep_interval() -> float:
    """Seconds between two sweeps for chunks whose lease lapsed (``RUMMY_SWEEP_INTERVAL``,
    default 5); every worker and every ``rummy batch ... --wait`` sweeps."""
    return float(_env("RUMMY_SWEEP_INTERVAL", "5"))


def max_failures() -> int:
    """Failed attempts after which a chunk is given up (``RUMMY_CHUNK_MAX_FAILURES``,
    default 3): it is not sent again, ``rummy batch status`` shows its error, and the batch
    ends as failed once nothing else is left to run."""
    return max(1, int(_env("RUMMY_CHUNK_MAX_FAILURES", "3")))


def retry_backoff() -> float:
    """Seconds before a failed chunk is sent again (``RUMMY_CHUNK_RETRY_BACKOFF``, default
    5), doubled after every further failure (at most 300)."""
    return float(_env("RUMMY_CHUNK_RETRY_BACKOFF", "5"))


def retry_policy() -> Any:
    """The :class:`rummy_worker.batches.RetryPolicy` of these settings."""
    from rummy_worker.batches import RetryPolicy

    return RetryPolicy(max_failures=max_failures(), backoff=retry_backoff())


def broker_keyprefix() -> str | None:
    """Redis broker global key prefix, or ``None``."""
    return os.environ.get("RUMMY_BROKER_KEYPREFIX") or None


def restore_interval() -> int | None:
    """Redis broker: seconds between sweeps for expired unacknowledged tasks, or ``None``."""
    raw = os.environ.get("RUMMY_BROKER_RESTORE_INTERVAL")
    return int(raw) if raw else None


def state_client() -> object:
    """A new sync Redis client of the batch state (``decode_responses=True``). Call it in the
    process that uses it (after fork)."""
    import redis

    url = state_url()
    return redis.Redis.from_url(url, decode_responses=True, **redis_tls_kwargs(url))
