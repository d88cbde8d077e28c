"""A cluster node that hangs (``SIGSTOP``: it keeps its connections and answers nothing)
holds up its own shard only: games on the other shards go on, their live events delivered
by the same store's subscriptions while the node is still stopped.

A private 3-master cluster (``tests/redis_cluster.py``) with a long ``cluster-node-timeout``,
so that the other nodes do not fail the stopped one (and the cluster) during the test.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from typing import Any

import pytest
import redis
from rummy_store import open_store
from rummy_store.redis_store import RedisEventStore

from tests.redis_cluster import cluster_unavailable, local_cluster

pytestmark = [pytest.mark.chaos, pytest.mark.asyncio, pytest.mark.timeout(300)]

EVENT = {"type": "Passed", "v": 1, "seat": 0}


def _one_game_per_node(store: RedisEventStore) -> dict[int, str]:
    """Node port -> a game id whose keys live on that node."""
    client: Any = store.client
    games: dict[int, str] = {}
    for i in range(1000):
        node = client.get_node_from_key(store.key(f"g{i}", "events"))
        games.setdefault(int(node.port), f"g{i}")
    return games


async def test_a_hung_node_holds_up_only_its_own_shard(record_property: Any) -> None:
    reason = cluster_unavailable()
    if reason:
        pytest.skip(reason)
    with local_cluster(3, node_timeout_ms=120_000) as url:
        prefix = f"rummytest:{uuid.uuid4().hex}"
        reader = open_store(url, prefix=prefix)
        writer = open_store(url, prefix=prefix)
        assert isinstance(reader, RedisEventStore) and isinstance(writer, RedisEventStore)
        stopped = None
        try:
            await reader.ping()
            await writer.ping()
            games = _one_game_per_node(reader)
            assert len(games) == 3
            subs = {port: reader.subscribe(gid) for port, gid in games.items()}
            first = [asyncio.ensure_future(anext(sub)) for sub in subs.values()]
            async with asyncio.timeout(30):  # live: registered with the store's hub
                while reader.subscriber_count() < 3:
                    await asyncio.sleep(0.02)
            for gid in games.values():
                await writer.append(gid, [EVENT], 0)
            assert [(await asyncio.wait_for(f, 30)).version for f in first] == [1, 1, 1]
            assert len(reader.hub._cursors) == 3  # type: ignore[union-attr]
            hung_port, hung_game = min(games.items())
            with redis.Redis(port=hung_port) as r:
                stopped = int(r.info("server")["process_id"])
            os.kill(stopped, signal.SIGSTOP)
            t_hung = time.monotonic()
            # the hung shard's game is written to (its caller waits for the socket timeout)
            # and the hub's safety poll reaches every game, the hung one included
            hung_append = asyncio.ensure_future(writer.append(hung_game, [EVENT], 1))
            reader.hub._dirty.update(reader.hub._cursors)  # type: ignore[union-attr]
            reader.hub._wakeup.set()  # type: ignore[union-attr]
            await asyncio.sleep(0.5)
            t0 = time.monotonic()
            for version in (2, 3):
                for port, gid in games.items():
                    if port != hung_port:
                        await asyncio.wait_for(writer.append(gid, [EVENT], version - 1), 60)
                for port, sub in subs.items():
                    if port != hung_port:
                        got = await asyncio.wait_for(anext(sub), 60)  # a hang guard only
                        assert got.version == version
            delivered = time.monotonic() - t0
            record_property("fault", "SIGSTOP of one of 3 cluster primaries")
            record_property("other_shards_delivered_s", round(delivered, 3))
            with pytest.raises(redis.exceptions.TimeoutError):
                await asyncio.wait_for(hung_append, 120)  # a hang guard only
            record_property("hung_shard_caller_s", round(time.monotonic() - t_hung, 3))
        finally:
            if stopped is not None:
                os.kill(stopped, signal.SIGCONT)
            await reader.close()
            await writer.close()
