"""Helpers for tests that use the real Redis (``RUMMY_TEST_REDIS_URL``, default
``redis://127.0.0.1:6379/0``), shared by the contract, service and worker suites.

A missing Redis never passes by skipping. When ``tests/conftest.py`` is loaded (before
any other conftest or test module), :func:`ensure_test_redis` pings the test Redis; when
nothing answers it starts a private ``redis-server`` of its own on a free port
(``tests/private_redis.py``) and points ``RUMMY_TEST_REDIS_URL`` (so also every subprocess
the tests start) at it. When ``redis-server`` is not installed either, every
``needs_redis`` test fails with the command that starts the shared one
(:data:`tests.private_redis.START_COMMAND`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import redis
import redis.asyncio as aioredis

from tests.private_redis import START_COMMAND, PlainRedis, start_plain_redis

DEFAULT_URL = "redis://127.0.0.1:6379/0"
URL_VARIABLE = "RUMMY_TEST_REDIS_URL"

REDIS_URL = os.environ.get(URL_VARIABLE, DEFAULT_URL)
"""The test Redis. Modules copy it at import: ``tests/conftest.py`` resolves it (and sets
the environment variable) when it is loaded, before any other conftest or test module."""

_private: PlainRedis | None = None
_failure: str | None = None


def _ping(url: str) -> str | None:
    """None if ``url`` answers PING within a second, else why not."""
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        try:
            client.ping()
        finally:
            client.close()
    except redis.RedisError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def ensure_test_redis() -> str | None:
    """Make sure a Redis answers at :data:`REDIS_URL`: the configured one (environment
    variable ``RUMMY_TEST_REDIS_URL``, default ``redis://127.0.0.1:6379/0``) if it answers,
    else a private ``redis-server`` started here on a free port, whose URL then replaces
    :data:`REDIS_URL` and the environment variable. Idempotent.

    Returns:
        None when a Redis answers, else the reason none does (with the command that starts
        one); :func:`redis_unreachable` fails tests with it.
    """
    global REDIS_URL, _private, _failure
    if _private is not None:
        return None
    configured = os.environ.get(URL_VARIABLE, DEFAULT_URL)
    why = _ping(configured)
    if why is None:
        REDIS_URL = configured
        _failure = None
        return None
    try:
        _private = start_plain_redis(Path(tempfile.mkdtemp(prefix="rummy-test-redis-")))
    except (FileNotFoundError, RuntimeError) as exc:
        _failure = (f"no Redis answers at {configured} ({why}) and no private one could be "
                    f"started ({exc}); a missing Redis fails the tests, it does not skip "
                    f"them. Start one with: {START_COMMAND}")
        return _failure
    REDIS_URL = _private.url
    os.environ[URL_VARIABLE] = REDIS_URL
    _failure = None
    return None


def private_server() -> PlainRedis | None:
    """The private ``redis-server`` :func:`ensure_test_redis` started, if it did."""
    return _private


def stop_private_redis() -> None:
    """Stop the private ``redis-server``, if one was started (end of the session)."""
    global _private
    if _private is not None:
        _private.stop()
        _private = None


_may_use: tuple[bool, str] = (True, "")


def current_test_may_use_redis(allowed: bool, nodeid: str) -> None:
    """Set by ``tests/conftest.py`` before each test: whether it carries ``needs_redis``."""
    global _may_use
    _may_use = (allowed, nodeid)


def redis_unreachable() -> str | None:
    """None if the test Redis answers PING. Otherwise the test FAILS here (never skips:
    a missing Redis must not pass a run), with the command that starts one. A test without
    the ``needs_redis`` marker fails here too: ``make test-fast`` would run it without a
    server (add the marker, or a fixture of ``tests/conftest.py``'s ``REDIS_FIXTURES``).

    The ``str | None`` return is kept for the callers written as
    ``if reason: pytest.skip(reason)``: they now never see a reason.
    """
    import pytest

    allowed, nodeid = _may_use
    if not allowed:
        pytest.fail(f"{nodeid} uses the test Redis but is not marked needs_redis "
                    "(tests/conftest.py gives the marker; make test-fast leaves such tests "
                    "out)", pytrace=False)
    why = _ping(REDIS_URL)
    if why is not None:
        pytest.fail(_failure or (f"Redis at {REDIS_URL} is unreachable ({why}); a "
                                 "missing Redis fails the tests, it does not skip them. "
                                 f"Start one with: {START_COMMAND}"), pytrace=False)
    return None


async def delete_prefix(prefix: str) -> None:
    """Delete every key under ``prefix:``."""
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*", count=1000)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()
