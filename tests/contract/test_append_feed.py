"""The append feed of a single Redis (``rummy_store.feed``) against malformed messages on its
channel, published with real Redis ``PUBLISH``: the feed drops each malformed message and
keeps its connection (the same epoch: nothing known so far is distrusted), and the next
well-formed notification still reaches the listener.

Before the fix each of these dropped the feed's connection: ``"g1 ²"`` passes
``str.isdigit`` and then fails ``int()``, a 5,000-digit version exceeds ``int()``'s digit
limit, and bytes that are not UTF-8 failed the decoding of the connection's reply parser.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
import redis.asyncio as aioredis
from rummy_store import RedisEventStore
from rummy_store.feed import feed_channel

from tests.redis_helpers import REDIS_URL, redis_unreachable

pytestmark = [pytest.mark.asyncio, pytest.mark.redis, pytest.mark.timeout(60)]

MALFORMED: list[bytes] = [
    "g1 ²".encode(),                  # isdigit() but not int()
    b"g1 " + b"7" * 5000,             # past int()'s 4,300-digit limit
    b"g1 \xff\xfe",                   # not UTF-8
    b"\xff\xfe 3",                    # a game id that is not UTF-8
    b"g1 -3", b"g1 3 4", b"g1", b" 3", b"", b"g{1} 3",
    "g1 ３".encode(),                 # a full-width digit
]


async def _until(predicate, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def test_malformed_messages_are_dropped_and_the_connection_kept() -> None:
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    prefix = f"rummytest:{uuid.uuid4().hex}"
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
    publisher = aioredis.Redis.from_url(REDIS_URL)
    heard: list[tuple[str, int]] = []
    try:
        feed = store.append_feed(lambda game, version: heard.append((game, version)))
        assert feed is not None
        await _until(lambda: feed.live)
        assert feed.epoch == 1
        for message in MALFORMED:
            assert await publisher.publish(feed_channel(prefix), message) == 1
        await publisher.publish(feed_channel(prefix), b"g2 12")
        await _until(lambda: heard)
        await store.append("g3", [{"type": "Passed", "v": 1, "seat": 0}], 0)
        await _until(lambda: len(heard) == 2)
        assert heard == [("g2", 12), ("g3", 1)]
        assert feed.epoch == 1 and feed.live  # never resubscribed
        assert feed.notifications == 2
    finally:
        await store.close()
        await publisher.aclose()
