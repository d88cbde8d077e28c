"""A flood of 10,000 malformed requests over a real server ("honest status codes").

A mix of undecodable bytes to every method, oversized requests and strings, bad card tokens,
bad versions, unknown game ids, empty and wrong tokens, bad CreateGame requests, sent with
bounded concurrency. Every request must get its well-defined status (never UNKNOWN or
INTERNAL), no rejected request may append an event or create a game, the server must log no
traceback, and it must still play a normal game afterwards. The figures are recorded with
``record_property`` (``requests``, ``unexpected_status``, ``events_appended_by_rejected``,
``tracebacks``, ``throughput_rps``) for the ``make chaos`` summary.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.server import MAX_MESSAGE_BYTES, SERVICE_NAME

from .conftest import ADMIN_TOKEN, humans, play_turns

pytestmark = [pytest.mark.redis]

REQUESTS = 10_000
CONCURRENCY = 100
CHANNELS = 4
OVERSIZED_EVERY = 100
"""One request in this many is larger than the 1 MiB message limit (they are costly)."""

Code = grpc.StatusCode
Call = Callable[[grpc.aio.Channel], Awaitable[object]]


def raw(method: Any, payload: bytes) -> Call:
    """A call of ``method`` (a MethodDescriptor) with ``payload`` sent unparsed."""
    path = f"/{SERVICE_NAME}/{method.name}"

    async def call(channel: grpc.aio.Channel) -> None:
        if method.server_streaming:
            async for _ in channel.unary_stream(path)(payload, timeout=30):
                pass
        else:
            await channel.unary_unary(path)(payload, timeout=30)
    return call


def rpc(name: str, request: object) -> Call:
    """A call of ``GameService.<name>`` with a well-formed ``request`` message."""
    async def call(channel: grpc.aio.Channel) -> None:
        method = getattr(pb_grpc.GameServiceStub(channel), name)
        if name == "StreamEvents":
            async for _ in method(request, timeout=30):
                pass
        else:
            await method(request, timeout=30)
    return call


def malformed_mix(game_id: str, on_turn: str, waiting: str,
                  version: int) -> list[tuple[str, Code, Call]]:
    """``(kind, expected status, call)`` for every kind of bad request of the flood, against
    the real game ``game_id`` (at ``version``; ``on_turn`` is the token of the seat to act,
    ``waiting`` another seat's)."""
    unknown = f"no-such-game-{uuid.uuid4().hex}"
    opts = pb.CommandOptions
    mix: list[tuple[str, Code, Call]] = []
    for method in pb.DESCRIPTOR.services_by_name["GameService"].methods:
        mix.append((f"undecodable {method.name}", Code.INVALID_ARGUMENT,
                    raw(method, b"\xff\xff\xff")))
        mix.append((f"invalid utf-8 {method.name}", Code.INVALID_ARGUMENT,
                    raw(method, b"\x0a\x02\xff\xfe")))
    mix += [
        # oversized strings below the message limit
        ("long request_id", Code.INVALID_ARGUMENT, rpc("Draw", pb.DrawRequest(
            game_id=game_id, token=on_turn, options=opts(request_id="r" * 10_000)))),
        ("long seat name", Code.INVALID_ARGUMENT, rpc("CreateGame", pb.CreateGameRequest(
            seats=[pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name="n" * 5_000)] * 2))),
        ("long game id", Code.NOT_FOUND, rpc("GetView", pb.GetViewRequest(
            game_id="g" * 100_000, token=on_turn))),
        ("huge table", Code.INVALID_ARGUMENT, rpc("Meld", pb.MeldRequest(
            game_id=game_id, token=on_turn, table=[pb.Cards(cards=["AS"] * 50)] * 100))),
        # bad card tokens (on turn or not: the notation is checked first)
        ("bad cards", Code.INVALID_ARGUMENT, rpc("Meld", pb.MeldRequest(
            game_id=game_id, token=on_turn, table=[pb.Cards(cards=["ZZ", "1X", "🂡"])]))),
        ("bad cards, waiting seat", Code.INVALID_ARGUMENT, rpc("Meld", pb.MeldRequest(
            game_id=game_id, token=waiting, table=[pb.Cards(cards=["", "AS", "AS"])]))),
        # bad versions
        ("negative expected_version", Code.INVALID_ARGUMENT, rpc("Draw", pb.DrawRequest(
            game_id=game_id, token=on_turn, options=opts(expected_version=-1)))),
        ("negative after_version", Code.INVALID_ARGUMENT, rpc("GetEvents", pb.GetEventsRequest(
            game_id=game_id, token=on_turn, after_version=-5))),
        ("negative page_size", Code.INVALID_ARGUMENT, rpc("GetEvents", pb.GetEventsRequest(
            game_id=game_id, token=on_turn, page_size=-1))),
        ("state beyond the game", Code.INVALID_ARGUMENT, rpc("GetState", pb.GetStateRequest(
            game_id=game_id, admin_token=ADMIN_TOKEN, version=version + 10**9))),
        ("stream beyond the game", Code.INVALID_ARGUMENT, rpc(
            "StreamEvents", pb.StreamEventsRequest(game_id=game_id, token=on_turn,
                                                   after_version=version + 10**9))),
        # unknown game ids
        ("unknown game view", Code.NOT_FOUND, rpc("GetView", pb.GetViewRequest(
            game_id=unknown))),
        ("unknown game draw", Code.NOT_FOUND, rpc("Draw", pb.DrawRequest(
            game_id=unknown, token=on_turn))),
        ("unknown game stream", Code.NOT_FOUND, rpc("StreamEvents", pb.StreamEventsRequest(
            game_id=unknown))),
        ("unknown game state", Code.NOT_FOUND, rpc("GetState", pb.GetStateRequest(
            game_id=unknown, admin_token=ADMIN_TOKEN))),
        ("game id with braces", Code.NOT_FOUND, rpc("GetView", pb.GetViewRequest(
            game_id="{x} y"))),
        # empty and wrong tokens
        ("empty token draw", Code.UNAUTHENTICATED, rpc("Draw", pb.DrawRequest(
            game_id=game_id))),
        ("empty token end turn", Code.UNAUTHENTICATED, rpc("EndTurn", pb.EndTurnRequest(
            game_id=game_id))),
        ("wrong token", Code.PERMISSION_DENIED, rpc("Pass", pb.PassRequest(
            game_id=game_id, token="not-a-token"))),
        ("wrong admin token", Code.PERMISSION_DENIED, rpc("GetState", pb.GetStateRequest(
            game_id=game_id, admin_token="not-the-admin"))),
        ("not your turn", Code.PERMISSION_DENIED, rpc("Draw", pb.DrawRequest(
            game_id=game_id, token=waiting))),
        # the help calls (CheckMeld refuses what Meld refuses)
        ("huge table dry run", Code.INVALID_ARGUMENT, rpc("CheckMeld", pb.CheckMeldRequest(
            game_id=game_id, token=on_turn, table=[pb.Cards(cards=["AS"] * 50)] * 100))),
        ("bad cards dry run", Code.INVALID_ARGUMENT, rpc("CheckMeld", pb.CheckMeldRequest(
            game_id=game_id, token=waiting, table=[pb.Cards(cards=["ZZ", "AS", "AS"])]))),
        ("empty token hint", Code.UNAUTHENTICATED, rpc("GetHint", pb.GetHintRequest(
            game_id=game_id))),
        ("unknown game legal actions", Code.NOT_FOUND, rpc(
            "GetLegalActions", pb.GetLegalActionsRequest(game_id=unknown, token=on_turn))),
        ("hint not your turn", Code.PERMISSION_DENIED, rpc("GetHint", pb.GetHintRequest(
            game_id=game_id, token=waiting))),
        # bad CreateGame requests: no game may come of them
        ("one seat", Code.INVALID_ARGUMENT, rpc("CreateGame", pb.CreateGameRequest(
            seats=humans(1)))),
        ("unknown variant", Code.INVALID_ARGUMENT, rpc("CreateGame", pb.CreateGameRequest(
            seats=humans(2), variants={"no_such_variant": "1"}))),
        ("seed without admin", Code.PERMISSION_DENIED, rpc("CreateGame", pb.CreateGameRequest(
            seats=humans(2), seed=7))),
        ("wrong admin create", Code.PERMISSION_DENIED, rpc("CreateGame", pb.CreateGameRequest(
            seats=humans(2), admin_token="not-the-admin"))),
    ]
    return mix


def oversized(game_id: str) -> tuple[str, Code, Call]:
    """A request past the 1 MiB message limit: refused by grpc before any handler."""
    return ("oversized message", Code.RESOURCE_EXHAUSTED, rpc("GetView", pb.GetViewRequest(
        game_id=game_id, token="t" * (MAX_MESSAGE_BYTES + 1024))))


@pytest.mark.asyncio
@pytest.mark.chaos
async def test_a_flood_of_malformed_requests(running, store, caplog, record_property):
    caplog.set_level(logging.INFO)
    created = await running.stub.CreateGame(pb.CreateGameRequest(
        admin_token=ADMIN_TOKEN, seats=humans(3), seed=11))
    game_id = created.game_id
    tokens = {t.seat: t.token for t in created.tokens}
    view = (await running.stub.GetView(pb.GetViewRequest(game_id=game_id,
                                                         token=tokens[0]))).view
    on_turn, waiting = tokens[view.turn], tokens[(view.turn + 1) % 3]
    version_before = await store.version(game_id)
    games_before = set(await store.list_games(limit=1_000_000))

    mix = malformed_mix(game_id, on_turn, waiting, version_before)
    big = oversized(game_id)
    plan = [big if i % OVERSIZED_EVERY == OVERSIZED_EVERY - 1 else mix[i % len(mix)]
            for i in range(REQUESTS)]
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
                for _ in range(CHANNELS)]
    got: collections.Counter[tuple[str, str]] = collections.Counter()
    unexpected: collections.Counter[tuple[str, str, str]] = collections.Counter()
    next_index = iter(range(REQUESTS))

    async def worker(channel: grpc.aio.Channel) -> None:
        for i in next_index:
            kind, want, call = plan[i]
            try:
                await call(channel)
                code = Code.OK
            except grpc.aio.AioRpcError as err:
                code = err.code()
            got[(kind, code.name)] += 1
            if code != want:
                unexpected[(kind, want.name, code.name)] += 1

    t0 = time.perf_counter()
    try:
        await asyncio.gather(*(worker(channels[w % CHANNELS]) for w in range(CONCURRENCY)))
    finally:
        for ch in channels:
            await ch.close()
    elapsed = time.perf_counter() - t0
    rps = REQUESTS / elapsed
    print(f"\n{REQUESTS} malformed requests in {elapsed:.1f} s: {rps:.0f} requests/s "
          f"({CONCURRENCY} in flight over {CHANNELS} channels)")

    version_after = await store.version(game_id)
    new_games = set(await store.list_games(limit=1_000_000)) - games_before
    tracebacks = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    record_property("requests", REQUESTS)
    record_property("unexpected_status", sum(unexpected.values()))
    record_property("events_appended_by_rejected", version_after - version_before)
    record_property("games_created_by_rejected", len(new_games))
    record_property("tracebacks", len(tracebacks))
    record_property("throughput_rps", round(rps))

    assert sum(got.values()) == REQUESTS
    assert not unexpected, dict(unexpected)
    assert not any(code in ("UNKNOWN", "INTERNAL") for _, code in got)
    assert version_after == version_before
    assert not new_games
    assert not tracebacks, [r.getMessage() for r in tracebacks[:5]]
    assert running.server.streams.open == 0  # refused streams stopped counting

    # the server still plays a normal game, the flooded one included
    last = await play_turns(running.stub, game_id, tokens,
                            {0: "basic", 1: "random", 2: "basic"}, max_commands=30)
    assert last.version > version_before
    fresh = await running.stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
    assert fresh.version >= 1
