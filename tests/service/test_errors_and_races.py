"""Bad input gets the right status code and appends nothing; concurrent commands race safely;
retries with a request id are idempotent."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb

from .conftest import ADMIN_TOKEN, humans, rpc_error_rule

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


async def _game(stub, **kw):
    created = await stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(2), seed=21, **kw))
    tokens = {t.seat: t.token for t in created.tokens}
    view = (await stub.GetView(pb.GetViewRequest(game_id=created.game_id,
                                                 token=tokens[0]))).view
    return created.game_id, tokens, view.turn


async def _refused(call, code):
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    assert err.value.code() == code, err.value.details()
    return err.value


async def test_fifty_concurrent_clients_race_the_same_command(running, store):
    stub = running.stub
    gid, tokens, turn = await _game(stub)
    version = await store.version(gid)

    async def draw(i):
        try:
            await stub.Draw(pb.DrawRequest(
                game_id=gid, token=tokens[turn],
                options=pb.CommandOptions(expected_version=version, request_id=f"race-{i}")))
            return "ok"
        except grpc.aio.AioRpcError as e:
            return e.code().name

    results = await asyncio.gather(*(draw(i) for i in range(50)))
    assert results.count("ok") == 1
    assert results.count("ABORTED") == 49
    events = await store.read(gid)
    assert [e.version for e in events] == list(range(1, version + 2))
    assert [e.type for e in events[version:]] == ["CardDrawn"]


async def test_retried_request_id_returns_the_original_outcome(running, store):
    stub = running.stub
    gid, tokens, turn = await _game(stub)
    req = pb.DrawRequest(game_id=gid, token=tokens[turn],
                         options=pb.CommandOptions(request_id="retry-me"))
    first = (await stub.Draw(req)).result
    again = (await stub.Draw(req)).result  # a drawing is no longer allowed, yet a retry is fine
    assert again.duplicate and not first.duplicate
    assert again.version == first.version == 3
    assert [e.card_drawn.card for e in again.events] == [e.card_drawn.card for e in first.events]
    assert await store.version(gid) == 3
    # the same id for a different command is refused
    err = await _refused(stub.Pass(pb.PassRequest(
        game_id=gid, token=tokens[turn], options=pb.CommandOptions(request_id="retry-me"))),
        grpc.StatusCode.ALREADY_EXISTS)
    assert "retry-me" in err.details()
    assert await store.version(gid) == 3


async def test_bad_input_gets_the_right_code_and_appends_nothing(running, store):
    stub = running.stub
    gid, tokens, turn = await _game(stub)
    other = 1 - turn
    before = await store.version(gid)
    codes = grpc.StatusCode

    await _refused(stub.Draw(pb.DrawRequest(game_id=gid, token=tokens[other])),
                   codes.PERMISSION_DENIED)  # out of turn
    await _refused(stub.Draw(pb.DrawRequest(game_id=gid, token="not-a-token")),
                   codes.PERMISSION_DENIED)  # wrong token
    await _refused(stub.Draw(pb.DrawRequest(game_id=gid)), codes.UNAUTHENTICATED)
    await _refused(stub.Draw(pb.DrawRequest(game_id="no-such-game", token=tokens[turn])),
                   codes.NOT_FOUND)
    await _refused(stub.GetView(pb.GetViewRequest(game_id="bad id {x}")), codes.NOT_FOUND)
    # melding before drawing is against R3.6 (drawing is compulsory)
    err = await _refused(stub.Pass(pb.PassRequest(game_id=gid, token=tokens[turn])),
                         codes.FAILED_PRECONDITION)
    assert rpc_error_rule(err) == "R3.6"
    await stub.Draw(pb.DrawRequest(game_id=gid, token=tokens[turn]))
    before = await store.version(gid)

    def meld(*melds):
        return pb.MeldRequest(game_id=gid, token=tokens[turn],
                              table=[pb.Cards(cards=m) for m in melds])

    err = await _refused(stub.Meld(meld(["ZZ", "2S", "3S"])), codes.INVALID_ARGUMENT)
    assert "ZZ" in err.details()
    err = await _refused(stub.Meld(meld(["AS", "2S", "*"])), codes.INVALID_ARGUMENT)
    assert rpc_error_rule(err) == "R1.4"  # a table joker must declare its card
    # well-formed but not in the hand / not a meld: against the rules, with the rule id
    err = await _refused(stub.Meld(meld(["AS", "2S", "4S"])), codes.FAILED_PRECONDITION)
    assert rpc_error_rule(err).startswith("R")
    # a huge message is refused by the transport before any handler runs
    huge = meld(*(["AS", "2S", "3S"] for _ in range(100_000)))
    assert huge.ByteSize() > 1 << 20
    await _refused(stub.Meld(huge), codes.RESOURCE_EXHAUSTED)
    # a large but admissible message is refused by the size caps
    await _refused(stub.Meld(meld(*(["AS", "2S", "3S"] for _ in range(100)))),
                   codes.INVALID_ARGUMENT)
    assert await store.version(gid) == before

    # stale expected_version: ABORTED, nothing appended
    await _refused(stub.Pass(pb.PassRequest(game_id=gid, token=tokens[turn],
                                            options=pb.CommandOptions(expected_version=2))),
                   codes.ABORTED)
    assert await store.version(gid) == before


async def test_create_game_refuses_bad_requests(running, store):
    stub = running.stub
    codes = grpc.StatusCode
    err = await _refused(stub.CreateGame(pb.CreateGameRequest(
        seats=humans(2), variants={"no_such_variant": "1"})), codes.INVALID_ARGUMENT)
    assert "no_such_variant" in err.details()
    await _refused(stub.CreateGame(pb.CreateGameRequest(
        seats=humans(2), variants={"knock_threshold": "-1"})), codes.INVALID_ARGUMENT)
    await _refused(stub.CreateGame(pb.CreateGameRequest(seats=humans(1))),
                   codes.INVALID_ARGUMENT)
    await _refused(stub.CreateGame(pb.CreateGameRequest(seats=humans(6))),
                   codes.INVALID_ARGUMENT)
    await _refused(stub.CreateGame(pb.CreateGameRequest(
        seats=[*humans(1), pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy="nope")])),
        codes.INVALID_ARGUMENT)
    await _refused(stub.CreateGame(pb.CreateGameRequest(
        seats=[*humans(1), pb.SeatSpec()])), codes.INVALID_ARGUMENT)
    err = await _refused(stub.CreateGame(pb.CreateGameRequest(seats=humans(2),
                                                              turn_seconds=-1)),
                         codes.INVALID_ARGUMENT)
    # a well-formed number out of range: a bad request, not malformed bytes
    assert dict(err.trailing_metadata())["rummy-reason"] == "BAD_REQUEST"
    assert "turn_seconds must be 0..86400" in err.details()
    assert await store.list_games() == []


async def test_metrics_are_recorded(running):
    from prometheus_client import REGISTRY
    stub = running.stub
    gid, tokens, turn = await _game(stub)

    def sample(name, **labels):
        return REGISTRY.get_sample_value(name, labels) or 0.0

    ok = sample("rummy_commands_total", command="draw", outcome="ok")
    bad = sample("rummy_commands_total", command="knock", outcome="illegal_move")
    appended = sample("rummy_events_appended_total", type="CardDrawn")
    await stub.Draw(pb.DrawRequest(game_id=gid, token=tokens[turn]))
    with pytest.raises(grpc.aio.AioRpcError):
        await stub.Draw(pb.DrawRequest(game_id=gid, token=tokens[turn]))
    with pytest.raises(grpc.aio.AioRpcError):
        await stub.Knock(pb.KnockRequest(game_id=gid, token=tokens[turn]))
    assert sample("rummy_commands_total", command="draw", outcome="ok") == ok + 1
    assert sample("rummy_events_appended_total", type="CardDrawn") == appended + 1
    assert sample("rummy_commands_total", command="knock", outcome="illegal_move") == bad + 1
    assert sample("rummy_grpc_server_handling_seconds_count",
                  method="/rummy_api.v1.GameService/Draw") >= 2
    assert sample("rummy_grpc_server_handled_total", method="/rummy_api.v1.GameService/Draw",
                  code="FAILED_PRECONDITION") >= 1
    assert sample("rummy_rule_validation_seconds_count") > 0
    assert sample("rummy_event_append_seconds_count") > 0


async def test_reads_refuse_unknown_games_bad_tokens_and_bad_versions(running):
    stub = running.stub
    gid, tokens, _ = await _game(stub)
    codes = grpc.StatusCode

    async def first(req):
        async for msg in stub.StreamEvents(req):
            return msg

    await _refused(first(pb.StreamEventsRequest(game_id="nope")), codes.NOT_FOUND)
    await _refused(first(pb.StreamEventsRequest(game_id=gid, token="bad")),
                   codes.PERMISSION_DENIED)
    await _refused(first(pb.StreamEventsRequest(game_id=gid, after_version=-1)),
                   codes.INVALID_ARGUMENT)
    await _refused(stub.GetState(pb.GetStateRequest(game_id=gid, version=99)),
                   codes.INVALID_ARGUMENT)
    await _refused(stub.GetEvents(pb.GetEventsRequest(game_id="nope")), codes.NOT_FOUND)
    # mid-game, a spectator's log is redacted
    log = await stub.GetEvents(pb.GetEventsRequest(game_id=gid))
    assert not log.full_information
    assert not log.events[0].game_started.HasField("seed")
    assert not log.events[1].round_started.deck
    mine = await stub.GetEvents(pb.GetEventsRequest(game_id=gid, token=tokens[0]))
    assert len(mine.events[1].round_started.hand) == 10
