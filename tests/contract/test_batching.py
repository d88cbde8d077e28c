"""One Redis round trip for the commands that queue behind one in flight
(rummy_store.batching): results and errors reach their own callers, cancellation
and a lost script are handled, and the store's appends and reads share round trips under
load."""

from __future__ import annotations

import asyncio

import pytest
import redis
import redis.asyncio as aioredis
from rummy_store import RedisEventStore, VersionConflict
from rummy_store.batching import CommandBatcher

pytestmark = [pytest.mark.redis, pytest.mark.timeout(60)]


def events(n: int, start: int = 1) -> list[dict]:
    return [{"type": "Knocked", "v": 1, "seat": 0, "points": p} for p in range(start, start + n)]


@pytest.mark.asyncio
async def test_commands_issued_together_share_a_round_trip_and_keep_their_own_replies(
    redis_store: RedisEventStore,
) -> None:
    client = redis_store.client
    key = f"{redis_store.prefix}:batch"
    await client.set(f"{key}:s", "a string")
    batcher = CommandBatcher(client)
    replies = await asyncio.gather(
        *(batcher.call("INCR", f"{key}:n") for _ in range(20)),
        batcher.call("XRANGE", f"{key}:s", "-", "+"),  # WRONGTYPE: this caller's error only
        batcher.call("GET", f"{key}:s"),
        return_exceptions=True)
    assert sorted(replies[:20]) == list(range(1, 21))
    assert isinstance(replies[20], redis.ResponseError) and "WRONGTYPE" in str(replies[20])
    assert replies[21] == "a string"
    # the first went at once, alone; the 21 that queued behind it shared one round trip
    assert (batcher.batches, batcher.commands) == (2, 22)
    await batcher.close()


@pytest.mark.asyncio
async def test_a_cancelled_caller_leaves_the_others_of_its_batch_alone(
    redis_store: RedisEventStore,
) -> None:
    batcher = CommandBatcher(redis_store.client)
    key = f"{redis_store.prefix}:cancel"
    calls = [asyncio.ensure_future(batcher.call("INCR", key)) for _ in range(5)]
    calls[2].cancel()
    done = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(done[2], asyncio.CancelledError)
    assert sorted(d for i, d in enumerate(done) if i != 2) == [1, 2, 3, 4]
    assert await redis_store.client.get(key) == "4"  # the cancelled one was never sent


@pytest.mark.asyncio
async def test_a_lost_round_trip_fails_every_caller_of_its_batch() -> None:
    client = aioredis.Redis(host="127.0.0.1", port=1, decode_responses=True)  # nobody there
    batcher = CommandBatcher(client)
    done = await asyncio.gather(*(batcher.call("PING") for _ in range(3)),
                                return_exceptions=True)
    assert all(isinstance(d, redis.ConnectionError) for d in done), done
    await client.aclose()


@pytest.mark.asyncio
async def test_concurrent_appends_and_reads_of_many_games_are_batched(
    redis_store: RedisEventStore,
) -> None:
    games = [f"g{i}" for i in range(50)]
    await asyncio.gather(*(redis_store.append(g, events(2), 0, request_id=f"{g}-1",
                                              request_hash="h") for g in games))
    batcher = redis_store._batch
    assert batcher is not None and batcher.commands >= 50
    assert batcher.batches <= 5  # 50 appends issued together: a handful of round trips
    results = await asyncio.gather(
        *(redis_store.append(g, events(1, 3), 2 if i % 2 else 1, request_id=f"{g}-2",
                             request_hash="h") for i, g in enumerate(games)),
        return_exceptions=True)
    for i, r in enumerate(results):  # each caller gets its own outcome
        assert (r.version == 3) if i % 2 else isinstance(r, VersionConflict), (i, r)
    reads = await asyncio.gather(*(redis_store.read(g) for g in games))
    assert [len(r) for r in reads] == [3 if i % 2 else 2 for i in range(50)]


@pytest.mark.asyncio
async def test_an_append_after_the_scripts_were_flushed_loads_the_script_again(
    redis_store: RedisEventStore,
) -> None:
    await redis_store.append("s", events(1), 0)
    await redis_store.client.script_flush()  # as after a Redis restart
    results = await asyncio.gather(*(redis_store.append(f"s{i}", events(1), 0)
                                     for i in range(5)))
    assert [r.version for r in results] == [1] * 5
    assert (await redis_store.append("s", events(1, 2), 1)).version == 2


def test_the_batcher_is_off_on_a_cluster_client() -> None:
    store = RedisEventStore.from_url("redis+cluster://127.0.0.1:7000")
    assert store._batch is None  # a cluster pipeline splits by node: left to redis-py


@pytest.mark.asyncio
async def test_commands_that_arrive_while_a_pipeline_is_in_flight_go_together_after_it(
    redis_store: RedisEventStore,
) -> None:
    batcher = CommandBatcher(redis_store.client, hold=1.0)  # the BLPOP holds its place
    key = f"{redis_store.prefix}:group"
    slow = asyncio.ensure_future(batcher.call("BLPOP", f"{key}:none", "0.3"))
    await asyncio.sleep(0.05)  # the BLPOP is in flight now
    later = []
    for _ in range(10):
        later.append(asyncio.ensure_future(batcher.call("INCR", key)))
        await asyncio.sleep(0.005)  # each in a tick of its own
    assert await slow is None
    assert sorted(await asyncio.gather(*later)) == list(range(1, 11))
    assert (batcher.batches, batcher.commands) == (2, 11)  # a group commit, not 11 trips


@pytest.mark.asyncio
async def test_a_command_that_cannot_be_packed_fails_alone(redis_store: RedisEventStore) -> None:
    # found by an attack: a lone surrogate failed the packing of the whole pipeline, and
    # every append of the batch with it
    batcher = CommandBatcher(redis_store.client)
    key = f"{redis_store.prefix}:pack"
    first = asyncio.ensure_future(batcher.call("INCR", key))  # goes at once, alone
    await asyncio.sleep(0)
    queued = [batcher.call("INCR", key), batcher.call("SET", f"{key}:bad", "\ud800"),
              batcher.call("INCR", key), batcher.call("SET", f"{key}:bool", True)]
    done = await asyncio.gather(first, *queued, return_exceptions=True)
    assert done[0] == 1 and sorted([done[1], done[3]]) == [2, 3]
    assert isinstance(done[2], UnicodeEncodeError)
    assert isinstance(done[4], redis.DataError)  # hiredis refuses it; redis-py's error


@pytest.mark.asyncio
@pytest.mark.parametrize("hiredis_packing", [True, False])
async def test_any_packing_error_fails_its_caller_alone_and_keeps_the_pool_whole(
    redis_url: str, redis_prefix: str, hiredis_packing: bool,
) -> None:
    # found by an attack on the direct round trips: an int past str()'s 4,300 digits (a
    # ValueError of redis-py's packing) leaked the pooled connection and failed the whole
    # batch; through hiredis's packing the same int crashed the process (SIGSEGV)
    from rummy_store.redis_store import use_hiredis_packing

    client = aioredis.Redis.from_url(redis_url, decode_responses=True, max_connections=2)
    if hiredis_packing:
        use_hiredis_packing(client)
    batcher = CommandBatcher(client)
    key = f"{redis_prefix}:huge"
    try:
        for _ in range(4):  # more rounds than the pool has connections
            first = asyncio.ensure_future(batcher.call("ECHO", "first"))
            await asyncio.sleep(0)
            done = await asyncio.gather(first, batcher.call("ECHO", "a"),
                                        batcher.call("SET", key, 10**5000),
                                        batcher.call("ECHO", "c"), return_exceptions=True)
            assert done[0] == "first" and done[1] == "a" and done[3] == "c"
            assert isinstance(done[2], ValueError) and "digits" in str(done[2])
        assert await client.get(key) is None  # never sent
        assert not client.connection_pool._in_use_connections
        assert await client.ping() is True
    finally:
        await client.aclose()


@pytest.mark.asyncio
async def test_a_stuck_round_trip_holds_the_queue_back_for_hold_seconds_only(
    redis_store: RedisEventStore,
) -> None:
    # found by an attack: with one round trip in flight, a connection that stopped answering
    # stalled every game of the server until redis-py's socket timeout
    batcher = CommandBatcher(redis_store.client, hold=0.05)
    key = f"{redis_store.prefix}:stuck"
    stuck = asyncio.ensure_future(batcher.call("BLPOP", f"{key}:none", "120"))  # 120 s
    await asyncio.sleep(0.01)
    # the INCR is answered while the BLPOP still blocks (held back ~0.05 s, not 120 s); the
    # 60 s wait is a hang guard: only an INCR queued behind the BLPOP takes that long
    assert await asyncio.wait_for(batcher.call("INCR", key), 60) == 1
    assert not stuck.done()
    stuck.cancel()


# ---------------------------------------------------------------- packing through hiredis

def test_hiredis_packing_gives_redis_pys_bytes_for_every_argument_it_accepts() -> None:
    # RedisEventStore.from_url packs commands with hiredis.pack_command (C)
    # instead of redis-py's asyncio packing in Python; the bytes on the wire are the same
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from redis.asyncio.connection import Connection
    from rummy_store.redis_store import use_hiredis_packing

    plain = Connection()
    client = use_hiredis_packing(aioredis.Redis(decode_responses=True))
    fast = client.connection_pool.connection_class()
    assert type(fast).__name__ == "HiredisConnection"
    text = st.text(st.characters(blacklist_categories=("Cs",)))  # no lone surrogates
    arg = st.one_of(text, st.binary(), st.integers(), st.floats(allow_nan=False), text.map(
        lambda s: memoryview(s.encode())))

    @settings(max_examples=300, deadline=None)
    @given(st.sampled_from(["EVALSHA", "XRANGE", "CONFIG GET", b"SET"]), st.lists(arg))
    def same(name: str | bytes, args: list) -> None:
        assert b"".join(fast.pack_command(name, *args)) == b"".join(
            plain.pack_command(name, *args))

    same()
    # what hiredis refuses goes through redis-py's own packing: its error, or its bytes
    with pytest.raises(redis.DataError):
        fast.pack_command("SET", "k", True)
    assert fast.pack_command("SET", "k", bytearray(b"v")) == plain.pack_command(
        "SET", "k", bytearray(b"v"))
    with pytest.raises(UnicodeEncodeError):  # as redis-py's strict UTF-8 encoder
        fast.pack_command("SET", "k", "\udc80")
    # a client that encodes text otherwise keeps redis-py's packing
    latin = use_hiredis_packing(aioredis.Redis(encoding="latin-1"))
    assert latin.connection_pool.connection_class is Connection
    assert use_hiredis_packing(client) is client  # applied once
    assert client.connection_pool.connection_class.__mro__.count(Connection) == 1


@pytest.mark.asyncio
async def test_a_store_from_a_url_packs_with_hiredis(redis_url: str, redis_prefix: str) -> None:
    store = RedisEventStore.from_url(redis_url, prefix=redis_prefix)
    try:
        assert store.client.connection_pool.connection_class.__name__ == "HiredisConnection"
        done = await asyncio.gather(*(store.append(f"g{i}", events(2), 0) for i in range(5)))
        assert [d.version for d in done] == [2] * 5
        assert [e.data for e in await store.read("g3")] == events(2)
    finally:
        await store.close()
