"""Fixtures of the event-store contract suite: one ``store`` per implementation.

The Redis stores use the real Redis at ``RUMMY_TEST_REDIS_URL`` (default
``redis://127.0.0.1:6379/0``) under a key prefix unique to each test, deleted afterwards.
Redis-backed tests are skipped, with the reason, only if that Redis does not answer PING.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis
from rummy_store import EventStore, MemoryEventStore, RedisEventStore

from tests.private_redis import PrivateRedis, private_redis, tls_supported
from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable

StoreFactory = Callable[[], EventStore]


@pytest_asyncio.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def store_factory(request: pytest.FixtureRequest) -> AsyncIterator[StoreFactory]:
    """A function returning stores on ONE backend: for Redis, each call opens a new client
    (like another server process); for memory, it returns the same store."""
    if request.param == "memory":
        shared = MemoryEventStore()
        yield lambda: shared
        await shared.close()
        return
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    prefix = f"rummytest:{uuid.uuid4().hex}"
    opened: list[RedisEventStore] = []

    def make() -> EventStore:
        store = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
        opened.append(store)
        return store

    try:
        yield make
    finally:
        for store in opened:
            await store.close()
        await delete_prefix(prefix)


@pytest_asyncio.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def limited_store(request: pytest.FixtureRequest) -> AsyncIterator[EventStore]:
    """A store of each implementation with an idle expiry and a request window of 0.4 s."""
    if request.param == "memory":
        yield MemoryEventStore(idle_ttl=0.4, request_ttl=0.4)
        return
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    prefix = f"rummytest:{uuid.uuid4().hex}"
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix, idle_ttl=0.4, request_ttl=0.4)
    try:
        yield store
    finally:
        await store.close()
        await delete_prefix(prefix)


@pytest_asyncio.fixture
async def store(store_factory: StoreFactory) -> EventStore:
    """One store of each implementation."""
    return store_factory()


@pytest.fixture
def redis_url() -> str:
    """The test Redis URL; skips the test if that Redis is unreachable."""
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    return REDIS_URL


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix unique to the test; every key under it is deleted afterwards."""
    prefix = f"rummytest:{uuid.uuid4().hex}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest_asyncio.fixture
async def redis_store(redis_url: str, redis_prefix: str) -> AsyncIterator[RedisEventStore]:
    """A Redis store under a fresh prefix (for Redis-only checks: ids, keys, Lua)."""
    store = RedisEventStore.from_url(redis_url, prefix=redis_prefix)
    try:
        yield store
    finally:
        await store.close()


# --------------------------------------------------------------------------- secured Redis

@pytest.fixture(scope="module", params=["acl", "tls"])
def secured(request: pytest.FixtureRequest,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedis]:
    """A private ``redis-server`` (free port) with the default user off and an ACL user with
    a password; ``tls``: TLS only, with a throwaway CA (skipped if the build lacks TLS)."""
    tls = request.param == "tls"
    reason = tls_supported()
    if reason and (tls or reason == "redis-server is not installed"):
        pytest.skip(reason)
    with private_redis(tmp_path_factory.mktemp(f"redis-{request.param}"), tls=tls) as server:
        yield server


@pytest.fixture(scope="module")
def password_file(secured: PrivateRedis, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The password in a file, as a mounted secret holds it (with ``echo``'s newline)."""
    path = tmp_path_factory.mktemp("secret") / "redis_password"
    path.write_text(secured.password + "\n", encoding="utf-8")
    return path
