"""The Redis store's one stream reader (``rummy_store.fanout.StreamHub``): one
blocking connection for all subscribers, wake-up of new games, slow consumers, Redis errors,
shutdown. The contract suite covers order, gaps and cancellation on both stores."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
import redis.exceptions
from rummy_store import RedisEventStore

from tests.chaos_helpers import RewindableRedis, store_on_rewindable_redis
from tests.harness import HANG_GUARD

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.timeout(60)]


def events(n: int, start: int = 1) -> list[dict]:
    return [{"type": "Knocked", "v": 1, "seat": 0, "points": p} for p in range(start, start + n)]


async def xread_clients(url: str, names: set[str]) -> list[dict]:
    """``CLIENT LIST`` entries named one of ``names`` whose last command was XREAD."""
    admin = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        return [c for c in await admin.client_list()
                if c.get("name") in names and c.get("cmd") == "xread"]
    finally:
        await admin.aclose()


async def until(predicate, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while not predicate() and time.monotonic() < end:
        await asyncio.sleep(0.01)
    return predicate()


async def test_one_blocking_connection_for_many_subscribers_of_many_games(
    redis_url: str, redis_prefix: str
) -> None:
    name = f"pool-{uuid.uuid4().hex[:8]}"
    store = RedisEventStore.from_url(redis_url, prefix=redis_prefix, client_name=name)
    subs = [store.subscribe(f"g{i % 20}") for i in range(100)]
    try:
        pending = [asyncio.ensure_future(anext(s)) for s in subs]
        assert await until(lambda: store.subscriber_count() == 100)
        assert store.hub.stream_count() == 20
        await asyncio.sleep(0.6)  # several blocking rounds
        blocked = await xread_clients(redis_url, {name, f"rummy-hub:{redis_prefix}"})
        assert len(blocked) == 1 and blocked[0]["name"] == f"rummy-hub:{redis_prefix}"
        for i in range(20):
            await store.append(f"g{i}", events(1), 0)
        got = await asyncio.wait_for(asyncio.gather(*pending), 10)
        assert [e.version for e in got] == [1] * 100
    finally:
        for s in subs:
            await s.aclose()
        await store.close()
    assert store.subscriber_count() == 0 and not store.hub.running


async def test_a_new_game_joins_the_blocked_read_at_once(redis_url: str,
                                                          redis_prefix: str) -> None:
    # the hub blocks for up to 600 s on game "a"; a subscriber of "b" wakes it (CLIENT
    # UNBLOCK). Each first event must arrive long before the block ends (the 60 s wait is a
    # hang guard: only a hub that was not woken takes anywhere near 600 s)
    store = RedisEventStore(aioredis.Redis.from_url(redis_url, decode_responses=True),
                            prefix=redis_prefix, owns_client=True, hub_block_ms=600_000)
    first = store.subscribe("a")
    try:
        waiting = asyncio.ensure_future(anext(first))
        await asyncio.sleep(0.3)  # the hub is now blocked on "a" alone
        latencies = []
        for k in range(5):
            sub = store.subscribe(f"b{k}")
            nxt = asyncio.ensure_future(anext(sub))
            assert await until(lambda: store.hub.stream_count() == 2)
            t0 = time.perf_counter()
            await store.append(f"b{k}", events(1), 0)
            assert (await asyncio.wait_for(nxt, 60)).version == 1
            latencies.append(time.perf_counter() - t0)
            await sub.aclose()
            await store.append(f"b{k}", events(1, 2), 1)  # read by nobody now
        latencies.sort()
        print(f"\nfirst live event of a new game: median {latencies[2] * 1000:.1f} ms, "
              f"max {latencies[-1] * 1000:.1f} ms (hub block 600,000 ms)")
        assert not waiting.done()
    finally:
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        await first.aclose()
        await store.close()


async def test_a_slow_consumer_still_gets_every_event_in_order(redis_url: str,
                                                               redis_prefix: str) -> None:
    store = RedisEventStore(aioredis.Redis.from_url(redis_url, decode_responses=True),
                            prefix=redis_prefix, owns_client=True, queue_size=4)
    sub = store.subscribe("g")
    try:
        nxt = asyncio.ensure_future(anext(sub))
        assert await until(lambda: store.subscriber_count() == 1)
        version = 0
        for _ in range(30):  # 60 events while the consumer does not read: its queue overflows
            version = (await store.append("g", events(2, version + 1), version)).version
        await asyncio.sleep(0.3)
        got = [await asyncio.wait_for(nxt, 5)]
        got += [await asyncio.wait_for(anext(sub), 5) for _ in range(59)]
        assert [e.version for e in got] == list(range(1, 61))
        await store.append("g", events(1, 61), 60)
        assert (await asyncio.wait_for(anext(sub), 5)).version == 61
    finally:
        await sub.aclose()
        await store.close()


async def test_the_hub_survives_losing_its_connection(redis_url: str, redis_prefix: str) -> None:
    store = RedisEventStore.from_url(redis_url, prefix=redis_prefix)
    sub = store.subscribe("g")
    admin = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        nxt = asyncio.ensure_future(anext(sub))
        assert await until(lambda: store.hub.running and store.subscriber_count() == 1)
        await asyncio.sleep(0.3)
        for _ in range(2):
            hub = [c for c in await admin.client_list()
                   if c.get("name") == f"rummy-hub:{redis_prefix}"]
            assert hub, "no hub connection"
            await admin.client_kill_filter(_id=hub[0]["id"])
            await asyncio.sleep(0.2)
        await store.append("g", events(1), 0)
        assert (await asyncio.wait_for(nxt, 10)).version == 1
        assert store.hub.running
    finally:
        await admin.aclose()
        await sub.aclose()
        await store.close()


async def test_close_stops_the_hub_and_its_connection(redis_url: str, redis_prefix: str) -> None:
    store = RedisEventStore.from_url(redis_url, prefix=redis_prefix)
    task = asyncio.ensure_future(anext(store.subscribe("g")))
    assert await until(lambda: store.hub.running)
    await asyncio.sleep(0.1)
    await asyncio.wait_for(store.close(), HANG_GUARD)  # a hang guard: close must return
    assert not store.hub.running
    admin = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert await until(lambda: True)
        await asyncio.sleep(0.1)
        assert not [c for c in await admin.client_list()
                    if c.get("name") == f"rummy-hub:{redis_prefix}"]
    finally:
        await admin.aclose()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


# ------------------------------------------------------------ a stream that went back in time

async def _five_delivered_three_saved(store: RedisEventStore, redis_server: RewindableRedis,
                                      sub: Any) -> None:
    """Append 3 events, save the Redis data (``redis_server.save``), append 2 more and let
    ``sub`` deliver all 5."""
    await store.append("g", events(3), 0)
    redis_server.save()
    await store.append("g", events(2, 4), 3)
    assert [(await asyncio.wait_for(anext(sub), 5)).version
            for _ in range(5)] == [1, 2, 3, 4, 5]


async def _append_when_back(store: RedisEventStore, n: int) -> None:
    """Another history after the rewind: ``n`` events at version 3 (the first tries may
    meet the restart)."""
    for _ in range(50):
        with contextlib.suppress(redis.exceptions.ConnectionError):
            await store.append("g", events(n, 100), 3)
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the restarted Redis did not take the append")


@pytest.mark.parametrize("appended_after", [1, 4])
async def test_a_live_subscription_ends_with_stream_rewound_when_the_store_went_back(
        tmp_path: Path, appended_after: int) -> None:
    # found by an attack: after a Redis restarted from an older file,
    # a live stream skipped every re-appended version at or below what it had delivered
    # and went on from there, mixing the lost history with the new one, silently.
    # appended_after=4: the new history already went past what the stream had delivered
    # when the hub reconnected (found by the event's ts at that version, not its absence)
    from rummy_store import StreamRewound
    async with store_on_rewindable_redis(tmp_path, "rw") as (redis_server, store):
        sub = store.subscribe("g")
        try:
            await _five_delivered_three_saved(store, redis_server, sub)
            nxt = asyncio.ensure_future(anext(sub))  # waiting on the hub
            await asyncio.sleep(0.1)
            redis_server.rewind()  # the store is back at version 3
            await _append_when_back(store, appended_after)
            with pytest.raises(StreamRewound) as err:
                await asyncio.wait_for(nxt, 15)
            assert err.value.delivered == 5
            assert err.value.actual in (3, 3 + appended_after)  # found before/after it
            assert "went back to version" in str(err.value)
            # a new subscription reads the store's history as it is now
            fresh = store.subscribe("g", 3)
            try:
                again = [await asyncio.wait_for(anext(fresh), 5)
                         for _ in range(appended_after)]
                assert [e.data["points"] for e in again] == list(
                    range(100, 100 + appended_after))
            finally:
                await fresh.aclose()
        finally:
            await sub.aclose()


async def test_a_subscription_that_registers_after_the_rewind_is_told_too(
        tmp_path: Path) -> None:
    # the same fault met by a subscription still delivering its catch-up when the store
    # went back: it registers with the hub past the store's version, and is told at once
    from rummy_store import StreamRewound
    async with store_on_rewindable_redis(tmp_path, "rw") as (redis_server, store):
        sub = store.subscribe("g")
        try:
            # the 5 come from the catch-up: the subscription is not registered yet
            await _five_delivered_three_saved(store, redis_server, sub)
            redis_server.rewind()
            await _append_when_back(store, 1)
            with pytest.raises(StreamRewound) as err:
                await asyncio.wait_for(anext(sub), 15)
            assert (err.value.delivered, err.value.actual) == (5, 4)
        finally:
            await sub.aclose()


async def test_after_a_redis_restart_one_failed_call_clears_the_dead_pool(
        tmp_path: Path) -> None:
    # found by an attack: 5 s after Redis restarted, 12 of 30 parallel CreateGame calls
    # still failed with UNAVAILABLE, one for each pooled connection that had died with the
    # old Redis (redis-py's pool does not notice, and the store's clients do not retry)
    async with store_on_rewindable_redis(tmp_path, "rs") as (redis_server, store):
        await asyncio.gather(*(store.append(f"g{i}", events(1), 0) for i in range(20)))
        idle = len(store.client.connection_pool._available_connections)
        assert idle >= 2  # the parallel appends left several pooled connections
        redis_server.save()
        redis_server.rewind()  # a restart on the same data
        # what the health watcher or the due-games poll does first after the restart
        with contextlib.suppress(redis.exceptions.ConnectionError):
            await store.ping()
        done = await asyncio.gather(
            *(store.append(f"g{i}", events(1, 2), 1) for i in range(20)),
            return_exceptions=True)
        assert [d for d in done if isinstance(d, Exception)] == []
        assert [d.version for d in done] == [2] * 20


async def test_a_burst_of_new_subscriptions_stays_inside_a_small_pool(
    redis_url: str, redis_prefix: str
) -> None:
    # Every read a subscription makes before it waits on the hub (the catch-up XRANGE and
    # the check that what it delivered is still in the stream, rummy_store.fanout.holds)
    # shares the catch-up bound: a burst of 300 new streams on a pool of 40 connections
    # (the bound is 32) must neither fail with MaxConnectionsError nor starve other calls.
    store = RedisEventStore.from_url(redis_url, prefix=redis_prefix, max_connections=40)
    try:
        await store.append("burst", events(3), 0)
        delivered = [0] * 300
        failures: list[BaseException] = []

        async def follow(i: int) -> None:
            try:
                async for event in store.subscribe("burst"):
                    delivered[i] = event.version
            except Exception as exc:  # noqa: BLE001 - every failure is what we count
                failures.append(exc)

        tasks = [asyncio.create_task(follow(i)) for i in range(300)]
        try:
            assert await until(lambda: store.subscriber_count() == 300 or bool(failures),
                               timeout=20), store.subscriber_count()
            assert failures == []
            assert delivered == [3] * 300
            assert len(store.client.connection_pool._in_use_connections) <= 40
            await store.append("burst", events(1, 4), 3)  # the hub delivers to all 300
            assert await until(lambda: delivered == [4] * 300, timeout=HANG_GUARD)
            assert failures == []
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await store.close()


async def test_own_appends_reach_subscribers_without_the_read_and_others_still_do(
        redis_url: str, redis_prefix: str) -> None:
    """This store's appends are queued by the append itself (``StreamHub.append_done``), in
    order and once each; another store's appends to the same game (another server) still
    arrive through the hub's read, and an own append that follows one not read yet waits
    for the read rather than jumping the gap."""
    mine = RedisEventStore.from_url(redis_url, prefix=redis_prefix)
    other = RedisEventStore.from_url(redis_url, prefix=redis_prefix)
    sub = mine.subscribe("g")
    try:
        first = asyncio.ensure_future(anext(sub))
        assert await until(lambda: mine.subscriber_count() == 1)
        await mine.append("g", events(2), 0)
        assert (await asyncio.wait_for(first, 5)).version == 1
        assert mine.hub.local == 2  # both queued by the append, none by the read
        assert (await asyncio.wait_for(anext(sub), 5)).version == 2
        await other.append("g", events(1, 3), 2)  # another server's append: the read
        await mine.append("g", events(1, 4), 3)  # follows an event not read yet here
        got = [(await asyncio.wait_for(anext(sub), 5)) for _ in range(2)]
        assert [e.version for e in got] == [3, 4]
        assert [e.data["points"] for e in got] == [3, 4]
        reads, local = mine.hub.reads, mine.hub.local
        for v in range(4, 24):  # a busy spell of own appends: paced reads, no event lost
            await mine.append("g", events(1, v + 1), v)
        got = [(await asyncio.wait_for(anext(sub), 5)).version for _ in range(20)]
        assert got == list(range(5, 25))
        assert mine.hub.local - local == 20 and mine.hub.reads - reads < 20
    finally:
        await sub.aclose()
        await mine.close()
        await other.close()


async def test_a_read_leaves_a_key_to_an_append_in_flight_once() -> None:
    """``StreamHub._dispatch`` while an append of this process is in flight on a key: the
    first read leaves the key's entries to the append, the next one delivers them (appends
    that overlap without end do not starve another server's events), and the append's own
    delivery then finds them delivered; a failed append wakes the read it held back."""
    from rummy_store.base import StoredEvent
    from rummy_store.fanout import StreamHub

    def decode(entry: Any) -> StoredEvent:
        version = int(entry[0].split("-")[1])
        return StoredEvent(version=version, type="Knocked", data={"v": version}, ts=1.0)

    hub = StreamHub(aioredis.Redis(), decode)
    sub = hub.register("k", 0)
    if hub._task is not None:  # no Redis here: the reader is not needed
        hub._task.cancel()
    reply = [["k", [("0-1", {}), ("0-2", {})]]]
    hub.appending("k")
    assert hub._dispatch(reply) == 0 and sub.queue.empty()  # left to the append
    assert hub._dispatch(reply) == 2  # held once only: the second read delivers
    hub.append_done("k", [decode(("0-1", {})), decode(("0-2", {}))])
    assert hub.local == 0 and [sub.queue.get_nowait().version for _ in range(2)] == [1, 2]
    hub.appending("k")
    assert hub._dispatch([["k", [("0-3", {})]]]) == 0
    hub._changed.clear()
    hub.append_done("k", [])  # the append failed: the held read is asked for at once
    assert hub._changed.is_set() and sub.queue.empty()
    hub.appending("k")
    hub.append_done("k", [decode(("0-3", {}))])  # an own append that follows the cursor
    assert hub.local == 1 and sub.queue.get_nowait().version == 3
    await hub.close()
