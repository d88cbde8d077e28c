"""Redis Cluster specifics of the event store: the cluster URL, one slot per game
and games over every master, the per-node hub, and a game served over gRPC on a local
3-master cluster (fixtures in conftest.py)."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest
import redis.asyncio as aioredis
import rummy_grpc  # noqa: F401 - generates rummy_api when missing
from redis.asyncio.cluster import RedisCluster
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.server import create_server, make_store
from rummy_store import RedisEventStore, StoreAccessDenied
from rummy_store.cluster_fanout import ClusterStreamHub
from rummy_store.contract._helpers import numbered, take
from rummy_store.redis_store import cluster_client_from_url

from rummy.events import from_dict
from rummy.invariants import verify_log
from tests.harness import HANG_GUARD

pytestmark = [pytest.mark.timeout(int(HANG_GUARD) + 60)]


# -- the URL (no cluster needed) ---------------------------------------------------------------


def test_cluster_url_lists_startup_nodes_and_options() -> None:
    client = cluster_client_from_url(
        "redis+cluster://user:pw@10.0.0.1:7000, 10.0.0.2:7001,[::1]:7002,10.0.0.3"
        "?socket_timeout=2", decode_responses=True)
    nodes = [(n.host, int(n.port)) for n in client.nodes_manager.startup_nodes.values()]
    assert nodes == [("10.0.0.1", 7000), ("10.0.0.2", 7001), ("::1", 7002),
                     ("10.0.0.3", 6379)]
    kwargs = client.get_connection_kwargs()
    assert kwargs["username"] == "user" and kwargs["password"] == "pw"
    assert kwargs["socket_timeout"] == 2.0


@pytest.mark.parametrize("url", [
    "redis://127.0.0.1:7000", "redis+cluster://", "redis+cluster://h:notaport",
    "redis+cluster://h:0", "redis+cluster://h:7000/1",
])
def test_bad_cluster_urls_are_value_errors(url: str) -> None:
    with pytest.raises(ValueError):
        cluster_client_from_url(url)


@pytest.mark.asyncio
async def test_store_from_url_picks_the_client_by_scheme() -> None:
    single = RedisEventStore.from_url("redis://127.0.0.1:1/0")
    cluster = RedisEventStore.from_url("redis+cluster://127.0.0.1:1,127.0.0.1:2")
    try:
        assert not single.is_cluster and isinstance(single.client, aioredis.Redis)
        assert cluster.is_cluster and isinstance(cluster.client, RedisCluster)
        assert isinstance(cluster.hub, ClusterStreamHub)
    finally:
        await single.close()
        await cluster.close()
    store = make_store("redis", "rediss+cluster://127.0.0.1:1", "p")  # rummy serve's path
    inner = getattr(store, "inner", store)  # the sealing GameStore wraps the Redis store
    assert isinstance(inner, RedisEventStore) and inner.is_cluster
    await store.close()


# -- on the local cluster ----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_a_game_is_on_one_slot_and_games_spread_over_the_masters(
        store: RedisEventStore) -> None:
    client = store.client
    assert isinstance(client, RedisCluster)
    games = [f"g{i}" for i in range(30)]
    for g in games:
        await store.append(g, numbered(2), 0)
        await store.put_meta(g, {"n": g})
        await store.put_snapshot(g, 2, {"s": 1})
        slots = {client.keyslot(store.key(g, kind))
                 for kind in ("events", "requests", "requests:0", "requests:f", "meta",
                              "snapshots")}
        assert len(slots) == 1
    owners = {client.get_node_from_key(store.key(g, "events")).name for g in games}
    assert len(owners) == 3 == len(client.get_primaries())
    assert sorted(await store.list_games(limit=100)) == sorted(games)
    assert sorted(await store.list_games(limit=100, active_only=True)) == sorted(games)
    for g in games[:10]:
        await store.set_active(g, False)
    assert sorted(await store.list_games(limit=100, active_only=True)) == sorted(games[10:])


@pytest.mark.asyncio
async def test_the_hub_reads_games_on_every_node_with_one_connection_per_node(
        store_factory) -> None:
    writer, reader = store_factory(), store_factory()
    assert isinstance(reader, RedisEventStore) and isinstance(writer, RedisEventStore)
    games = [f"h{i}" for i in range(24)]
    subs = [reader.subscribe(g) for g in games]
    pending = [asyncio.ensure_future(take(s, 6, timeout=15)) for s in subs]
    try:
        await asyncio.sleep(0.1)
        for version in range(0, 6, 2):
            await asyncio.gather(*(writer.append(g, numbered(2, version + 1), version)
                                   for g in games))
        for got in await asyncio.gather(*pending):
            assert [e.version for e in got] == [1, 2, 3, 4, 5, 6]
        hub = reader.hub
        assert isinstance(hub, ClusterStreamHub)
        assert hub.node_count() == 3 and hub.stream_count() == len(games)
        client = reader.client
        assert isinstance(client, RedisCluster)
        for node in client.get_primaries():  # exactly one hub connection per node
            listed = await client.client_list(target_nodes=node)
            names = [c["name"] for c in listed]
            assert names.count(f"rummy-hub:{reader.prefix}") == 1
    finally:
        for p in pending:
            p.cancel()
        for s in subs:
            await s.aclose()


@pytest.mark.asyncio
async def test_a_served_bot_game_with_a_spectator_on_the_cluster(cluster_url: str) -> None:
    prefix = f"rummytest:{uuid.uuid4().hex}"
    store = make_store("redis", cluster_url, prefix)
    server, port = create_server("127.0.0.1:0", store)
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub = pb_grpc.GameServiceStub(channel)
        created = await stub.CreateGame(pb.CreateGameRequest(
            seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy=s)
                   for s in ("basic", "random", "basic")],
            variants={"target_score": "40"}, seed=15))
        seen = [m.event async for m in stub.StreamEvents(
            pb.StreamEventsRequest(game_id=created.game_id))]
        assert seen[-1].type == "GameEnded"
        assert [e.version for e in seen] == list(range(1, len(seen) + 1))
        events = await store.read(created.game_id)
        assert len(events) == len(seen)
        *_, state = verify_log([from_dict(e.data) for e in events])
        assert state.is_over
        assert created.game_id in await store.list_games()
        assert created.game_id not in await store.list_games(active_only=True)
    finally:
        await channel.close()
        await server.stop(None)
        await store.close()


async def _move_slot(client: RedisCluster, key: str) -> str:
    """Move ``key``'s slot (and its keys) to another primary, by hand (CLUSTER SETSLOT
    IMPORTING / MIGRATING, MIGRATE, SETSLOT NODE on every primary); returns the new
    owner's name."""
    slot = client.keyslot(key)
    src = client.get_node_from_key(key)
    dst = next(n for n in client.get_primaries() if n.name != src.name)
    src_id = await client.execute_command("CLUSTER MYID", target_nodes=src)
    dst_id = await client.execute_command("CLUSTER MYID", target_nodes=dst)
    await client.execute_command("CLUSTER SETSLOT", slot, "IMPORTING", src_id,
                                 target_nodes=dst)
    await client.execute_command("CLUSTER SETSLOT", slot, "MIGRATING", dst_id,
                                 target_nodes=src)
    keys = await client.execute_command("CLUSTER GETKEYSINSLOT", slot, 100, target_nodes=src)
    if keys:
        await client.execute_command("MIGRATE", dst.host, dst.port, "", 0, 5000, "KEYS",
                                     *keys, target_nodes=src)
    for node in client.get_primaries():
        await client.execute_command("CLUSTER SETSLOT", slot, "NODE", dst_id,
                                     target_nodes=node)
    return str(dst.name)


@pytest.mark.asyncio
async def test_a_subscription_follows_its_game_to_another_node(store_factory) -> None:
    writer, reader = store_factory(), store_factory()
    assert isinstance(reader, RedisEventStore) and isinstance(writer, RedisEventStore)
    await writer.append("moving", numbered(2), 0)
    sub = reader.subscribe("moving")
    try:
        assert [e.version for e in await take(sub, 2)] == [1, 2]
        admin = writer.client
        assert isinstance(admin, RedisCluster)
        new_owner = await _move_slot(admin, writer.key("moving", "events"))
        await writer.append("moving", numbered(2, 3), 2)  # the writer follows MOVED
        got = await take(sub, 2, timeout=15)  # a wake-up, or the hub's 5 s resync
        assert [e.version for e in got] == [3, 4]
        await writer.append("moving", numbered(1, 5), 4)
        assert [e.version for e in await take(sub, 1, timeout=15)] == [5]
        client = reader.client
        assert isinstance(client, RedisCluster)
        assert client.get_node_from_key(reader.key("moving", "events")).name == new_owner
    finally:
        await sub.aclose()


@pytest.mark.asyncio
async def test_the_cluster_hub_tells_a_stream_that_went_back_in_time(store_factory) -> None:
    # the cluster side of the rewind fix: after a node's failure (here flagged
    # as a node reader does, with the game's keys restored to an older copy, as a failover
    # to a replica that lagged leaves them), the hub's next poll finds the rewind and the
    # subscription that had delivered lost events ends with StreamRewound
    from rummy_store import StreamRewound
    writer, reader = store_factory(), store_factory()
    assert isinstance(reader, RedisEventStore) and isinstance(writer, RedisEventStore)
    client = writer.client
    assert isinstance(client, RedisCluster)
    raw = RedisCluster.from_url(cluster_url_of(client))  # DUMP needs bytes
    sub = reader.subscribe("rw")
    try:
        await writer.append("rw", numbered(3, 1), 0)
        keys = [writer.key("rw", k) for k in ("events", "meta")]
        saved = {k: await raw.dump(k) for k in keys if await raw.exists(k)}
        await writer.append("rw", numbered(2, 4), 3)
        got = [await asyncio.wait_for(anext(sub), HANG_GUARD) for _ in range(5)]
        assert [e.version for e in got] == [1, 2, 3, 4, 5]
        nxt = asyncio.ensure_future(anext(sub))
        await asyncio.sleep(0.2)
        for k in keys:
            await raw.delete(k)
        for k, dumped in saved.items():
            await raw.restore(k, 0, dumped, replace=True)
        hub = reader.hub
        assert isinstance(hub, ClusterStreamHub)
        hub.recovering = True  # what a node reader's failure sets
        hub.request_regroup(refresh=True)
        with pytest.raises(StreamRewound) as err:
            await asyncio.wait_for(nxt, HANG_GUARD)
        assert (err.value.delivered, err.value.actual) == (5, 3)
    finally:
        await sub.aclose()
        await raw.aclose()


def cluster_url_of(client: RedisCluster) -> str:
    """A ``redis://`` URL of one startup node of ``client`` (RedisCluster.from_url)."""
    node = next(iter(client.nodes_manager.startup_nodes.values()))
    return f"redis://{node.host}:{node.port}"


# -- the store user's permissions on every node ------------------------------------------------


@pytest.mark.asyncio
async def test_check_access_names_a_command_refused_on_a_cluster(cluster_url: str) -> None:
    # each node keeps its own ACL: the user exists on every primary, without SPUBLISH (the
    # cluster append script's wake-up); the check runs on every primary and names it
    import redis as sync_redis

    name, password = f"u{uuid.uuid4().hex[:10]}", "pw-cluster"
    ports = [int(hp.rsplit(":", 1)[1]) for hp in cluster_url.split("://", 1)[1].split(",")]
    for port in ports:
        with sync_redis.Redis(port=port) as admin:
            admin.execute_command("ACL", "SETUSER", name, "on", f">{password}", "~*", "&*",
                                  "+@all", "-spublish")
    url = cluster_url.replace("redis+cluster://", f"redis+cluster://{name}:{password}@")
    store = RedisEventStore.from_url(url, prefix=f"rummytest:{uuid.uuid4().hex}")
    try:
        with pytest.raises(StoreAccessDenied) as info:
            await store.check_access()
        assert info.value.command.startswith("SPUBLISH rummytest:")
        assert info.value.user == name
    finally:
        await store.close()
        for port in ports:
            with sync_redis.Redis(port=port) as admin:
                admin.execute_command("ACL", "DELUSER", name)
