"""Redis memory per active and per finished game, and per results-feed summary
(docs/operations.md, "Memory"), measured with ``MEMORY USAGE`` over real games.

Plays games through :class:`rummy_grpc.app.GameApp` in this process over the real Redis at
``--redis`` under a fresh key prefix (deleted afterwards): ``--games`` two-seat games of
two ``basic`` bots to the default target score (finished: kept for good, request records
dropped after the request window, here 0: kept), and as many two-seat human games just
created (active: their first round dealt, waiting for a move). Then sums ``MEMORY
USAGE key SAMPLES 0`` of every key of each game (events, request records, meta,
snapshots) and of the index entries, and the results feed's bytes per summary.

Usage: ``python benchmarks/bench_game_memory.py [--games 10] [--redis URL]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "services"))

import redis.asyncio as aioredis  # noqa: E402
from rummy_grpc.app import GameApp  # noqa: E402
from rummy_grpc.model import SeatSpec  # noqa: E402
from rummy_store import RedisEventStore  # noqa: E402


async def game_bytes(r: aioredis.Redis, prefix: str, game_id: str) -> tuple[int, int]:
    """(bytes of the game's keys, number of keys)."""
    total = n = 0
    async for key in r.scan_iter(match=f"{prefix}:{{{game_id}}}:*", count=1000):
        total += int(await r.memory_usage(key, samples=0) or 0)
        n += 1
    return total, n


async def main(games: int, url: str) -> None:
    """Play, measure, print (see the module)."""
    prefix = f"bench-mem-{uuid.uuid4().hex[:8]}"
    store = RedisEventStore.from_url(url, prefix=prefix, idle_ttl=7 * 86400)
    app = GameApp(store)
    await app.start()
    r = aioredis.Redis.from_url(url)
    try:
        finished = [(await app.create_game([SeatSpec("bot", strategy="basic")] * 2, {},
                                           seed=i)).game_id for i in range(games)]
        active = [(await app.create_game([SeatSpec("human")] * 2, {})).game_id
                  for _ in range(games)]
        while True:
            ends = [(await store.read(g))[-1].type for g in finished]
            if all(t == "GameEnded" for t in ends):
                break
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)  # the finishing steps (set_active, snapshots)
        rows = []
        for label, ids in (("finished", finished), ("active", active)):
            sizes, events = [], []
            for g in ids:
                b, _ = await game_bytes(r, prefix, g)
                sizes.append(b)
                events.append(await store.version(g))
            rows.append((label, statistics.mean(sizes), min(sizes), max(sizes),
                         statistics.mean(events)))
        index = 0
        for k in (f"{prefix}:games", f"{prefix}:games:active"):
            index += int(await r.memory_usage(k, samples=0) or 0)
        feed_key = f"{prefix}:{{{prefix}:results}}:feed"
        feed_bytes = int(await r.memory_usage(feed_key, samples=0) or 0)
        feed_len = int(await r.xlen(feed_key))
        info = await r.info("server")
        print(f"Redis {info['redis_version']}, {games} games of each kind (two seats)")
        print("| game | bytes (mean) | min | max | events (mean) |")
        print("|---|---|---|---|---|")
        for label, mean, lo, hi, ev in rows:
            print(f"| {label} | {mean:,.0f} | {lo:,} | {hi:,} | {ev:,.0f} |")
        print(f"index (both sorted sets): {index / (2 * games):,.0f} bytes per game")
        print(f"results feed: {feed_len} summaries, {feed_bytes:,} bytes, "
              f"{feed_bytes / max(1, feed_len):,.0f} bytes per summary")
    finally:
        await app.close()
        async for key in r.scan_iter(match=f"{prefix}:*", count=1000):
            await r.delete(key)
        await r.aclose()
        await store.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    a = ap.parse_args()
    asyncio.run(main(a.games, a.redis))
