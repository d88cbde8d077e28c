"""The results feed on a Redis Cluster: the append script writes the summary to the game's
outbox (its own slot), the relay appends it to the feed once; a process that dies between
the two leaves it in the outbox, and the sweep relays it (fixtures in conftest.py)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc
import pytest
import rummy_grpc  # noqa: F401 - generates rummy_api when missing
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.server import create_server, make_store
from rummy_store import EventStore, RedisEventStore
from rummy_store.contract._helpers import numbered

from tests.harness import HANG_GUARD

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(int(HANG_GUARD) + 60)]


async def test_a_relay_that_never_ran_is_done_by_the_sweep_once(store: EventStore,
                                                               monkeypatch: Any) -> None:
    assert isinstance(store, RedisEventStore)

    async def dies(**_: Any) -> None:  # the appending process dies before the relay
        raise ConnectionError("killed")

    relay = store._relay
    monkeypatch.setattr(store, "_relay", dies)
    await store.append("g1", numbered(2), 0, summary={"kind": "created", "game_id": "g1"})
    await store.append("g2", numbered(1), 0, summary={"kind": "created", "game_id": "g2"})
    assert await store.results_read("grp", "c", block_ms=10) == []  # not in the feed yet
    outbox = await store.client.hgetall(store.key("g1", "results"))
    assert outbox == {"2": '{"kind":"created","game_id":"g1"}'}
    monkeypatch.setattr(store, "_relay", relay)
    await store.results_sweep()
    await store.results_sweep()  # nothing left to relay
    # a relay repeated after a crash between XADD and HDEL appends nothing
    assert not await store._relay(keys=[store._results_feed, store._results_seen],
                                  args=["g1 2", "g1", "{}"])
    got = await store.results_read("grp", "c", block_ms=10)
    assert sorted(e.summary["game_id"] for e in got) == ["g1", "g2"]
    assert await store.client.exists(store.key("g1", "results")) == 0
    await store.append("g1", numbered(1), 2, summary={"kind": "ended", "game_id": "g1"})
    got = await store.results_read("grp", "c", block_ms=10)  # relayed by the append itself
    assert [(e.summary["game_id"], e.summary["kind"]) for e in got] == [("g1", "ended")]


async def test_served_games_on_the_cluster_each_summary_once(cluster_url: str) -> None:
    prefix = f"rummytest:{uuid.uuid4().hex}"
    store = make_store("redis", cluster_url, prefix)
    server, port = create_server("127.0.0.1:0", store, admin_token="adm")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub = pb_grpc.GameServiceStub(channel)
        games = [(await stub.CreateGame(pb.CreateGameRequest(
            seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy="random")] * 2,
            variants={"target_score": "1"}, seed=i))).game_id for i in range(20)]
        got: list[pb.GameResult] = []
        stream = stub.StreamResults(pb.StreamResultsRequest(
            admin_token="adm", group="ratings", consumer="c", max_batch=50))
        while len(got) < 40:
            batch = (await asyncio.wait_for(stream.read(), HANG_GUARD)).results
            got += batch
            await stub.AckResults(pb.AckResultsRequest(
                admin_token="adm", group="ratings", entry_ids=[r.entry_id for r in batch]))
        stream.cancel()
        pairs = sorted((r.game_id, r.kind) for r in got)
        assert pairs == sorted((g, k) for g in games
                               for k in (pb.RESULT_KIND_CREATED, pb.RESULT_KIND_ENDED))
        for g in games:  # per game in version order: created before ended
            kinds = [r.kind for r in got if r.game_id == g]
            assert kinds == [pb.RESULT_KIND_CREATED, pb.RESULT_KIND_ENDED]
    finally:
        await channel.close()
        await server.stop(None)
        await store.close()
