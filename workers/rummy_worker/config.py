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
    RUMMY_BROKER_KEYPREFIX: Redis broker: a prefix for all the broker's keys (tests).
    RUMMY_BROKER_RESTORE_INTERVAL: Redis broker: seconds between sweeps that re-deliver
        unacknowledged tasks older than the visibility timeout (default: kombu's, about
        100 s; tests set 1).
"""

from __future__ import annotations

import os

DEFAULT_URL = "redis://127.0.0.1:6379/1"


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


def broker_url() -> str:
    """Celery broker URL."""
    return _env("RUMMY_BROKER_URL", DEFAULT_URL)


def result_url() -> str:
    """Celery result backend URL."""
    return _env("RUMMY_RESULT_URL", DEFAULT_URL)


def state_url() -> str:
    """Redis URL of the batch state."""
    default = result_url() if result_url().startswith(("redis://", "rediss://")) else DEFAULT_URL
    return _env("RUMMY_STATE_URL", default)


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

    return redis.Redis.from_url(state_url(), decode_responses=True)
