"""What only the Redis store promises, beyond the contract suite: entry ids ``0-<version>``,
hash-tagged keys, no MAXLEN, Redis refusing a second write of a version, the Lua script as the
only append path, safety of a retry after a lost reply, RESP2 and RESP3 clients, sync helpers.
"""

from __future__ import annotations

import asyncio
import json

import pytest
import redis
import redis.asyncio as aioredis
from redis.crc import key_slot
from rummy_store import (
    MemoryEventStore,
    RedisEventStore,
    VersionConflict,
    append_sync,
    open_store,
    read_all_sync,
)
from rummy_store.redis_scripts import request_slot as _request_slot

pytestmark = [pytest.mark.redis, pytest.mark.timeout(60)]


def events(n: int, start: int = 1) -> list[dict]:
    return [{"type": "Knocked", "v": 1, "seat": 0, "points": p} for p in range(start, start + n)]


@pytest.mark.asyncio
async def test_entries_have_ids_zero_dash_version(redis_store: RedisEventStore) -> None:
    await redis_store.append("g1", events(3), 0)
    await redis_store.append("g1", events(2, 4), 3)
    raw = await redis_store.client.xrange(redis_store.key("g1", "events"))
    assert [entry_id for entry_id, _ in raw] == ["0-1", "0-2", "0-3", "0-4", "0-5"]
    # two fields per entry, the record as a compact array by position
    # (rummy_store.codec), the time in integer ms
    assert set(raw[0][1]) == {"data", "t"}
    assert raw[0][1]["data"] == '["Knocked",1,0,1]'
    assert json.loads(raw[4][1]["data"]) == ["Knocked", 1, 0, 5]
    assert raw[0][1]["t"].isdigit() and len(raw[0][1]["t"]) == 13


@pytest.mark.asyncio
async def test_entries_of_the_earlier_format_still_read(redis_store: RedisEventStore) -> None:
    # entries of the older format: type, data and ts (seconds) fields; request records in JSON
    key = redis_store.key("old", "events")
    for v, event in enumerate(events(2), start=1):
        await redis_store.client.xadd(key, {"type": event["type"], "data": json.dumps(event),
                                            "ts": "1700000000.250000"}, id=f"0-{v}")
    await redis_store.client.hset(redis_store.key("old", "requests"), "r1", json.dumps(
        {"hash": "h", "first": 1, "last": 2, "response": {"seat": 0}}))
    read = await redis_store.read("old")
    assert [(e.version, e.type, e.ts) for e in read] == [
        (1, events(2)[0]["type"], 1700000000.25), (2, events(2)[1]["type"], 1700000000.25)]
    again = await redis_store.append("old", events(1, 3), 2, request_id="r1", request_hash="h")
    assert again.duplicate and again.version == 2 and again.response == {"seat": 0}
    new = await redis_store.append("old", events(1, 3), 2, request_id="r2", request_hash="h")
    assert [e.version for e in await redis_store.read("old")] == [1, 2, 3]
    assert new.events[0].ts == (await redis_store.read("old", 2))[0].ts


@pytest.mark.asyncio
async def test_all_keys_of_a_game_share_one_cluster_slot(redis_store: RedisEventStore) -> None:
    await redis_store.append("g1", events(1), 0, request_id="r")
    await redis_store.put_meta("g1", {"a": 1})
    await redis_store.put_snapshot("g1", 1, {"s": 1})
    keys = [redis_store.key("g1", kind) for kind in ("events", "meta", "snapshots")]
    keys += await redis_store.client.keys(f"{redis_store.prefix}:{{g1}}:requests:*")
    assert keys[0] == f"{redis_store.prefix}:{{g1}}:events"
    assert keys[2] == f"{redis_store.prefix}:{{g1}}:snapshots"
    assert len({key_slot(k.encode()) for k in keys}) == 1
    assert await redis_store.client.exists(*keys) == 4


@pytest.mark.asyncio
async def test_redis_itself_refuses_a_second_write_of_a_version(
    redis_store: RedisEventStore,
) -> None:
    await redis_store.append("g1", events(2), 0)
    with pytest.raises(redis.ResponseError, match="equal or smaller"):
        await redis_store.client.xadd(redis_store.key("g1", "events"), {"x": "y"}, id="0-2")


@pytest.mark.asyncio
async def test_streams_have_no_maxlen_and_reads_page_through_long_games(
    redis_store: RedisEventStore,
) -> None:
    n = 2500  # more than one XRANGE page
    for start in range(0, n, 500):
        await redis_store.append("long", events(500, start + 1), start)
    assert await redis_store.client.xlen(redis_store.key("long", "events")) == n
    stored = await redis_store.read("long")
    assert [e.version for e in stored] == list(range(1, n + 1))
    assert [e.version for e in await redis_store.read("long", 999, 2001)] == list(range(1000, 2002))
    sub = redis_store.subscribe("long", after_version=10, block_ms=50)
    try:
        got = [await asyncio.wait_for(anext(sub), 5) for _ in range(n - 10)]
        assert [e.version for e in got] == list(range(11, n + 1))
    finally:
        await sub.aclose()


@pytest.mark.asyncio
async def test_event_times_come_from_the_redis_clock(redis_store: RedisEventStore) -> None:
    seconds, micros = await redis_store.client.time()
    result = await redis_store.append("g1", events(2), 0)
    assert result.events[0].ts == result.events[1].ts
    # stored in whole milliseconds: at most 1 ms before the clock read before it
    assert seconds + micros / 1e6 - 0.001 <= result.events[0].ts < seconds + 5
    assert (await redis_store.read("g1"))[0].ts == result.events[0].ts


@pytest.mark.asyncio
async def test_a_retry_after_a_lost_reply_returns_the_original_result(
    redis_store: RedisEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The script runs on the server but the reply is lost (a timeout): the caller cannot know
    # whether it was applied, and retries with the same request id.
    real = redis_store._run_append

    async def applied_then_timed_out(*args, **kwargs):
        await real(*args, **kwargs)
        raise redis.TimeoutError("reply lost")

    monkeypatch.setattr(redis_store, "_run_append", applied_then_timed_out)
    with pytest.raises(redis.TimeoutError):
        await redis_store.append("g1", events(2), 0, request_id="r", response={"ok": 1})
    monkeypatch.setattr(redis_store, "_run_append", real)
    retry = await redis_store.append("g1", events(2), 0, request_id="r", response={"ok": 1})
    assert retry.duplicate and retry.version == 2 and retry.response == {"ok": 1}
    assert [e.data for e in retry.events] == events(2)
    assert await redis_store.version("g1") == 2
    # without a request id the same retry is a conflict, never a double append
    with pytest.raises(VersionConflict):
        await redis_store.append("g1", events(2), 0)
    assert await redis_store.version("g1") == 2


@pytest.mark.asyncio
async def test_appends_go_through_the_lua_script_only(
    redis_store: RedisEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real_execute = redis_store.client.execute_command

    async def spy(*args, **kwargs):
        calls.append(str(args[0]).upper())
        return await real_execute(*args, **kwargs)

    monkeypatch.setattr(redis_store.client, "execute_command", spy)
    batch = redis_store._batch  # the group commit writes to a connection of its own
    if batch is not None:
        real_round_trip = batch._round_trip

        async def spy_round_trip(commands):
            calls.extend(str(c[0]).upper() for c in commands)
            return await real_round_trip(commands)

        monkeypatch.setattr(batch, "_round_trip", spy_round_trip)
    await redis_store.append("g1", events(1), 0)  # first append also registers the game
    calls.clear()
    await redis_store.append("g1", events(3, 2), 1, request_id="r")
    assert calls in (["EVALSHA"], ["EVALSHA", "SCRIPT LOAD", "EVALSHA"], ["EVALSHA", "EVAL"])


@pytest.mark.asyncio
async def test_a_foreign_entry_in_the_stream_stops_appends(redis_store: RedisEventStore) -> None:
    await redis_store.client.xadd(redis_store.key("g1", "events"), {"x": "y"}, id="5-1")
    with pytest.raises(redis.ResponseError, match="foreign entry id"):
        await redis_store.append("g1", events(1), 0)


@pytest.mark.asyncio
@pytest.mark.parametrize("protocol", [2, 3])
async def test_subscribe_works_with_resp2_and_resp3_clients(
    protocol: int, redis_url: str, redis_prefix: str
) -> None:
    prefix = redis_prefix
    store = RedisEventStore.from_url(redis_url, prefix=prefix, protocol=protocol)
    raw = RedisEventStore(
        aioredis.Redis.from_url(redis_url, protocol=protocol), prefix=prefix, owns_client=True
    )  # bytes replies (no decode_responses)
    try:
        for game, s in (("text", store), ("bytes", raw)):
            await store.append(game, events(2), 0)
            sub = s.subscribe(game, block_ms=50)
            assert [(await anext(sub)).version for _ in range(2)] == [1, 2]
            pending = asyncio.ensure_future(anext(sub))
            await asyncio.sleep(0.1)
            await store.append(game, events(1, 3), 2)
            assert (await asyncio.wait_for(pending, 5)).version == 3
            await sub.aclose()
        assert await raw.list_games() == ["bytes", "text"]
        assert await raw.get_meta("text") is None
        assert [e.data for e in await raw.read("text")] == events(3)
    finally:
        await store.close()
        await raw.close()


def test_sync_helpers_append_and_read(redis_url: str, redis_prefix: str) -> None:
    url, prefix = redis_url, redis_prefix
    result = append_sync(url, "g1", events(3), 0, request_id="r", prefix=prefix)
    assert result.version == 3 and not result.duplicate
    assert append_sync(url, "g1", events(3), 0, request_id="r", prefix=prefix).duplicate
    assert [e.version for e in read_all_sync(url, "g1", prefix=prefix)] == [1, 2, 3]
    middle = read_all_sync(url, "g1", after_version=1, to_version=2, prefix=prefix)
    assert [e.version for e in middle] == [2]
    assert read_all_sync(url, "unknown", prefix=prefix) == []


def test_open_store_chooses_by_url(redis_url: str) -> None:
    assert isinstance(open_store("memory"), MemoryEventStore)
    assert isinstance(open_store(None), MemoryEventStore)
    store = open_store(redis_url, prefix="rummytest:x")
    assert isinstance(store, RedisEventStore) and store.prefix == "rummytest:x"
    asyncio.run(store.close())
    with pytest.raises(ValueError, match="unknown event store url"):
        open_store("postgres://x")


@pytest.mark.asyncio
async def test_the_pool_size_is_set_explicitly(redis_url: str) -> None:
    # redis-py's default pool changed (unbounded in 5.x, 100 in 8.x); the store
    # sets its own, so the service does not depend on the installed release
    from rummy_store.redis_store import MAX_CONNECTIONS

    for kwargs, expected in (({}, MAX_CONNECTIONS), ({"max_connections": 7}, 7)):
        store = RedisEventStore.from_url(redis_url, prefix="pool-size", **kwargs)
        try:
            assert store.client.connection_pool.max_connections == expected
        finally:
            await store.close()


@pytest.mark.asyncio
async def test_request_records_are_spread_over_eight_compact_hashes(
    redis_store: RedisEventStore,
) -> None:
    # compact storage: one hash of every record turned into a hash table past
    # hash-max-listpack-entries fields (twice the memory per record); eight buckets stay
    # listpacks 8 times longer
    n = 600
    for v in range(n):
        await redis_store.append("g", events(1, v + 1), v, request_id=f"req-{v}",
                                 request_hash="h")
    client = redis_store.client
    buckets = sorted(await client.keys(f"{redis_store.prefix}:{{g}}:requests:*"))
    assert [b.rsplit(":", 1)[1] for b in buckets] == list("01234567")
    assert sum([await client.hlen(b) for b in buckets]) == n
    assert {await client.object("encoding", b) for b in buckets} == {"listpack"}
    assert not await client.exists(redis_store.key("g", "requests"))
    # every record still answers: a retry is the original append, a reuse is refused
    for v in (0, 299, n - 1):
        again = await redis_store.append("g", events(1, 999), n, request_id=f"req-{v}",
                                         request_hash="h")
        assert again.duplicate and again.version == v + 1
        assert [e.data["points"] for e in again.events] == [v + 1]
        found = await redis_store.get_request("g", f"req-{v}", "h")
        assert found is not None and found.version == v + 1
    with pytest.raises(Exception, match="req-7"):
        await redis_store.append("g", events(1), n, request_id="req-7", request_hash="other")
    assert await redis_store.version("g") == n


@pytest.mark.asyncio
async def test_finishing_a_game_gives_every_request_bucket_the_window(
    redis_store: RedisEventStore,
) -> None:
    store = RedisEventStore(redis_store.client, prefix=redis_store.prefix, idle_ttl=3600,
                            request_ttl=60)
    for v in range(40):
        await store.append("f", events(1, v + 1), v, request_id=f"r{v}", request_hash="h")
    buckets = await store.client.keys(f"{store.prefix}:{{f}}:requests:*")
    assert len(buckets) == 8
    ttls = [await store.client.pttl(b) for b in buckets]
    assert all(3500_000 < t <= 3600_000 for t in ttls), ttls
    await store.set_active("f", False)
    ttls = [await store.client.pttl(b) for b in buckets]
    assert all(0 < t <= 60_000 for t in ttls), ttls
    assert await store.client.pttl(store.key("f", "events")) == -1


@pytest.mark.asyncio
async def test_every_append_renews_every_request_bucket_of_an_active_game(
    redis_store: RedisEventStore,
) -> None:
    # found by an attack on the request-record buckets: only the bucket written was renewed, so a
    # record in a bucket not written for the idle expiry vanished while the game went on,
    # and a retry of its command was applied a second time
    store = RedisEventStore(redis_store.client, prefix=redis_store.prefix, idle_ttl=1.5,
                            request_ttl=1)
    first = await store.append("t", events(1), 0, request_id="client:A", request_hash="h")
    assert first.version == 1
    others = [f"other-{i}" for i in range(200)]
    bucket_a = _request_slot("client:A")[0]
    others = [r for r in others if _request_slot(r)[0] != bucket_a][:6]
    for v, rid in enumerate(others, start=1):  # 3 s of appends, none in A's bucket
        await asyncio.sleep(0.5)
        await store.append("t", events(1, v + 1), v, request_id=rid, request_hash="h")
    retry = await store.append("t", events(1, 99), 7, request_id="client:A", request_hash="h")
    assert retry.duplicate and retry.version == 1
    assert await store.version("t") == 7
    ttls = [await store.client.pttl(store.key("t", f"requests:{c}")) for c in "01234567"]
    assert all(t == -2 or 1000 < t <= 1500 for t in ttls), ttls  # absent, or renewed
