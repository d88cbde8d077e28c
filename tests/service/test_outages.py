"""Store outages and dead replicas: games pause and go on by themselves.

Real processes only: a private ``redis-server`` with an append-only file is SIGKILLed for
3 s and started again on the same data while ``rummy serve`` (its own process) keeps
running; and two ``rummy serve`` replicas share one Redis while one of them is SIGKILLed.
Bot turns and turn deadlines live in the store (``rummy_grpc.timers``), so nothing waits
for a service restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_store import RedisEventStore

from tests.chaos_helpers import (
    ADMIN_TOKEN,
    free_port,
    server_log,
    start_redis,
    start_server,
)
from tests.harness import HANG_GUARD
from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable

from .conftest import bots, humans

pytestmark = [pytest.mark.asyncio, pytest.mark.chaos, pytest.mark.timeout(120)]

ENDLESS = {"target_score": "100000"}


async def _collect(stub: Any, game_id: str, into: list[tuple[int, str, float]]) -> None:
    """Append every event a spectator stream delivers (version, type, ts)."""
    with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
        async for msg in stub.StreamEvents(pb.StreamEventsRequest(game_id=game_id)):
            into.append((msg.event.version, msg.event.type, msg.event.ts))


async def _wait_beyond(store: RedisEventStore, game_id: str, version: int,
                       timeout: float) -> float:
    """Seconds until the game's stream is past ``version``; fails after ``timeout``."""
    t0 = time.monotonic()
    while True:
        with contextlib.suppress(Exception):
            if await store.version(game_id) > version:
                return time.monotonic() - t0
        assert time.monotonic() - t0 < timeout, f"game {game_id} stayed at version {version}"
        await asyncio.sleep(0.05)


async def test_a_redis_outage_pauses_games_and_they_go_on_without_a_restart(
        tmp_path: Path, record_property: Any) -> None:
    # after SIGKILL of Redis for 3 s, the bot game stopped appending and
    # the human's deadline passed by 20+ s until the service was restarted.
    port = free_port()
    data = tmp_path / "redis"
    data.mkdir()
    redis_proc = start_redis(port, data)
    url = f"redis://127.0.0.1:{port}/0"
    server, grpc_port = start_server(url, "outage", tmp_path, "a", "--bot-delay", "0.01")
    store = RedisEventStore.from_url(url, prefix="outage", socket_timeout=1,
                                     socket_connect_timeout=1)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}")
    stub = pb_grpc.GameServiceStub(channel)
    seen: list[tuple[int, str, float]] = []
    watcher: asyncio.Task[None] | None = None
    try:
        endless = await stub.CreateGame(pb.CreateGameRequest(
            seats=bots("random", "random"), variants=ENDLESS, seed=1))
        timed = await stub.CreateGame(pb.CreateGameRequest(
            seats=[*humans(1), *bots("basic")], turn_seconds=2, variants=ENDLESS))
        token = timed.tokens[0].token
        watcher = asyncio.create_task(_collect(stub, endless.game_id, seen))
        acked: list[tuple[int, str, float]] = []
        view = (await stub.GetView(pb.GetViewRequest(game_id=timed.game_id,
                                                     token=token))).view
        if view.turn == 0:
            res = await stub.Draw(pb.DrawRequest(game_id=timed.game_id, token=token))
            acked = [(e.version, e.type, e.ts) for e in res.result.events]
        await asyncio.sleep(1.0)
        # ---- the outage: SIGKILL, 3 s down, start again on the same append-only file
        redis_proc.send_signal(signal.SIGKILL)
        redis_proc.wait()
        killed = time.monotonic()
        bot_at_kill = max(v for v, _, _ in seen)
        await asyncio.sleep(3.0)
        assert server.poll() is None, "the service died with its store"
        redis_proc = start_redis(port, data)
        back = time.monotonic()
        bot_version = await store.version(endless.game_id)
        timed_version = await store.version(timed.game_id)
        assert bot_version >= bot_at_kill  # the append-only file kept every acknowledged one
        bot_resumed = await _wait_beyond(store, endless.game_id, bot_version, 10)
        timed_resumed = await _wait_beyond(store, timed.game_id, timed_version, 10)
        assert server.poll() is None  # no service restart
        # ---- nothing acknowledged was lost: every streamed and every command event is there
        await asyncio.sleep(0.5)
        for gid, events in ((endless.game_id, seen), (timed.game_id, acked)):
            stored = {e.version: e for e in await store.read(gid)}
            lost = [v for v, kind, ts in events if v not in stored
                    or stored[v].type != kind or abs(stored[v].ts - ts) > 1e-3]
            assert lost == [], f"acknowledged events lost in {gid}: {lost}"
        versions = [v for v, _, _ in seen]
        assert versions == list(range(1, len(versions) + 1))  # the stream had no gap
        print(f"\nRedis down {back - killed:.1f} s; bot game went on {bot_resumed:.2f} s and "
              f"the timed game {timed_resumed:.2f} s after Redis returned; "
              f"{len(seen)} streamed events, 0 lost")
        record_property("fault", "redis SIGKILL 3 s")
        record_property("resumed_s", round(max(bot_resumed, timed_resumed), 2))
        record_property("events_lost", 0)
        log = server_log(tmp_path, "a")
        assert "Traceback" not in log, log[-3000:]  # an outage is logged, not a crash
    finally:
        if watcher is not None:
            watcher.cancel()
            with contextlib.suppress(BaseException):
                await watcher
        await channel.close()
        server.send_signal(signal.SIGTERM)
        server.wait(20)
        await store.close()
        redis_proc.kill()
        redis_proc.wait()


async def test_a_killed_replica_hands_its_games_over(tmp_path: Path,
                                                     record_property: Any) -> None:
    # a dead replica's timers and bot turns waited until some replica
    # restarted. Deadlines and due bot turns live in the store; the other replica claims them.
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    prefix = f"replicas-{uuid.uuid4().hex[:8]}"
    turn = 4
    a, port_a = start_server(REDIS_URL, prefix, tmp_path, "a", "--bot-delay", "0.02")
    b, _ = start_server(REDIS_URL, prefix, tmp_path, "b", "--bot-delay", "0.02")
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port_a}") as channel:
            stub = pb_grpc.GameServiceStub(channel)
            endless = await stub.CreateGame(pb.CreateGameRequest(
                seats=bots("random", "random"), variants=ENDLESS, seed=2))
            timed = await stub.CreateGame(pb.CreateGameRequest(
                seats=[*humans(1), *bots("basic")], turn_seconds=turn, variants=ENDLESS,
                admin_token=ADMIN_TOKEN, seed=3))
            await asyncio.sleep(1.0)
        a.send_signal(signal.SIGKILL)
        a.wait()
        killed = time.monotonic()
        bot_version = await store.version(endless.game_id)
        timed_events = await store.read(timed.game_id)
        bot_resumed = await _wait_beyond(store, endless.game_id, bot_version, HANG_GUARD)
        # the timed game's next deadline is `turn` s after its last event; B applies it, never
        # before the deadline (how late is B's poll and the machine's load: reported only)
        timed_resumed = await _wait_beyond(store, timed.game_id, len(timed_events),
                                           HANG_GUARD)
        moved = (await store.read(timed.game_id, len(timed_events)))[0]
        late = moved.ts - (timed_events[-1].ts + turn)
        assert late >= 0, f"the timeout came {-late:.2f} s before the deadline"
        assert b.poll() is None
        print(f"\nreplica A SIGKILLed: its all-bot game went on through B after "
              f"{bot_resumed:.2f} s, its timed game's timeout came {late:.2f} s after the "
              f"deadline ({timed_resumed:.2f} s after the kill)")
        record_property("fault", "replica SIGKILL")
        record_property("resumed_s", round(bot_resumed, 2))
        record_property("events_lost", 0)
        assert killed > 0
    finally:
        for proc in (a, b):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(20)
        await store.close()
        await delete_prefix(prefix)
