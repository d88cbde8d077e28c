"""Fixtures of the Redis Cluster tests: one local 3-master cluster per session
(``tests/redis_cluster.py``: three ``redis-server --cluster-enabled yes`` processes on free
ports, joined by ``redis-cli --cluster create``), and the contract suite's fixtures over it.

Every store gets a key prefix of its own; the cluster is thrown away at the end of the
session, keys and all. Skipped, with the reason, when ``redis-server`` or ``redis-cli`` is
missing (they are not needed for anything else).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
import pytest_asyncio
from rummy_store import EventStore, RedisEventStore

from tests.redis_cluster import cluster_unavailable, local_cluster

StoreFactory = Callable[[], EventStore]


@pytest.fixture(scope="session")
def cluster_url() -> Iterator[str]:
    """The ``redis+cluster://`` URL of a local 3-master cluster, up for the session."""
    reason = cluster_unavailable()
    if reason:
        pytest.skip(reason)
    with local_cluster(3) as url:
        yield url


@pytest_asyncio.fixture
async def store_factory(cluster_url: str) -> AsyncIterator[StoreFactory]:
    """Stores on the cluster under one fresh prefix: each call opens a new cluster client
    (like another server process)."""
    prefix = f"rummytest:{uuid.uuid4().hex}"
    opened: list[RedisEventStore] = []

    def make() -> EventStore:
        store = RedisEventStore.from_url(cluster_url, prefix=prefix)
        opened.append(store)
        return store

    try:
        yield make
    finally:
        for store in opened:
            await store.close()


@pytest_asyncio.fixture
async def store(store_factory: StoreFactory) -> EventStore:
    """One cluster store."""
    return store_factory()


@pytest_asyncio.fixture
async def limited_store(cluster_url: str) -> AsyncIterator[EventStore]:
    """A cluster store with an idle expiry and a request window of 0.4 s."""
    store = RedisEventStore.from_url(cluster_url, prefix=f"rummytest:{uuid.uuid4().hex}",
                                     idle_ttl=0.4, request_ttl=0.4)
    try:
        yield store
    finally:
        await store.close()
