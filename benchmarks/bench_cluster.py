"""Event store on Redis Cluster: appends/s on a 3-master cluster against one Redis.

Starts, in the same run, one plain ``redis-server`` and a local 3-master cluster
(``tests/redis_cluster.py``: free ports, a temp dir, nothing persisted, torn down at the end),
and drives ``RedisEventStore.append`` on each: ``--games`` games (default 200), each appended
to ``--appends`` times (one event per append, the next expected version each time, with a
request id, as the service does), with at most ``--concurrency`` appends in flight (one
asyncio process, one store). The two targets alternate for ``--rounds`` rounds (fresh games
each round); the median appends/s of each is printed with the ratio cluster / single.

All shards and the client run on this one machine (2 cores here): the ratio shows the
cluster path's correctness and overhead (cluster client routing, the SPUBLISH wake-up per
append), not real scale-out, which needs the shards on separate hosts and more clients.

Usage: python benchmarks/bench_cluster.py [--quick] [--games N] [--appends N]
       [--concurrency N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "services")]

from redis.asyncio.cluster import RedisCluster  # noqa: E402
from rummy_store import RedisEventStore  # noqa: E402

from rummy.events import Knocked, to_dict  # noqa: E402
from tests.redis_cluster import cluster_unavailable, local_cluster, local_redis  # noqa: E402


async def appends_per_second(url: str, games: int, appends: int, concurrency: int) -> float:
    """Appends/s of ``games`` x ``appends`` one-event appends on a store for ``url``, at most
    ``concurrency`` in flight; checks every game ends at version ``appends``."""
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    store = RedisEventStore.from_url(url, prefix=prefix)
    gate = asyncio.Semaphore(concurrency)
    ids = [f"g{i}" for i in range(games)]

    async def play(game: str) -> None:
        for version in range(appends):
            async with gate:
                await store.append(game, [to_dict(Knocked(seat=0, points=version))], version,
                                   request_id=f"r{version}", request_hash="h")

    try:
        await store.ping()
        start = time.perf_counter()
        await asyncio.gather(*(play(g) for g in ids))
        elapsed = time.perf_counter() - start
        for g in ids[:: max(1, games // 10)]:
            assert await store.version(g) == appends, g
        if isinstance(store.client, RedisCluster):  # the games really spread over the shards
            owners = {store.client.get_node_from_key(store.key(g, "events")).name for g in ids}
            assert len(owners) == len(store.client.get_primaries()), owners
        return games * appends / elapsed
    finally:
        await store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer appends and rounds")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--appends", type=int, default=None, help="per game (default 20; quick 5)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=None, help="default 3; quick 1")
    args = ap.parse_args()
    appends = args.appends or (5 if args.quick else 20)
    rounds = args.rounds or (1 if args.quick else 3)
    reason = cluster_unavailable()
    if reason:
        print(f"bench_cluster: skipped ({reason})")
        return
    single: list[float] = []
    cluster: list[float] = []
    with local_redis() as single_url, local_cluster(3) as cluster_url:
        for _ in range(rounds):
            single.append(asyncio.run(appends_per_second(single_url, args.games, appends,
                                                         args.concurrency)))
            cluster.append(asyncio.run(appends_per_second(cluster_url, args.games, appends,
                                                          args.concurrency)))
    s, c = statistics.median(single), statistics.median(cluster)
    print(f"Event store appends/s: {args.games} games x {appends} appends, "
          f"{args.concurrency} in flight, median of {rounds} round(s)")
    print(f"  1 Redis (plain)       {s:9.0f} appends/s   rounds: "
          + ", ".join(f"{x:.0f}" for x in single))
    print(f"  3-shard Redis Cluster {c:9.0f} appends/s   rounds: "
          + ", ".join(f"{x:.0f}" for x in cluster))
    print(f"  ratio cluster / single: {c / s:.2f}")
    print(f"  note: all shards and the client share this one machine ({os.cpu_count()} "
          "cores): the ratio shows the cluster path's overhead, not real scale-out")


if __name__ == "__main__":
    main()
