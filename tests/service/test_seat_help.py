"""``GetLegalActions``, ``GetHint`` and ``CheckMeld`` on a real server (memory store):
answers from the seat's own view (I3), the hint priced in the rate limit, ``--hints off``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.convert import view_from_proto
from rummy_grpc.help import HINT_COST
from rummy_store.memory import MemoryEventStore

from rummy.advice import hint, legal_moves
from rummy.melds import format_table
from tests.chaos_helpers import served_server
from tests.redis_helpers import REDIS_URL

from .conftest import ADMIN_TOKEN, humans, rpc_error_rule, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]


async def _game(stub: Any, seed: int = 11) -> tuple[str, dict[int, str]]:
    created = await stub.CreateGame(pb.CreateGameRequest(
        seats=humans(2), seed=seed, admin_token=ADMIN_TOKEN))
    return created.game_id, {t.seat: t.token for t in created.tokens}


async def _refused(coro: Any) -> tuple[grpc.StatusCode, str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await coro
    md = dict(err.value.trailing_metadata() or ())
    return err.value.code(), md.get("rummy-reason", ""), err.value.details() or ""


async def test_legal_actions_and_hint_follow_the_seat_through_a_game() -> None:
    """A whole game played by following GetHint, every answer checked against the core
    run on the seat's own view (GetView), and the other seat's legal actions empty."""
    async with serving(MemoryEventStore()) as running:
        stub = running.stub
        game_id, tokens = await _game(stub)
        melds = 0
        for _ in range(2000):
            public = (await stub.GetView(pb.GetViewRequest(game_id=game_id))).view
            if public.phase == pb.PHASE_GAME_OVER:
                break
            seat = public.turn
            token, other = tokens[seat], tokens[1 - seat]
            msg = (await stub.GetView(pb.GetViewRequest(game_id=game_id, token=token))).view
            own = view_from_proto(msg)
            legal = await stub.GetLegalActions(pb.GetLegalActionsRequest(
                game_id=game_id, token=token))
            expected = legal_moves(own)
            assert legal.version == msg.version
            assert list(legal.actions) == list(msg.actions)
            assert pb.MeldAvailability.Name(legal.meld) == \
                f"MELD_AVAILABILITY_{expected.meld.upper()}"
            idle = await stub.GetLegalActions(pb.GetLegalActionsRequest(
                game_id=game_id, token=other))
            assert list(idle.actions) == [] and idle.meld == pb.MELD_AVAILABILITY_NOT_NOW
            # a hint for the seat not to act is refused as its command would be (R3)
            code, reason, _ = await _refused(stub.GetHint(pb.GetHintRequest(
                game_id=game_id, token=other)))
            assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_TURN")
            h = await stub.GetHint(pb.GetHintRequest(game_id=game_id, token=token))
            core = hint(own)
            assert pb.Action.Name(h.action) == f"ACTION_{core.kind.upper()}"
            assert h.version == msg.version and h.points == core.points and h.reason
            assert h.action in msg.actions
            opts = pb.CommandOptions(expected_version=h.version)
            if h.action == pb.ACTION_MELD:
                assert [list(m.cards) for m in h.table] == format_table(core.table)
                assert legal.meld == pb.MELD_AVAILABILITY_POSSIBLE
                checked = await stub.CheckMeld(pb.CheckMeldRequest(
                    game_id=game_id, token=token, table=h.table,
                    expected_version=h.version))
                assert list(checked.cards) == list(h.cards)
                assert checked.points == h.points and checked.version == h.version
                await stub.Meld(pb.MeldRequest(game_id=game_id, token=token,
                                               table=h.table, options=opts))
                melds += 1
            else:
                if h.action == pb.ACTION_PASS:
                    assert legal.meld == pb.MELD_AVAILABILITY_IMPOSSIBLE and h.optimal
                method = {pb.ACTION_DRAW: stub.Draw, pb.ACTION_PASS: stub.Pass,
                          pb.ACTION_KNOCK: stub.Knock, pb.ACTION_END_TURN: stub.EndTurn}
                request = {pb.ACTION_DRAW: pb.DrawRequest, pb.ACTION_PASS: pb.PassRequest,
                           pb.ACTION_KNOCK: pb.KnockRequest,
                           pb.ACTION_END_TURN: pb.EndTurnRequest}[h.action]
                await method[h.action](request(game_id=game_id, token=token, options=opts))
        else:
            pytest.fail("the game did not end")
        assert melds > 0
        code, reason, _ = await _refused(stub.GetHint(pb.GetHintRequest(
            game_id=game_id, token=tokens[0])))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")


async def test_check_meld_refusals_are_melds_and_append_nothing() -> None:
    async with serving(MemoryEventStore()) as running:
        stub = running.stub
        game_id, tokens = await _game(stub)
        view = (await stub.GetView(pb.GetViewRequest(game_id=game_id,
                                                     token=tokens[0]))).view
        seat = view.turn
        token = tokens[seat]
        cases = [  # (table, status, reason, rule)
            ([pb.Cards(cards=["KS", "KH", "KD"])], grpc.StatusCode.FAILED_PRECONDITION,
             "ILLEGAL_MOVE", "R3.6"),  # must draw first
            ([pb.Cards(cards=["ZZ"])], grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED", "R1.4"),
            ([pb.Cards(cards=["2S"])] * 61, grpc.StatusCode.INVALID_ARGUMENT,
             "BAD_REQUEST", ""),
        ]
        for table, status, reason, rule in cases:
            for method, request in ((stub.CheckMeld, pb.CheckMeldRequest),
                                    (stub.Meld, pb.MeldRequest)):
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await method(request(game_id=game_id, token=token, table=table))
                md = dict(err.value.trailing_metadata() or ())
                assert (err.value.code(), md.get("rummy-reason")) == (status, reason)
                assert rpc_error_rule(err.value) == rule
        for bad in ({"token": ""}, {"token": "nope"}, {"game_id": "missing"},
                    {"expected_version": 1}):
            request = {"game_id": game_id, "token": token, **bad}
            code, reason, _ = await _refused(stub.CheckMeld(pb.CheckMeldRequest(
                table=[pb.Cards(cards=["KS", "KH", "KD"])], **request)))
            assert reason in ("NO_TOKEN", "BAD_TOKEN", "GAME_NOT_FOUND", "VERSION_CONFLICT")
        code, reason, _ = await _refused(stub.GetLegalActions(pb.GetLegalActionsRequest(
            game_id=game_id)))
        assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "NO_TOKEN")
        after = (await stub.GetView(pb.GetViewRequest(game_id=game_id))).view
        assert after.version == view.version  # nothing appended by any of them


async def test_hints_off_and_hint_priced_in_the_rate_limit() -> None:
    store = MemoryEventStore()
    async with serving(store, hints=False) as running:
        stub = running.stub
        game_id, tokens = await _game(stub)
        code, reason, message = await _refused(stub.GetHint(pb.GetHintRequest(
            game_id=game_id, token=tokens[0])))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HINTS_DISABLED")
        assert "--hints off" in message
        legal = await stub.GetLegalActions(pb.GetLegalActionsRequest(
            game_id=game_id, token=tokens[0]))
        assert legal.version == 2  # the rest of the help still answers
    # a bucket of HINT_COST + 5 calls and a negligible refill: one hint, then five calls
    async with serving(MemoryEventStore(), rate_commands=0.001,
                       rate_burst=HINT_COST + 5) as running:
        stub = running.stub
        game_id, tokens = await _game(stub)
        view = (await stub.GetView(pb.GetViewRequest(game_id=game_id))).view  # 1 call
        token = tokens[view.turn]
        h = await stub.GetHint(pb.GetHintRequest(game_id=game_id, token=token))
        assert h.action == pb.ACTION_DRAW
        for _ in range(2):
            await stub.GetLegalActions(pb.GetLegalActionsRequest(game_id=game_id,
                                                                 token=token))
        for _ in range(2):  # a dry run costs a call like a command, refused or not
            code, reason, _ = await _refused(stub.CheckMeld(pb.CheckMeldRequest(
                game_id=game_id, token=token, table=[pb.Cards(cards=["KS", "KH", "KD"])])))
            assert reason == "ILLEGAL_MOVE"
        code, reason, _ = await _refused(stub.GetLegalActions(pb.GetLegalActionsRequest(
            game_id=game_id, token=token)))
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")


@pytest.mark.redis
async def test_rummy_serve_hints_off_refuses_hints_naming_the_flag(
        tmp_path: Path, prefix: str, store: Any) -> None:
    """The operator's switch on a real ``rummy serve`` process (``store``: the prefix's
    keys are deleted afterwards)."""
    with served_server(REDIS_URL, prefix, tmp_path, "hints", "--hints", "off") as port:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.GameServiceStub(channel)
            game_id, tokens = await _game(stub)
            code, reason, message = await _refused(stub.GetHint(pb.GetHintRequest(
                game_id=game_id, token=tokens[0])))
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HINTS_DISABLED")
            assert "rummy serve --hints off" in message


async def test_a_seat_a_bot_plays_is_offered_nothing_and_refused_help() -> None:
    """Found by an attacker: after ``Leave`` the seat's view still listed ``meld`` and
    ``pass`` while its token could send neither (R13.1). A seat a server bot plays now has
    no actions in its view nor in ``GetLegalActions``; ``CheckMeld`` and ``GetHint`` are
    refused with rule R13.1, as its commands are."""
    async with serving(MemoryEventStore(), bot_delay=30.0) as running:
        stub = running.stub
        game_id, tokens = await _game(stub)
        view = (await stub.GetView(pb.GetViewRequest(game_id=game_id,
                                                     token=tokens[0]))).view
        token = tokens[view.turn]
        await stub.Leave(pb.LeaveRequest(game_id=game_id, token=token))
        left = (await stub.GetView(pb.GetViewRequest(game_id=game_id, token=token))).view
        assert left.turn == view.turn  # the bot has not moved yet (bot_delay)
        assert list(left.actions) == []
        moves = await stub.GetLegalActions(pb.GetLegalActionsRequest(game_id=game_id,
                                                                     token=token))
        assert list(moves.actions) == [] and moves.meld == pb.MELD_AVAILABILITY_NOT_NOW
        for coro in (stub.GetHint(pb.GetHintRequest(game_id=game_id, token=token)),
                     stub.CheckMeld(pb.CheckMeldRequest(
                         game_id=game_id, token=token,
                         table=[pb.Cards(cards=["KS", "KH", "KD"])]))):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await coro
            assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert rpc_error_rule(err.value) == "R13.1"
