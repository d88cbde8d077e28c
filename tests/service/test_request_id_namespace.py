"""Regressions from the service attack review (request ids, versions, message sizes)."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb

from tests.harness import HANG_GUARD

from .conftest import ADMIN_TOKEN, bots, humans

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


async def _wait_version(store, gid, version, timeout=HANG_GUARD):
    deadline = asyncio.get_running_loop().time() + timeout
    while await store.version(gid) < version:
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_client_request_id_cannot_freeze_the_server_bot(running, store):
    # a client used to be able to take the bot's own id "bot:<v>" and stall the game
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(admin_token=ADMIN_TOKEN,
        seats=humans(1) + bots("basic"), seed=7, variants={"knock_threshold": "0"}))
    gid, token = created.game_id, created.tokens[0].token
    view = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=token))).view
    while view.turn != 0:  # let the bot move first if it starts
        await asyncio.sleep(0.05)
        view = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=token))).view
    for _ in range(6):  # draw, pass, draw, pass, draw (+ turn end), using hostile ids
        v = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=token))).view
        opts = pb.CommandOptions(request_id=f"bot:{v.version + 2}")
        if "draw" in v.actions:
            await stub.Draw(pb.DrawRequest(game_id=gid, token=token, options=opts))
        elif "pass" in v.actions:
            await stub.Pass(pb.PassRequest(game_id=gid, token=token, options=opts))
        else:
            break
    # the human's turn is over: the bot must play its turn and hand it back
    deadline = asyncio.get_running_loop().time() + HANG_GUARD
    while True:
        v = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=token))).view
        if v.turn == 0 or v.phase == pb.PHASE_GAME_OVER:
            break
        assert asyncio.get_running_loop().time() < deadline, "the bot never moved"
        await asyncio.sleep(0.05)


async def test_client_request_id_cannot_disable_the_turn_timer(running, store):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=3,
                                                         turn_seconds=1))
    gid = created.game_id
    v0 = await store.version(gid)
    seat_view = None
    for t in created.tokens:
        view = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=t.token))).view
        if view.turn == t.seat:
            seat_view = (t.token, view)
    token, view = seat_view
    await stub.Draw(pb.DrawRequest(game_id=gid, token=token, options=pb.CommandOptions(
        request_id=f"timeout:{view.version + 1}")))
    await _wait_version(store, gid, v0 + 2)  # the timer's default move (pass) was applied


@pytest.mark.parametrize("options", [
    pb.CommandOptions(expected_version=-1),
    pb.CommandOptions(request_id="x" * 500),
    pb.CommandOptions(request_id="bad\nid"),
])
async def test_malformed_options_are_invalid_argument(running, store, options):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=5))
    gid = created.game_id
    before = await store.version(gid)
    for t in created.tokens:
        with pytest.raises(grpc.aio.AioRpcError) as e:
            await stub.Draw(pb.DrawRequest(game_id=gid, token=t.token, options=options))
        assert e.value.code() in (grpc.StatusCode.INVALID_ARGUMENT,
                                  grpc.StatusCode.PERMISSION_DENIED)
    assert await store.version(gid) == before


async def test_huge_malformed_token_gets_invalid_argument_not_resource_exhausted(running):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=5))
    with pytest.raises(grpc.aio.AioRpcError) as e:
        await stub.CreateGame(pb.CreateGameRequest(admin_token=ADMIN_TOKEN, seats=humans(2), seed=5,
                                                   variants={"x" * 50_000: "1"}))
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert len(e.value.details()) < 2000
    assert created.game_id


async def test_every_rpc_refuses_a_request_id_with_a_space_alike(running, store):
    # CreateGame refused a request id with a space while Draw accepted it (two copies of
    # the check had drifted); both now go through one check and give the same error
    stub = running.stub
    with pytest.raises(grpc.aio.AioRpcError) as create_err:
        await stub.CreateGame(pb.CreateGameRequest(seats=humans(2), request_id="has space"))
    created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
    gid = created.game_id
    tokens = {t.seat: t.token for t in created.tokens}
    view = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=tokens[0]))).view
    token = tokens[view.turn]  # the seat to act: its Draw is legal
    version = await store.version(gid)
    with pytest.raises(grpc.aio.AioRpcError) as draw_err:
        await stub.Draw(pb.DrawRequest(game_id=gid, token=token,
                                       options=pb.CommandOptions(request_id="has space")))
    assert create_err.value.code() == draw_err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert draw_err.value.details() == create_err.value.details() == (
        "request_id must be at most 128 printable characters without spaces")
    assert (dict(draw_err.value.trailing_metadata() or ()).get("rummy-reason")
            == dict(create_err.value.trailing_metadata() or ()).get("rummy-reason"))
    assert await store.version(gid) == version  # nothing was appended
    # a request id without whitespace still works on Draw
    ok = await stub.Draw(pb.DrawRequest(game_id=gid, token=token,
                                        options=pb.CommandOptions(request_id="no-space")))
    assert ok.result.version > version
