"""The seat lifecycle of a served game (docs/rules.md §13) over gRPC: a real ``rummy serve``
process on Redis where a human leaves in the middle of its turn and the game goes on to its
end; two server processes on one Redis driving the taking-over bot exactly once; and the
in-memory store (timeouts in a row, reclaiming)."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.convert import view_from_proto

from rummy.bots import make_bot
from rummy.events import SeatTakenOver, from_dict
from rummy.invariants import verify_log
from tests.chaos_helpers import served_server
from tests.harness import HANG_GUARD
from tests.redis_helpers import REDIS_URL

from .conftest import ADMIN_TOKEN, humans, rpc_error_rule, send

SEAT_MOVES = ("CardDrawn", "Passed", "Melded", "Knocked", "TurnEnded")


async def _view(stub: pb_grpc.GameServiceStub, game_id: str, token: str) -> pb.PlayerView:
    return (await stub.GetView(pb.GetViewRequest(game_id=game_id, token=token))).view


async def _play_humans(stubs: dict[int, pb_grpc.GameServiceStub], game_id: str,
                       tokens: dict[int, str], limit: float = HANG_GUARD) -> pb.PlayerView:
    """Play the seats a human still plays with ``basic`` until the game is over; a seat a
    server bot plays is waited for (its moves come from the server)."""
    agents = {s: make_bot("basic", 500 + s) for s in tokens}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    any_seat = next(iter(tokens))
    while loop.time() < deadline:
        public = await _view(stubs[any_seat], game_id, tokens[any_seat])
        if public.phase == pb.PHASE_GAME_OVER:
            return public
        seat = public.turn
        if public.controllers[seat] != "human":
            await asyncio.sleep(0.02)  # the server's bot is playing it
            continue
        v = await _view(stubs[seat], game_id, tokens[seat])
        if v.version != public.version or not v.actions:
            continue
        try:
            await send(stubs[seat], game_id, tokens[seat],
                       agents[seat].act(view_from_proto(v)), expected_version=v.version)
        except grpc.aio.AioRpcError as err:  # a bot of the server moved first
            assert err.code() == grpc.StatusCode.ABORTED, err
    raise AssertionError("the game did not end")


async def _log(stub: pb_grpc.GameServiceStub, game_id: str) -> list:
    page = await stub.GetEvents(pb.GetEventsRequest(game_id=game_id, admin_token=ADMIN_TOKEN))
    from google.protobuf import json_format

    from rummy.events import EVENT_TYPES
    out = []
    for e in page.events:
        payload = json_format.MessageToDict(getattr(e, e.WhichOneof("payload")),
                                            preserving_proto_field_name=True,
                                            always_print_fields_with_no_presence=True)
        assert e.type in EVENT_TYPES
        out.append((e.version, e.type, payload))
    return out


async def _full_events(stub: pb_grpc.GameServiceStub, game_id: str, store_read) -> list:
    events = await store_read(game_id)
    return [from_dict(e.data) for e in events]


@pytest.mark.asyncio
@pytest.mark.redis
@pytest.mark.slow
async def test_a_human_leaves_mid_turn_and_the_game_goes_on_to_its_end(
        prefix: str, tmp_path: Path, store) -> None:
    with served_server(REDIS_URL, prefix, tmp_path, "a") as port:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.GameServiceStub(channel)
            created = await stub.CreateGame(pb.CreateGameRequest(
                seats=humans(4), variants={"target_score": "40"}, seed=41,
                admin_token=ADMIN_TOKEN, takeover_strategy="random"))
            game = created.game_id
            tokens = {t.seat: t.token for t in created.tokens}
            first = (await _view(stub, game, tokens[0])).turn
            # the seat to act draws, then leaves before it melds or passes (R13.1)
            drawn = (await stub.Draw(pb.DrawRequest(game_id=game, token=tokens[first]))).result
            assert drawn.view.phase == pb.PHASE_MELD_OR_PASS
            left = (await stub.Leave(pb.LeaveRequest(game_id=game,
                                                     token=tokens[first]))).result
            types = [e.type for e in left.events]
            assert types[:2] == ["SeatLeft", "SeatTakenOver"]
            assert left.events[0].seat_left.reason == "leave"
            assert left.events[1].seat_taken_over.strategy == "random"
            # every seat sees who plays each seat now
            for s in range(4):
                v = await _view(stub, game, tokens[s])
                assert v.controllers[first] == "bot:random" and v.away[first] == "leave"
                assert [c for i, c in enumerate(v.controllers) if i != first] == ["human"] * 3
            # the seat's token moves no more (R13.1); this game allows no reclaim (R13.3)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.Draw(pb.DrawRequest(game_id=game, token=tokens[first]))
            assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            assert rpc_error_rule(err.value) == "R13.1"
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.ReclaimSeat(pb.ReclaimSeatRequest(game_id=game, token=tokens[first]))
            assert rpc_error_rule(err.value) == "R13.3"
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.Leave(pb.LeaveRequest(game_id=game, token=tokens[first]))
            assert rpc_error_rule(err.value) == "R13.1"
            others = {s: t for s, t in tokens.items() if s != first}
            final = await _play_humans({s: stub for s in others}, game, others)
            assert final.result.left == [first] and first not in final.result.winners
            assert final.result.bonuses[first] == 0  # R13.4
    events = await _full_events(stub, game, store.read)
    *_, state = verify_log(events)  # every event legal where it stands
    assert state.is_over
    assert sum(isinstance(e, SeatTakenOver) for e in events) == 1
    takeover = next(i for i, e in enumerate(events) if isinstance(e, SeatTakenOver))
    assert any(getattr(e, "seat", None) == first and e.TYPE in SEAT_MOVES
               for e in events[takeover:])  # the bot went on playing the seat


@pytest.mark.asyncio
@pytest.mark.redis
@pytest.mark.slow
async def test_two_server_processes_drive_the_taking_over_bot_once(
        prefix: str, tmp_path: Path, store) -> None:
    with served_server(REDIS_URL, prefix, tmp_path, "a") as port_a, \
            served_server(REDIS_URL, prefix, tmp_path, "b") as port_b:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port_a}") as ca, \
                grpc.aio.insecure_channel(f"127.0.0.1:{port_b}") as cb:
            a, b = pb_grpc.GameServiceStub(ca), pb_grpc.GameServiceStub(cb)
            created = await a.CreateGame(pb.CreateGameRequest(
                seats=humans(3), variants={"target_score": "40"}, seed=43,
                admin_token=ADMIN_TOKEN))
            game = created.game_id
            tokens = {t.seat: t.token for t in created.tokens}
            await a.Leave(pb.LeaveRequest(game_id=game, token=tokens[1]))  # through server A
            # seats 0 and 2 play through server B: both servers' follow-ups and due-game
            # polls see the bot to act
            rest = {0: tokens[0], 2: tokens[2]}
            final = await _play_humans({0: b, 2: b}, game, rest)
            assert final.result.left == [1]
            spectator = [m.event async for m in a.StreamEvents(
                pb.StreamEventsRequest(game_id=game))]
    events = await _full_events(a, game, store.read)
    assert len(spectator) == len(events)
    assert [e.version for e in spectator] == list(range(1, len(events) + 1))
    states = list(verify_log(events))  # a second copy of a bot move would be illegal
    assert states[-1].is_over
    assert sum(isinstance(e, SeatTakenOver) for e in events) == 1
    # the bot's moves for seat 1, counted turn by turn: each turn's draws are numbered
    # 1, 2, 3 once each and the turn ends once (a move driven twice would repeat one)
    runs: list[list] = []
    for prev, e in zip(events[3:], events[4:], strict=False):
        if getattr(e, "seat", None) == 1 and e.TYPE in SEAT_MOVES:
            if getattr(prev, "seat", None) != 1 or prev.TYPE not in SEAT_MOVES:
                runs.append([])
            runs[-1].append(e)
    assert len(runs) > 3  # the bot played many turns of the seat
    for run in runs:
        draws = [e.draw for e in run if e.TYPE == "CardDrawn"]
        assert draws == list(range(1, len(draws) + 1))
        assert Counter(e.TYPE for e in run)["TurnEnded"] <= 1


@pytest.mark.asyncio
@pytest.mark.slow
async def test_timeouts_in_a_row_and_a_reclaim_on_the_memory_store(tmp_path: Path) -> None:
    # a real `rummy serve --store memory` process
    with served_server("memory://", "rummy", tmp_path, "m", "--store", "memory") as port:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.GameServiceStub(channel)
            created = await stub.CreateGame(pb.CreateGameRequest(
                seats=humans(2), seed=45, admin_token=ADMIN_TOKEN, turn_seconds=2,
                timeout_takeover=2, allow_reclaim=True))
            game = created.game_id
            tokens = {t.seat: t.token for t in created.tokens}
            v = await _view(stub, game, tokens[0])
            idle = v.turn
            loop = asyncio.get_running_loop()
            deadline = loop.time() + HANG_GUARD
            while (await _view(stub, game, tokens[idle])).controllers[idle] == "human":
                assert loop.time() < deadline, "the seat was not taken over"
                await asyncio.sleep(0.1)
            log = await _log(stub, game)
            kinds = [t for _, t, _ in log]
            i = kinds.index("SeatLeft")
            assert log[i][2] == {"seat": idle, "reason": "timeout"}
            assert kinds[i + 1] == "SeatTakenOver"
            # R13.2: two of its decisions in a row timed out, the second one just before
            counts = [p["count"] for _, t, p in log[:i] if t == "TimedOut" and p["seat"] == idle]
            assert counts == [1, 2] and kinds[i - 1] == "TimedOut"
            # the seat asks back: recorded now, effective at the start of its next turn
            # (the other seat times out meanwhile, and is taken over in its turn)
            out = (await stub.ReclaimSeat(pb.ReclaimSeatRequest(
                game_id=game, token=tokens[idle], wait=True))).result
            assert out.events[0].type in ("ReclaimRequested", "SeatReclaimed")
            deadline = loop.time() + HANG_GUARD
            while True:
                log = await _log(stub, game)
                back = [v for v, t, p in log if t == "SeatReclaimed" and p["seat"] == idle]
                if back:
                    break
                assert loop.time() < deadline, "the seat was not reclaimed"
                await asyncio.sleep(0.05)
            at = (await stub.GetState(pb.GetStateRequest(
                game_id=game, version=back[0], admin_token=ADMIN_TOKEN))).view
            # at the start of its turn, before the bot decided (R13.3)
            assert at.turn == idle and at.draws == 0 and at.controllers[idle] == "human"
            # everyone left: the game ends at once (R13.5), totals as they stand (a game
            # without turn limits: the one above may have been played out by its bots)
            two = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
            t = {x.seat: x.token for x in two.tokens}
            await stub.Resign(pb.ResignRequest(game_id=two.game_id, token=t[1]))
            end = (await stub.Leave(pb.LeaveRequest(game_id=two.game_id,
                                                    token=t[0]))).result
            assert [e.type for e in end.events] == ["SeatLeft", "GameEnded"]
            ended = end.events[-1].game_ended
            assert list(ended.final) == list(ended.totals) and set(ended.bonuses) == {0}
            assert sorted(ended.left) == [0, 1]


def test_the_creation_options_are_checked() -> None:
    from rummy_grpc.errors import BadRequest
    from rummy_grpc.lifecycle import options

    offered = frozenset({"basic", "random", "strategic"})
    assert options("", 0, False, offered) == {"takeover": "basic", "timeout_takeover": 0,
                                              "reclaim": False}
    assert options("", 0, False, frozenset({"search"}))["takeover"] == "basic"  # the default
    assert options("random", 3, True, offered) == {"takeover": "random",
                                                   "timeout_takeover": 3, "reclaim": True}
    with pytest.raises(BadRequest, match="not offered bot strategy 'search'"):
        options("search", 0, False, offered)
    with pytest.raises(BadRequest, match="R13.1"):
        options("no-such-bot", 0, False, offered)
    with pytest.raises(BadRequest, match="R13.2"):
        options("", -1, False, offered)
    with pytest.raises(BadRequest, match="R13.2"):
        options("", 101, False, offered)
