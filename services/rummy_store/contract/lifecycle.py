"""The contract: the ports one by one, :class:`~rummy_store.base.Lifecycle` and the append
feed of :class:`~rummy_store.base.Subscriptions`.

Each protocol of :mod:`rummy_store.base` has its tests: ``EventLog`` in ``appends``,
``RequestLog`` in ``requests`` (and ``put_if_absent`` in ``schedule``), ``Subscriptions`` in
``streams`` and here (``append_feed``), ``DueSchedule`` in ``schedule``, ``GameIndex`` in
``streams`` (index, meta) and ``schedule`` (expiry), ``SnapshotLog`` in ``snapshots``,
``Lifecycle`` here.
"""

from __future__ import annotations

import asyncio

import pytest

from rummy_store.base import (
    DueSchedule,
    EventLog,
    EventStore,
    GameIndex,
    Lifecycle,
    RequestLog,
    SnapshotLog,
    Subscriptions,
)
from rummy_store.contract._helpers import HANG_GUARD, StoreFactory, numbered, pytestmark

__all__ = [
    "pytestmark",
    "test_the_store_implements_each_port",
    "test_check_access_passes_for_the_stores_user",
    "test_idle_ttl_is_the_configured_expiry",
    "test_append_feed_hears_every_append_of_any_client_or_is_none",
    "test_close_releases_the_store",
]

PORTS = (EventLog, RequestLog, Subscriptions, DueSchedule, GameIndex, SnapshotLog, Lifecycle,
         EventStore)


@pytest.mark.parametrize("port", PORTS, ids=[p.__name__ for p in PORTS])
async def test_the_store_implements_each_port(store: EventStore, port: type) -> None:
    assert isinstance(store, port)


async def test_check_access_passes_for_the_stores_user(store: EventStore) -> None:
    await asyncio.wait_for(store.check_access(), timeout=HANG_GUARD)  # the tests' user may do all
    await store.append("g1", numbered(1), 0)  # and it wrote nothing the store then trips on
    assert await store.version("g1") == 1


async def test_now_is_the_clock_that_stamps_events(store: EventStore) -> None:
    before = await store.now()
    result = await store.append("g1", numbered(1), 0)
    after = await store.now()
    stamped = await store.read("g1")
    assert result.version == 1 and before - 0.001 <= stamped[0].ts <= after + 0.001


async def test_idle_ttl_is_the_configured_expiry(store: EventStore,
                                                 limited_store: EventStore) -> None:
    assert store.idle_ttl == 0.0
    assert limited_store.idle_ttl == pytest.approx(0.4)


async def test_append_feed_hears_every_append_of_any_client_or_is_none(
        store_factory: StoreFactory) -> None:
    listener_store, writer = store_factory(), store_factory()
    heard: list[tuple[str, int]] = []

    def listener(game_id: str, version: int) -> None:
        heard.append((game_id, version))

    feed = listener_store.append_feed(listener)
    if feed is None:  # a store without a feed: readers ask the store
        return
    try:
        async with asyncio.timeout(HANG_GUARD):
            while not feed.live:  # notifications start once the feed is subscribed
                await asyncio.sleep(0.02)
            await writer.append("fa", numbered(2), 0)
            await writer.append("fb", numbered(1), 0)
            await writer.append("fa", numbered(1, 3), 2)
            while len(heard) < 3:
                await asyncio.sleep(0.02)
        assert heard == [("fa", 2), ("fb", 1), ("fa", 3)]
        assert feed.epoch >= 1 and feed.live
    finally:
        feed.discard(listener)
        await listener_store.close()


async def test_close_releases_the_store(store_factory: StoreFactory) -> None:
    store = store_factory()
    await store.append("closing", numbered(1), 0)
    await store.close()
    again = store_factory()  # the data stays for the next client
    assert await again.version("closing") == 1
