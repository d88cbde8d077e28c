"""Two servers over one event store: stale caches cost a retry, never a wrong append, and
server bots driven by both servers still play each move exactly once."""

from __future__ import annotations

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.server import create_server

from rummy.events import from_dict
from rummy.invariants import verify_log

from .conftest import ADMIN_TOKEN, bots, humans, play_turns

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


async def test_players_alternating_between_two_servers(running, store):
    other, port = create_server("127.0.0.1:0", store)
    await other.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub_b = pb_grpc.GameServiceStub(channel)
        created = await running.stub.CreateGame(pb.CreateGameRequest(admin_token=ADMIN_TOKEN,
            seats=humans(2), variants={"target_score": "30"}, seed=31))
        tokens = {t.seat: t.token for t in created.tokens}
        # seat 0 talks to server A, seat 1 to server B: each server's cache is always behind
        last = await play_turns({0: running.stub, 1: stub_b}, created.game_id, tokens,
                                {0: "basic", 1: "basic"})
        assert last.phase == pb.PHASE_GAME_OVER
    finally:
        await channel.close()
        await other.stop(None)
    events = await store.read(created.game_id)
    assert [e.version for e in events] == list(range(1, len(events) + 1))
    *_, state = verify_log([from_dict(e.data) for e in events])  # every event legal
    assert state.is_over


async def test_server_bots_driven_by_two_servers_move_once(running, store):
    created = await running.stub.CreateGame(pb.CreateGameRequest(
        seats=bots("basic", "random", "basic", "random"), variants={"target_score": "40"},
        seed=32))
    other, port = create_server("127.0.0.1:0", store)
    await other.start()  # resumes the active game: now both servers play its bots
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub_b = pb_grpc.GameServiceStub(channel)
        seen = [m.event async for m in stub_b.StreamEvents(
            pb.StreamEventsRequest(game_id=created.game_id))]
    finally:
        await channel.close()
        await other.stop(None)
    assert seen[-1].type == "GameEnded"
    assert [e.version for e in seen] == list(range(1, len(seen) + 1))
    events = await store.read(created.game_id)
    assert len(events) == len(seen)
    *_, state = verify_log([from_dict(e.data) for e in events])  # legal, each move once
    assert state.is_over
