"""End-to-end play through the real API (real stubs, real server on port 0, real Redis)."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc

from rummy.events import from_dict
from rummy.evolve import replay

from .conftest import ADMIN_TOKEN, bots, humans, play_turns

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]

SHORT = {"target_score": "40"}  # a short game: a few rounds


async def test_two_clients_play_a_full_game(running, store):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), variants=SHORT,
                                                         seed=11))
    assert created.version == 2 and len(created.tokens) == 2
    tokens = {t.seat: t.token for t in created.tokens}
    # two clients, each on its own channel, each playing its own seat
    ch2 = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
    try:
        stub2 = pb_grpc.GameServiceStub(ch2)
        last = await play_turns({0: stub, 1: stub2}, created.game_id, tokens,
                                {0: "basic", 1: "random"})
    finally:
        await ch2.close()
    assert last.phase == pb.PHASE_GAME_OVER
    assert max(last.result.final) > 0 and list(last.result.winners)
    # the store holds a consistent log: replaying it yields the same final version (I4)
    stored = await store.read(created.game_id)
    state = replay(from_dict(e.data) for e in stored)
    assert state is not None and state.is_over and state.version == last.version
    assert [e.version for e in stored] == list(range(1, len(stored) + 1))
    # once the game is over the full log is public
    full = await stub.GetEvents(pb.GetEventsRequest(game_id=created.game_id))
    assert full.full_information and len(full.events) == len(stored)
    assert full.events[1].round_started.deck  # the deck order is shown after the game
    assert not await store.list_games(active_only=True)


async def test_backend_watches_three_server_bots_through_stream_events(running, store):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        seats=bots("basic", "random", "basic"), variants=SHORT, seed=3))
    assert not created.tokens  # no human seat, no token
    seen = []
    async for msg in stub.StreamEvents(pb.StreamEventsRequest(game_id=created.game_id)):
        seen.append(msg.event)
    assert seen[-1].type == "GameEnded"
    assert [e.version for e in seen] == list(range(1, len(seen) + 1))
    # a spectator sees no seed, no deck order, no drawn card, no deal
    assert not seen[0].game_started.HasField("seed")
    for e in seen:
        if e.type == "RoundStarted":
            assert not e.round_started.deck and not e.round_started.hand
        if e.type == "CardDrawn":
            assert not e.card_drawn.HasField("card")
    assert len(seen) == await store.version(created.game_id)


async def test_stream_resumes_from_a_version(running):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        seats=bots("random", "random"), variants=SHORT, seed=5))
    first = []
    async for msg in stub.StreamEvents(pb.StreamEventsRequest(game_id=created.game_id)):
        first.append(msg.event)
        if len(first) == 10:
            break
    rest = [m.event async for m in stub.StreamEvents(
        pb.StreamEventsRequest(game_id=created.game_id, after_version=10))]
    assert rest[0].version == 11 and rest[-1].type == "GameEnded"


async def test_human_against_server_bot_gets_bot_moves_in_the_response(running):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(admin_token=ADMIN_TOKEN,
        seats=[*humans(1), *bots("basic")], variants=SHORT, seed=8))
    token = created.tokens[0].token
    view = (await stub.GetView(pb.GetViewRequest(game_id=created.game_id, token=token))).view
    # whoever dealt, the human is the one to act once the bot has played
    assert view.turn == 0 and list(view.actions)
    last = await play_turns(stub, created.game_id, {0: token}, {0: "basic"})
    assert last.phase == pb.PHASE_GAME_OVER


async def test_admin_sees_full_state_mid_game_and_players_do_not(running):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=4))
    gid, tok = created.game_id, created.tokens[0].token
    admin = await stub.GetState(pb.GetStateRequest(game_id=gid, admin_token=ADMIN_TOKEN))
    assert admin.full_information and len(admin.hands) == 2 and len(admin.stock) == 33
    player = await stub.GetState(pb.GetStateRequest(game_id=gid, token=tok))
    assert not player.full_information and not player.hands and not player.stock
    assert player.view.seat == 0 and len(player.view.hand) == 10
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.GetEvents(pb.GetEventsRequest(game_id=gid, admin_token="wrong"))
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    at1 = await stub.GetState(pb.GetStateRequest(game_id=gid, token=tok, version=1))
    assert at1.version == 1 and not at1.view.hand


async def test_health_and_reflection(running):
    health = health_pb2_grpc.HealthStub(running.channel)
    for service in ("", "rummy_api.v1.GameService"):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
    refl = reflection_pb2_grpc.ServerReflectionStub(running.channel)

    async def ask():
        yield reflection_pb2.ServerReflectionRequest(list_services="")

    async for reply in refl.ServerReflectionInfo(ask()):
        names = {s.name for s in reply.list_services_response.service}
        assert "rummy_api.v1.GameService" in names
        break
    await asyncio.sleep(0)


async def test_every_past_version_has_a_phase(running):
    # "enums, not strings": the core's transient phases map one
    # to one to proto values, so no version of a game answers PHASE_UNSPECIFIED
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        seats=bots("random", "random"), variants={"target_score": "20"}, seed=9))
    async for _ in stub.StreamEvents(pb.StreamEventsRequest(game_id=created.game_id)):
        pass
    last = await stub.GetState(pb.GetStateRequest(game_id=created.game_id,
                                                  admin_token=ADMIN_TOKEN))
    phases = set()
    for v in range(1, last.version + 1):
        at = await stub.GetState(pb.GetStateRequest(game_id=created.game_id, version=v,
                                                    admin_token=ADMIN_TOKEN))
        assert at.view.phase != pb.PHASE_UNSPECIFIED, f"version {v}"
        phases.add(at.view.phase)
    assert {pb.PHASE_DEALING, pb.PHASE_ROUND_SCORED, pb.PHASE_GAME_OVER} <= phases


async def test_health_list_is_served_without_a_traceback(running, caplog):
    # the library's List answered UNIMPLEMENTED and logged a traceback
    import logging
    caplog.set_level(logging.DEBUG)
    health = health_pb2_grpc.HealthStub(running.channel)
    reply = await health.List(health_pb2.HealthListRequest())
    statuses = {name: s.status for name, s in reply.statuses.items()}
    assert statuses[""] == health_pb2.HealthCheckResponse.SERVING
    assert statuses["rummy_api.v1.GameService"] == health_pb2.HealthCheckResponse.SERVING
    assert not [r for r in caplog.records if r.exc_info]
