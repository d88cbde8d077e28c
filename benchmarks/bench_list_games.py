"""``ListGames`` for an API-key caller: the per-creator index (:mod:`rummy_store.creators`)
against its reference, the scan of the whole games index that the listing did before
(the same store seen without its per-creator index), interleaved in one run.

Setup: ``--games`` games (default 2,000), one in 250 created by the caller (8), the rest
by another caller; one page of 50 of the caller's games (all 8). "cold": the replica holds
no meta in memory (each rep clears the repository's meta cache, so every meta read goes to
the store, as on a replica that never saw those games); the states stay cached. Prints the
metas read by one page, and the median and p99 latency of each path and their ratio, on
the memory store and (when it answers) the test Redis.

    python benchmarks/bench_list_games.py [--games N] [--reps N]
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "services")]

from rummy_grpc.app import GameApp, SeatSpec  # noqa: E402
from rummy_grpc.callers import Identity  # noqa: E402
from rummy_grpc.listing import list_games  # noqa: E402
from rummy_store.memory import MemoryEventStore  # noqa: E402

CALLER = Identity("key:alice", True, "ok")


class Scan:
    """The store without its per-creator index: the listing's reference path."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name in ("add_created", "list_created"):
            raise AttributeError(name)
        return getattr(self._store, name)


async def _page(app: GameApp, store: Any, counter: list[int]) -> tuple[int, float]:
    app.repo.store = store
    app.repo._meta.clear()  # cold: no meta in memory
    counter[0] = 0
    t = time.perf_counter()
    games, _ = await list_games(app.repo, "", CALLER, "", 0, 50, "")
    return len(games), time.perf_counter() - t


async def run(label: str, store: Any, games: int, reps: int) -> None:
    app = GameApp(store, clock=time.time)
    seats = [SeatSpec("human", "", ""), SeatSpec("human", "", "")]
    for i in range(games):
        await app.create_game(seats, {}, creator=CALLER.key if i % 250 == 0 else "key:bob")
    counter = [0]
    original = store.get_meta

    async def counted(game_id: str) -> Any:
        counter[0] += 1
        return await original(game_id)
    store.get_meta = counted
    times: dict[str, list[float]] = {"index": [], "scan": []}
    reads: dict[str, int] = {}
    for _ in range(reps):  # interleaved: the same load for both
        for name, view in (("index", store), ("scan", Scan(store))):
            listed, seconds = await _page(app, view, counter)
            times[name].append(seconds)
            reads[name] = counter[0]
    store.get_meta = original
    print(f"{label}: {games} games, {listed} of them the caller's, one page, cold, "
          f"{reps} reps")
    for name in ("index", "scan"):
        v = sorted(times[name])
        print(f"  {name:5s} metas read {reads[name]:6d}  median {statistics.median(v) * 1e3:8.2f} "
              f"ms  p99 {v[max(0, int(len(v) * 0.99) - 1)] * 1e3:8.2f} ms")
    ratio = statistics.median(times["scan"]) / statistics.median(times["index"])
    print(f"  scan / index (median): {ratio:.1f}x")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    await run("memory store", MemoryEventStore(), args.games, args.reps)
    from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable
    if redis_unreachable():
        print("redis: not reachable, skipped")
        return
    from rummy_store import RedisEventStore
    prefix = f"bench-list-{uuid.uuid4().hex[:8]}"
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
    try:
        await run("redis", store, args.games, args.reps)
    finally:
        await store.close()
        await delete_prefix(prefix)


if __name__ == "__main__":
    asyncio.run(main())
