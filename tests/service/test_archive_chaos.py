"""Retention under kills (real processes): 1,000 finished games move from a private
``redis-server`` to PostgreSQL through ``rummy serve --retain-finished`` while the server
(the mover) and Redis are SIGKILLed and started again; every game stays readable at every
check, and ends in exactly one place, the archive, with the same events, meta and feed
summaries (each once)."""

from __future__ import annotations

import asyncio
import collections
import random
import time
from pathlib import Path

import pytest
from rummy_store import RedisEventStore
from rummy_store.archive import PgArchive
from rummy_store.sealed import GameStore

from tests.chaos_helpers import free_port, start_redis, start_server
from tests.service.archive_helpers import digest, write_game

pytestmark = [pytest.mark.redis, pytest.mark.chaos, pytest.mark.asyncio,
              pytest.mark.timeout(900)]

GAMES = 1000
LEGACY = 300  # written plaintext, as a release before sealing did
PREFIX = "chaos-archive"


def _stores(url: str, pg: tuple[str, str]) -> tuple[RedisEventStore, GameStore]:
    raw = RedisEventStore.from_url(url, prefix=PREFIX)
    return raw, GameStore(raw, PgArchive(pg[0], schema=pg[1]))


async def _check_readable(gs: GameStore, expected: dict[str, str], sample: list[str]) -> int:
    """Every sampled game reads whole, from Redis or from the archive; returns how many
    were checked (a Redis that is still loading skips the check)."""
    n = 0
    for gid in sample:
        events = await gs.read(gid)
        assert events, f"game {gid} readable nowhere"
        assert digest(events) == expected[gid], gid
        n += 1
    return n


async def test_a_thousand_games_archived_under_kills_each_readable_exactly_once(
        tmp_path: Path, pg_archive: tuple[str, str]) -> None:
    rng = random.Random(7)
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    data = tmp_path / "redis"
    data.mkdir()
    redis_proc = start_redis(port, data)
    raw, gs = _stores(url, pg_archive)
    expected: dict[str, str] = {}
    for i in range(GAMES):
        gid = f"g{i:04d}"
        await write_game(raw if i < LEGACY else gs, gid, seed=i % 12,
                         names=(f"Name{i}a", f"Name{i}b"))
        expected[gid] = digest(await gs.read(gid))
    await raw.close()
    await asyncio.sleep(0.1)
    args = ("--retain-finished", "0.05", "--archive-url", pg_archive[0],
            "--archive-schema", pg_archive[1], "--bot-strategies", "random")
    server, _ = start_server(url, PREFIX, tmp_path, "mover", *args)
    kills: collections.Counter[str] = collections.Counter()
    checked = both = 0
    deadline = time.monotonic() + 600
    try:
        while time.monotonic() < deadline:
            await asyncio.sleep(rng.uniform(0.2, 1.5))
            if kills["redis"] <= kills["server"] and rng.random() < 0.5:
                redis_proc.kill()
                redis_proc.wait()
                kills["redis"] += 1
                redis_proc = start_redis(port, data)
            else:
                server.kill()
                server.wait()
                kills["server"] += 1
                server, _ = start_server(url, PREFIX, tmp_path, f"mover{kills['server']}",
                                         *args)
            raw, gs = _stores(url, pg_archive)
            try:
                for _ in range(50):  # Redis replays its append-only file first
                    try:
                        left = await raw.client.zcard(f"{PREFIX}:games")
                        break
                    except Exception:  # noqa: BLE001 - LOADING, or not accepting yet
                        await asyncio.sleep(0.1)
                else:
                    pytest.fail("the private Redis did not come back")
                checked += await _check_readable(gs, expected, rng.sample(sorted(expected), 25))
                in_redis = {g for g in await raw.client.zrange(f"{PREFIX}:games", 0, -1)}
                archived = {g for g in expected if g in in_redis
                            and await gs.archive.has_game(g)}  # type: ignore[union-attr]
                both = max(both, len(archived))  # a move caught between commit and delete
            finally:
                await gs.close()
            if left == 0 and kills["redis"] >= 3 and kills["server"] >= 3:
                break
        else:
            pytest.fail(f"games still in Redis after 600 s ({kills})")
    finally:
        server.kill()
        server.wait()
    raw, gs = _stores(url, pg_archive)
    try:
        archive = gs.archive
        assert archive is not None
        for gid, hashed in expected.items():
            in_redis = await raw.exists(gid)
            in_archive = await archive.has_game(gid)
            assert (in_redis, in_archive) == (False, True), gid  # exactly one place
            assert digest(await gs.read(gid)) == hashed, gid
            kinds = [h.summary["kind"] for h in await gs.results_history(gid)]
            assert kinds == ["created", "ended"], (gid, kinds)  # each summary once
        assert await archive.count_games() == GAMES
        left = [k async for k in raw.client.scan_iter(match=f"{PREFIX}:{{g*")]
        assert left == []  # no key of any game stayed behind
        print(f"archived {GAMES} games under {dict(kills)} kills; {checked} reads checked "
              f"during the run; at most {both} games seen in both places after a restart")
    finally:
        await gs.close()
        redis_proc.kill()
        redis_proc.wait()
