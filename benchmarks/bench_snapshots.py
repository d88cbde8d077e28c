"""Snapshot benchmark: ``GetState`` at a version of a ~20,000-event game
read from the local Redis, before snapshots (the old repository: the state at a version is a
replay from event 1, an uncached latest state a replay of the whole log) and after (the
newest snapshot at or before the version, then at most ~256 events; more than 64 evolved in
a thread).

Each case times the read model's ``get_state`` (what the ``GetState`` RPC calls, without
gRPC) with an admin token: "warm" with the game's latest state in the repository's cache,
"cold" with a new repository (a restarted server, an evicted game). The game (basic bots,
a high target score) is played in process and appended to Redis; the snapshots are written
as the service writes them, with ``maybe_snapshot`` after each command.

Usage: python benchmarks/bench_snapshots.py [--redis-url URL] [--repeat N]
Keys live under a fresh ``bench-<hex>`` prefix, deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "services")]

from rummy_grpc.errors import GameNotFound  # noqa: E402
from rummy_grpc.reads import ReadModels  # noqa: E402
from rummy_grpc.repository import GameRepository  # noqa: E402
from rummy_store import RedisEventStore  # noqa: E402

from rummy.bots import make_bot  # noqa: E402
from rummy.commands import CreateGame  # noqa: E402
from rummy.decide import step  # noqa: E402
from rummy.evolve import evolve  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy.state import GAME_OVER, GameState  # noqa: E402
from rummy.views import view  # noqa: E402

ADMIN = "bench-admin"


class BeforeRepository(GameRepository):
    """The repository as it was before snapshots (commit 01b093d): replays from event 1."""

    async def load(self, game_id: str, *, fresh: bool = True) -> tuple[GameState, float]:
        cached = self._cache.get(game_id)
        if cached is not None and not fresh:
            return cached
        after = cached[0].version if cached else 0
        new = await self.read(game_id, after_version=after)
        if cached is None and not new:
            raise GameNotFound(game_id)
        state: GameState | None = cached[0] if cached else None
        ts = cached[1] if cached else 0.0
        for r in new:
            state = evolve(state, r.event)
            ts = r.ts
        assert state is not None
        self.remember(game_id, state, ts)
        return state, ts

    async def state_at(self, game_id: str, version: int) -> GameState:
        state: GameState | None = None
        for r in await self.read(game_id, 0, version):
            state = evolve(state, r.event)
        if state is None:
            raise GameNotFound(game_id)
        return state


async def build(store: RedisEventStore, gid: str, target_events: int) -> int:
    """Play a bot game of about ``target_events`` events into the store, snapshots
    written as the service writes them; returns its number of events."""
    rules = RuleSet.from_dict({"target_score": 2500, "knock_threshold": 0})
    names = ("basic", "basic", "basic")
    state, events = step(None, CreateGame(3, 7, rules, names))
    await store.put_meta(gid, {"seats": [{"kind": "bot", "name": n, "strategy": n}
                                         for n in names], "tokens": {}, "players": 3,
                               "hand_size": rules.hand_size, "turn_seconds": 0})
    repo = GameRepository(store)
    agents = [make_bot(n, 7 + i) for i, n in enumerate(names)]
    version = 0
    while True:  # one append per command, then maybe_snapshot, as the service does
        await repo.append(gid, events, version)
        version += len(events)
        await repo.maybe_snapshot(gid, state)
        if state.phase == GAME_OVER or version >= target_events:
            return version
        state, events = step(state, agents[state.turn].act(view(state, state.turn)))


async def timed(reads: ReadModels, gid: str, version: int, repeat: int) -> float:
    """Median seconds of ``get_state`` at ``version``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await reads.get_state(gid, "", ADMIN, version)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    prefix = f"bench-{uuid.uuid4().hex[:12]}"
    store = RedisEventStore.from_url(args.redis_url, prefix=prefix)
    try:
        gid = "long"
        total = await build(store, gid, args.events)
        snaps = await store.client.zcard(store.key(gid, "snapshots"))
        print(f"game: {total} events, {snaps} snapshots")
        print(f"{'GetState at':>14} {'cache':>5} {'before (ms)':>12} {'after (ms)':>11}")
        for version in (10, total // 2, total - 10):
            for cache in ("warm", "cold"):
                out = []
                for cls in (BeforeRepository, GameRepository):
                    if cache == "warm":
                        repo = cls(store)
                        await repo.load(gid)
                        out.append(await timed(ReadModels(repo, ADMIN), gid, version,
                                               args.repeat))
                    else:
                        runs = []
                        for _ in range(args.repeat):
                            repo = cls(store)
                            runs.append(await timed(ReadModels(repo, ADMIN), gid, version, 1))
                        out.append(statistics.median(runs))
                print(f"{version:>14} {cache:>5} {out[0] * 1e3:>12.1f} {out[1] * 1e3:>11.1f}")
    finally:
        keys = [k async for k in store.client.scan_iter(match=f"{prefix}:*")]
        if keys:
            await store.client.delete(*keys)
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
