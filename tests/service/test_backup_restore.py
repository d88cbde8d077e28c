"""``rummy backup`` / ``rummy restore`` on real processes: a store that a real ``rummy
serve`` wrote (finished and running games, a results-feed group) is backed up from the
shared Redis, restored into an empty private ``redis-server``, and a real ``rummy serve``
on it serves every game at the same version with the same events; the feed group keeps
its position. A file cut short and a target that holds the prefix are refused, with
nothing written."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_store import RedisEventStore

from tests.chaos_helpers import ROOT, start_server
from tests.private_redis import private_redis
from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable

from .conftest import ADMIN_TOKEN, bots, humans

pytestmark = [pytest.mark.asyncio, pytest.mark.redis, pytest.mark.timeout(600)]


def _rummy(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}")
    return subprocess.run([sys.executable, "-m", "rummy_cli", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


async def _all_events(stub: pb_grpc.GameServiceStub, game_id: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    after = 0
    while True:
        page = await stub.GetEvents(pb.GetEventsRequest(
            game_id=game_id, admin_token=ADMIN_TOKEN, after_version=after))
        out += [(e.version, e.type) for e in page.events]
        if not page.next_after_version:
            return out
        after = page.next_after_version


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(10)
    if proc.poll() is None:
        proc.kill()
        proc.wait()


async def test_a_backup_restored_into_an_empty_redis_serves_every_game(
        tmp_path: Path, prefix: str, record_property: Any) -> None:
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    source, port = start_server(REDIS_URL, prefix, tmp_path, "source")
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = pb_grpc.GameServiceStub(channel)
    try:
        finished = [(await stub.CreateGame(pb.CreateGameRequest(
            seats=bots("random", "basic"), variants={"target_score": "1"}, seed=i))).game_id
            for i in range(12)]
        running = []
        for _ in range(8):  # human games waiting for a move: active, with idle expiry
            created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
            running.append((created.game_id, created.tokens[0].token))
        deadline = time.monotonic() + 120
        while True:
            ends = [(await store.read(g))[-1].type for g in finished]
            if all(t == "GameEnded" for t in ends):
                break
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        feed = await store.results_read("ratings", "r", count=5, block_ms=10)
        await store.results_ack("ratings", [e.id for e in feed])
        games = finished + [g for g, _ in running]
        before = {g: await _all_events(stub, g) for g in games}
        status_before = await store.results_status("ratings")
    finally:
        await channel.close()
        _stop(source)
    out = tmp_path / "store.bak"
    done = _rummy("backup", "--redis-url", REDIS_URL, "--prefix", prefix, str(out))
    assert done.returncode == 0, done.stderr
    keys = int(done.stderr.split("backed up ")[1].split()[0])
    with gzip.open(out, "rb") as f:
        assert sum(1 for _ in f) == keys + 2  # header, the keys, trailer
    with private_redis(tmp_path) as target:
        url = target.url()
        # a file cut short is refused before anything is written
        cut = tmp_path / "cut.bak"
        cut.write_bytes(gzip.compress(gzip.decompress(out.read_bytes())[:-200]))
        refused = _rummy("restore", "--redis-url", url, "--quiet", str(cut))
        assert refused.returncode == 1 and "cut short" in refused.stderr, refused.stderr
        client = redis.Redis.from_url(url)
        assert client.dbsize() == 0
        restored = _rummy("restore", "--redis-url", url, str(out))
        assert restored.returncode == 0, restored.stderr
        assert f"restored {keys} keys" in restored.stderr
        assert client.dbsize() == keys
        again = _rummy("restore", "--redis-url", url, "--quiet", str(out))
        assert again.returncode == 1 and "already holds keys" in again.stderr
        client.close()
        # ---- a real rummy serve on the restored Redis serves every game as it was
        server, port2 = start_server(url, prefix, tmp_path, "restored")
        channel2 = grpc.aio.insecure_channel(f"127.0.0.1:{port2}")
        stub2 = pb_grpc.GameServiceStub(channel2)
        store2 = RedisEventStore.from_url(url, prefix=prefix)
        try:
            for g in games:
                assert await _all_events(stub2, g) == before[g], g
            for g, token in running:  # a running game goes on from where it was
                view = (await stub2.GetView(pb.GetViewRequest(game_id=g, token=token))).view
                assert view.version == before[g][-1][0]
            listed = set(await store2.list_games(limit=1000))
            assert listed == set(games)
            assert await store2.results_status("ratings") == status_before
            rest = await store2.results_read("ratings", "r", count=100, block_ms=10)
            assert len(rest) == status_before.length - 5  # the group's position survived
        finally:
            await store2.close()
            await channel2.close()
            _stop(server)
    await store.close()
    await delete_prefix(prefix)
    record_property("keys", keys)
    print(f"\n{len(games)} games, {keys} keys backed up "
          f"({out.stat().st_size} bytes gzip) and restored; every game at its version")
