"""``GameService.Session`` on a real server over Redis: a seat's commands and their results
on one bidirectional stream, the other seats' events pushed to it, with the guarantees of
the unary calls: idempotent request ids, expected-version conflicts, hidden information
(I3), seat tokens, the command rate limit, the stream bounds, and cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb

from tests.harness import HANG_GUARD

from .conftest import humans, serving

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]

DRAW = pb.SESSION_COMMAND_KIND_DRAW
PASS = pb.SESSION_COMMAND_KIND_PASS


async def new_game(stub: Any) -> tuple[str, dict[int, str], pb.PlayerView]:
    """A two-seat game of humans: (game id, tokens by seat, seat 0's view)."""
    created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
    tokens = {t.seat: t.token for t in created.tokens}
    v = (await stub.GetView(pb.GetViewRequest(game_id=created.game_id,
                                              token=tokens[0]))).view
    return created.game_id, tokens, v


async def open_session(stub: Any, game_id: str, token: str, after: int = 0) -> Any:
    call = stub.Session(timeout=HANG_GUARD)
    await call.write(pb.SessionRequest(open=pb.SessionOpen(game_id=game_id, token=token,
                                                           after_version=after)))
    return call


async def command(call: Any, tag: int, kind: int, **options: Any) -> pb.SessionResult:
    """Send one command; the result with its tag (pushed events before it are dropped)."""
    await call.write(pb.SessionRequest(command=pb.SessionCommand(
        tag=tag, kind=kind, options=pb.CommandOptions(**options))))
    while True:
        msg = await call.read()
        assert msg is not grpc.aio.EOF, "the session ended"
        if msg.HasField("result"):
            assert msg.result.tag == tag
            return msg.result


async def pushed(call: Any) -> pb.Event:
    msg = await asyncio.wait_for(call.read(), HANG_GUARD)
    assert msg is not grpc.aio.EOF and msg.HasField("event"), msg
    return msg.event


async def test_commands_and_results_and_pushed_events_with_hidden_cards(store):
    async with serving(store) as r:
        gid, tokens, v = await new_game(r.stub)
        me, other = v.turn, 1 - v.turn
        mine = await open_session(r.stub, gid, tokens[me], v.version)
        theirs = await open_session(r.stub, gid, tokens[other], v.version)
        res = await command(mine, 7, DRAW, expected_version=v.version)
        assert not res.HasField("error"), res
        drawn = res.result.events[0]
        assert (drawn.type, drawn.version, drawn.card_drawn.seat) == (
            "CardDrawn", v.version + 1, me)
        assert drawn.card_drawn.HasField("card")  # the drawer sees its card
        assert res.result.version == v.version + 1
        assert not res.result.HasField("view")  # no view unless asked
        seen = await pushed(theirs)
        assert (seen.type, seen.version) == ("CardDrawn", v.version + 1)
        assert not seen.card_drawn.HasField("card")  # I3: the opponent never sees it
        res = await command(mine, 8, PASS, expected_version=v.version + 1)
        assert [e.type for e in res.result.events] == ["Passed"]
        assert (await pushed(theirs)).type == "Passed"
        res2 = await command(mine, 9, DRAW)
        # a view on request: the seat's own, with its hand and no one else's
        await mine.write(pb.SessionRequest(command=pb.SessionCommand(
            tag=10, kind=PASS, with_view=True)))
        msg = await mine.read()
        assert msg.result.tag == 10 and msg.result.result.view.seat == me
        assert len(msg.result.result.view.hand) == v.hand_sizes[me] + 2
        assert res2.result.version == v.version + 3
        for call in (mine, theirs):
            await call.done_writing()
            call.cancel()


async def test_each_event_reaches_a_seat_once_in_version_order_of_arrival(store):
    async with serving(store) as r:
        gid, tokens, v = await new_game(r.stub)
        calls = {s: await open_session(r.stub, gid, tokens[s], v.version) for s in (0, 1)}
        got: dict[int, list[int]] = {0: [], 1: []}
        turn, phase, version = v.turn, "draw", v.version
        for tag in range(1, 31):  # draw/pass with the opponent's events pushed between
            kind = DRAW if phase == "draw" else PASS
            res = await command(calls[turn], tag, kind, expected_version=version)
            assert not res.HasField("error"), res
            events = list(res.result.events)
            got[turn] += [e.version for e in events]
            for _ in events:
                got[1 - turn].append((await pushed(calls[1 - turn])).version)
            version = res.result.version
            types = [e.type for e in events]
            if "TurnEnded" in types:
                turn, phase = 1 - turn, "draw"
            else:
                phase = "pass" if kind == DRAW else "draw"
        for seat in (0, 1):
            assert sorted(got[seat]) == list(range(v.version + 1, version + 1)), seat
        for call in calls.values():
            call.cancel()


async def test_a_retried_request_id_returns_the_original_and_appends_nothing(store):
    async with serving(store) as r:
        gid, tokens, v = await new_game(r.stub)
        call = await open_session(r.stub, gid, tokens[v.turn], v.version)
        first = await command(call, 1, DRAW, request_id="draw-1")
        again = await command(call, 2, DRAW, request_id="draw-1")
        assert again.result.duplicate and not first.result.duplicate
        assert again.result.version == first.result.version == v.version + 1
        # the same id for another command: refused, the stream stays open
        reused = await command(call, 3, PASS, request_id="draw-1")
        assert reused.error.reason == "REQUEST_ID_REUSED"
        assert reused.error.code == grpc.StatusCode.ALREADY_EXISTS.value[0]
        view = (await r.stub.GetView(pb.GetViewRequest(game_id=gid,
                                                       token=tokens[0]))).view
        assert view.version == v.version + 1
        call.cancel()


async def test_a_version_conflict_and_a_refused_move_leave_the_session_open(store):
    async with serving(store) as r:
        gid, tokens, v = await new_game(r.stub)
        call = await open_session(r.stub, gid, tokens[v.turn], v.version)
        stale = await command(call, 1, DRAW, expected_version=v.version + 5)
        assert stale.error.reason == "VERSION_CONFLICT"
        assert stale.error.code == grpc.StatusCode.ABORTED.value[0]
        illegal = await command(call, 2, PASS)  # R3: a draw is due first
        assert illegal.error.reason == "ILLEGAL_MOVE" and illegal.error.rule.startswith("R3")
        theirs = await open_session(r.stub, gid, tokens[1 - v.turn], v.version)
        not_yours = await command(theirs, 1, DRAW)
        assert not_yours.error.reason == "NOT_YOUR_TURN"
        ok = await command(call, 3, DRAW, expected_version=v.version)
        assert ok.result.version == v.version + 1
        assert (await r.stub.GetView(pb.GetViewRequest(
            game_id=gid, token=tokens[0]))).view.version == v.version + 1
        for c in (call, theirs):
            c.cancel()


@pytest.mark.parametrize("token, code, reason", [
    ("", grpc.StatusCode.UNAUTHENTICATED, "NO_TOKEN"),
    ("not-a-seat-token", grpc.StatusCode.PERMISSION_DENIED, "BAD_TOKEN"),
])
async def test_a_session_needs_a_seat_token_of_the_game(store, token, code, reason):
    async with serving(store) as r:
        gid, _, _ = await new_game(r.stub)
        call = await open_session(r.stub, gid, token)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call.read()
        assert err.value.code() == code
        assert dict(err.value.trailing_metadata())["rummy-reason"] == reason
        assert r.server.streams.open == 0


async def test_an_unknown_game_a_bad_first_request_and_bad_bytes_end_the_stream(store):
    async with serving(store) as r:
        gid, tokens, _ = await new_game(r.stub)
        call = await open_session(r.stub, "no-such-game", tokens[0])
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call.read()
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        call = r.stub.Session(timeout=HANG_GUARD)
        await call.write(pb.SessionRequest(command=pb.SessionCommand(tag=1, kind=DRAW)))
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call.read()
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "open" in err.value.details()
        call = await open_session(r.stub, gid, tokens[0])
        with pytest.raises(grpc.aio.AioRpcError) as err:  # beyond the game's version
            await (await open_session(r.stub, gid, tokens[1], 10_000)).read()
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        raw = r.channel.stream_stream("/rummy_api.v1.GameService/Session")(timeout=10)
        await raw.write(b"\xff\xff\xff")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await raw.read()
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert dict(err.value.trailing_metadata())["rummy-reason"] == "MALFORMED"
        call.cancel()


async def test_commands_take_the_callers_rate_limit(store):
    async with serving(store, rate_commands=0.01, rate_burst=3) as r:
        gid, tokens, v = await new_game(r.stub)  # GetView: the first of 3 game calls
        call = await open_session(r.stub, gid, tokens[v.turn], v.version)  # the second
        ok = await command(call, 1, DRAW)  # the third
        assert not ok.HasField("error")
        limited = await command(call, 2, PASS)
        assert limited.error.reason == "RATE_LIMITED"
        assert limited.error.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        assert limited.error.retry_delay > 0
        assert await store.version(gid) == v.version + 1  # the refused pass appended nothing
        call.cancel()


async def test_sessions_count_against_the_stream_bounds_and_cancel_releases(store):
    async with serving(store, max_streams_per_game=1) as r:
        gid, tokens, v = await new_game(r.stub)
        first = await open_session(r.stub, gid, tokens[0], v.version)
        await command(first, 1, DRAW if v.turn == 0 else PASS)  # the stream is open
        assert r.server.streams.open == 1
        second = await open_session(r.stub, gid, tokens[1], v.version)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await second.read()
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert dict(err.value.trailing_metadata())["rummy-reason"] == "STREAM_LIMIT"
        first.cancel()  # the client goes: the server's push ends and the bound is freed
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        while r.server.streams.open and loop.time() - t0 < HANG_GUARD:
            await asyncio.sleep(0.01)
        assert r.server.streams.open == 0
        again = await open_session(r.stub, gid, tokens[1], v.version)
        res = await command(again, 1, PASS)  # seat 1 answers on its own session
        expected = "ILLEGAL_MOVE" if v.turn == 1 else "NOT_YOUR_TURN"
        assert res.error.reason == expected
        await again.done_writing()  # a half-close ends the session cleanly
        rest = [m async for m in _rest(again)]  # seat 0's draw, pushed to seat 1
        assert all(m.HasField("event") for m in rest)
        assert await again.code() == grpc.StatusCode.OK


async def _rest(call: Any) -> Any:
    while (msg := await call.read()) is not grpc.aio.EOF:
        yield msg


async def test_a_client_that_leaves_mid_command_logs_no_error_and_frees_its_bound(
        store, caplog):
    # the result may be written after the client has gone: counted in
    # rummy_grpc_replies_undelivered_total, never an INTERNAL error logged at ERROR
    async with serving(store) as r:
        gid, tokens, v = await new_game(r.stub)
        for _ in range(5):  # a command sent, the stream cancelled before its result
            call = await open_session(r.stub, gid, tokens[v.turn], v.version)
            await call.write(pb.SessionRequest(command=pb.SessionCommand(tag=1, kind=PASS)))
            call.cancel()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        while r.server.streams.open and loop.time() - t0 < HANG_GUARD:
            await asyncio.sleep(0.01)
        assert r.server.streams.open == 0
    errors = [rec for rec in caplog.records if rec.levelname == "ERROR"]
    assert not errors, [rec.getMessage() for rec in errors]


async def test_a_command_right_after_open_still_gets_the_catch_up_first(store):
    """Found by an attacker: ``open{after_version=0}`` then a command at once lost the
    catch-up (GameStarted, RoundStarted): the result's version marked them as sent. Every
    event after ``after_version`` now reaches the seat once, in version order, the
    catch-up before the result that follows it."""
    async with serving(store) as r:
        gid, tokens, v = await new_game(r.stub)
        call = await open_session(r.stub, gid, tokens[v.turn], 0)
        await call.write(pb.SessionRequest(command=pb.SessionCommand(
            tag=1, kind=DRAW, options=pb.CommandOptions(expected_version=v.version))))
        seen: list[int] = []
        while True:
            msg = await asyncio.wait_for(call.read(), HANG_GUARD)
            assert msg is not grpc.aio.EOF
            if msg.HasField("event"):
                seen.append(msg.event.version)
                continue
            assert not msg.result.HasField("error"), msg
            seen += [e.version for e in msg.result.result.events]
            break
        assert seen == list(range(1, v.version + 2))  # 1..version pushed, then the draw
        call.cancel()


def test_a_read_after_the_server_stopped_is_no_internal_error() -> None:
    """grpc raises ``_ServerStoppedError`` from a read of a call the stopping server no
    longer serves (seen when a session's handler reached its read after ``stop(None)``):
    nobody is left to answer, so the session ends quietly instead of logging INTERNAL."""
    from grpc._cython import cygrpc
    from rummy_grpc.session import _server_stopped
    assert _server_stopped(cygrpc._ServerStoppedError("Server already stopped."))
    assert not _server_stopped(RuntimeError("Server already stopped."))


async def test_sessions_open_when_the_server_stops_log_no_error(store, caplog):
    async with serving(store) as r:
        gid, tokens, v = await new_game(r.stub)
        calls = [await open_session(r.stub, gid, tokens[s], v.version) for s in (0, 1)]
        await r.server.stop(None)
        for call in calls:
            call.cancel()
    errors = [rec for rec in caplog.records if rec.levelname == "ERROR"]
    assert not errors, [rec.getMessage() for rec in errors]
