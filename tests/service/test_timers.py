"""Turn timers: the default move of the phase is applied exactly once when the limit expires,
with the version it expired at, so a late move and the timeout never both win."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.server import create_server

from tests.harness import HANG_GUARD

from .conftest import ADMIN_TOKEN, humans

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


async def _wait_version(store, gid, version, timeout=HANG_GUARD):
    deadline = time.monotonic() + timeout
    while await store.version(gid) < version:
        assert time.monotonic() < deadline, f"game stayed below version {version}"
        await asyncio.sleep(0.05)


async def test_turn_timer_applies_the_default_move_exactly_once(running, store):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=9,
                                                         turn_seconds=1))
    gid = created.game_id
    tokens = {t.seat: t.token for t in created.tokens}
    events = await store.read(gid)
    assert events[0].data["turn_seconds"] == 1  # recorded in GameStarted
    view = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=tokens[0]))).view
    turn = view.turn
    assert view.turn_deadline == pytest.approx(events[-1].ts + 1, abs=0.01)

    await _wait_version(store, gid, 3)
    await asyncio.sleep(0.3)  # well before the next expiry (1 s after the draw)
    after = await store.read(gid)
    assert len(after) == 3  # exactly one default move
    assert after[2].type == "CardDrawn" and after[2].data["seat"] == turn
    assert after[2].ts - events[-1].ts >= 0.99
    # a late move decided on the expired version loses
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.Draw(pb.DrawRequest(game_id=gid, token=tokens[turn],
                                       options=pb.CommandOptions(expected_version=2)))
    assert err.value.code() == grpc.StatusCode.ABORTED
    # the next decision (meld or pass) times out to a pass, once
    await _wait_version(store, gid, 4)
    await asyncio.sleep(0.3)
    after = await store.read(gid)
    assert [e.type for e in after[3:]] == ["Passed"]


async def test_a_move_before_the_limit_wins_and_rearms_the_timer(running, store):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=9,
                                                         turn_seconds=2))
    gid = created.game_id
    tokens = {t.seat: t.token for t in created.tokens}
    turn = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=tokens[0]))).view.turn
    await asyncio.sleep(0.5)
    await stub.Draw(pb.DrawRequest(game_id=gid, token=tokens[turn],
                                   options=pb.CommandOptions(expected_version=2)))
    await asyncio.sleep(1.0)  # 1.5 s after creation, 1 s after the draw: no timeout yet
    assert await store.version(gid) == 3
    await _wait_version(store, gid, 4)
    assert (await store.read(gid, 3))[0].type == "Passed"


async def test_timers_survive_a_restart(store):
    server, port = create_server("127.0.0.1:0", store, admin_token=ADMIN_TOKEN)
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
    created = await pb_grpc.GameServiceStub(channel).CreateGame(
        pb.CreateGameRequest(admin_token=ADMIN_TOKEN, seats=humans(2), seed=9, turn_seconds=1))
    await channel.close()
    await server.stop(None)  # the timer dies with the server
    await asyncio.sleep(1.2)
    assert await store.version(created.game_id) == 2
    server2, _ = create_server("127.0.0.1:0", store)
    await server2.start()  # re-arms from the last event's ts: already overdue, fires now
    try:
        await _wait_version(store, created.game_id, 3)  # overdue: fires at once
    finally:
        await server2.stop(None)
    assert (await store.read(created.game_id, 2))[0].type == "CardDrawn"
