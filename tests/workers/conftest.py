"""Fixtures of the worker tests (see :mod:`tests.workers.helpers` for the isolation)."""

from __future__ import annotations

import signal
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.redis_helpers import redis_unreachable
from tests.workers.helpers import (
    BROKER_PREFIX,
    REDIS_UP,
    REDIS_URL,
    SESSION,
    Worker,
    delete_keys,
    worker_env,
)


@pytest.fixture(autouse=True)
def _redis_answers() -> None:
    """Every worker test needs the test Redis: a missing one fails the test with the
    command that starts it (``tests/redis_helpers.py``), it never skips it."""
    redis_unreachable()


@pytest.fixture(scope="session", autouse=True)
def _broker_keys() -> Iterator[None]:
    """Delete this session's broker keys at the end (also those CLI subprocesses made)."""
    yield
    if REDIS_UP:
        delete_keys(BROKER_PREFIX)


@pytest.fixture(scope="session")
def celery_app() -> Any:
    """The app, configured for this session whatever imported it first."""
    from rummy_worker.celery_app import app

    opts = dict(app.conf.broker_transport_options or {})
    opts.update(visibility_timeout=4, unacked_restore_interval=1, unacked_restore_throttle=1,
                global_keyprefix=BROKER_PREFIX)
    app.conf.broker_transport_options = opts
    app.conf.broker_url = REDIS_URL
    return app


@pytest.fixture()
def rclient() -> Any:
    """A sync client of the test Redis (``decode_responses=True``)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, decode_responses=True)
    yield client
    client.close()


@pytest.fixture()
def prefix() -> Iterator[str]:
    """A test-unique key prefix for batch state and the event store (deleted afterwards)."""
    p = f"rummy-test-{SESSION}-{uuid.uuid4().hex[:8]}"
    yield p
    delete_keys(p)


@pytest.fixture()
def store(prefix: str, rclient: Any) -> Any:
    """A :class:`BatchStore` under the test prefix."""
    from rummy_worker.batches import BatchStore

    return BatchStore(rclient, prefix)


@pytest.fixture()
def start_worker(tmp_path: Path, prefix: str) -> Iterator[Callable[..., Worker]]:
    """``start_worker(queue, concurrency=1, env=None, rummy=False) -> Worker`` (``rummy``:
    run ``rummy worker`` instead of ``celery worker``); all stopped afterwards. Workers
    record sampled games under the test prefix in the test Redis."""
    started: list[Worker] = []

    def start(queue: str, concurrency: int = 1, env: dict[str, str] | None = None,
              rummy: bool = False) -> Worker:
        e = worker_env({"RUMMY_EVENT_STORE_URL": REDIS_URL,
                        "RUMMY_EVENT_STORE_PREFIX": prefix, **(env or {})})
        w = Worker(queue, concurrency, e, tmp_path / f"worker-{len(started)}.log",
                   f"{queue}-{len(started)}", rummy=rummy)
        started.append(w)
        return w

    yield start
    for w in started:  # warm shutdowns in parallel, then reap
        w.kill(signal.SIGTERM)
    for w in started:
        w.stop()


@pytest.fixture()
def queue() -> str:
    """A test-unique queue name."""
    return f"rummy-test-{SESSION}-{uuid.uuid4().hex[:8]}"


