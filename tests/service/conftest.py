"""Fixtures of the game-service tests: a real server on port 0 over the real Redis (one key
prefix per test, deleted afterwards), gRPC stubs, and helpers that play through the API.

Redis-backed tests are skipped, with the reason, only when Redis does not answer PING.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
import pytest_asyncio
import rummy_grpc  # noqa: F401 - generates rummy_api when missing
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.convert import view_from_proto
from rummy_grpc.server import RummyServer, create_server
from rummy_store import RedisEventStore

from rummy.bots import make_bot
from rummy.commands import Command, Draw, EndTurn, Knock, Meld, Pass
from rummy.melds import format_table
from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable

ADMIN_TOKEN = "test-admin-token"


@pytest.fixture
def prefix() -> str:
    """A key prefix unique to the test."""
    return f"rummy-test-{uuid.uuid4().hex[:12]}"


@pytest_asyncio.fixture
async def store(prefix: str) -> AsyncIterator[RedisEventStore]:
    """A Redis event store under the test's own prefix (keys deleted afterwards)."""
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    s = RedisEventStore.from_url(REDIS_URL, prefix=prefix)
    try:
        yield s
    finally:
        await s.close()
        await delete_prefix(prefix)


@dataclass
class Running:
    """A started server, its port, and a channel + stub connected to it."""

    server: RummyServer
    port: int
    channel: grpc.aio.Channel
    stub: pb_grpc.GameServiceStub


@contextlib.asynccontextmanager
async def serving(store: RedisEventStore, **options: Any) -> AsyncIterator[Running]:
    """A started GameService on 127.0.0.1:0 over ``store`` with the admin token and
    ``create_server`` ``options``, a channel and a stub; stopped on exit."""
    server, port = create_server("127.0.0.1:0", store, admin_token=ADMIN_TOKEN, **options)
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Running(server, port, channel, pb_grpc.GameServiceStub(channel))
    finally:
        await channel.close()
        await server.stop(None)


@pytest_asyncio.fixture
async def running(store: RedisEventStore) -> AsyncIterator[Running]:
    """A real GameService on 127.0.0.1:0 over the test's Redis store."""
    async with serving(store) as r:
        yield r


def humans(n: int) -> list[pb.SeatSpec]:
    """``n`` human seat specs."""
    return [pb.SeatSpec(kind=pb.SEAT_KIND_HUMAN, name=f"p{i}") for i in range(n)]


def bots(*strategies: str) -> list[pb.SeatSpec]:
    """Bot seat specs of the given strategies."""
    return [pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy=s) for s in strategies]


async def send(stub: pb_grpc.GameServiceStub, game_id: str, token: str, cmd: Command,
               **options: Any) -> pb.CommandResult:
    """Send a core command through the API; returns the ``CommandResult``."""
    opts = pb.CommandOptions(**options)
    if isinstance(cmd, Draw):
        return (await stub.Draw(pb.DrawRequest(game_id=game_id, token=token,
                                               options=opts))).result
    if isinstance(cmd, Pass):
        return (await stub.Pass(pb.PassRequest(game_id=game_id, token=token,
                                               options=opts))).result
    if isinstance(cmd, Meld):
        table = [pb.Cards(cards=m) for m in format_table(cmd.table)]
        return (await stub.Meld(pb.MeldRequest(game_id=game_id, token=token, options=opts,
                                               table=table))).result
    if isinstance(cmd, Knock):
        return (await stub.Knock(pb.KnockRequest(game_id=game_id, token=token,
                                                 options=opts))).result
    if isinstance(cmd, EndTurn):
        return (await stub.EndTurn(pb.EndTurnRequest(game_id=game_id, token=token,
                                                     options=opts))).result
    raise TypeError(cmd)


async def play_turns(stub: Any, game_id: str, tokens: dict[int, str],
                     strategies: dict[int, str], max_commands: int = 100_000,
                     check_view: Any = None) -> pb.PlayerView:
    """Play human seats with ``rummy.bots`` policies applied to each seat's ``GetView``,
    until the game is over or ``max_commands`` commands were sent; returns the last view.

    ``stub`` is one stub, or ``{seat: stub}`` (one client per seat).
    ``check_view(seat, view_msg)`` is called on every view fetched.
    """
    stubs = stub if isinstance(stub, dict) else {s: stub for s in tokens}
    agents = {s: make_bot(name, 1000 + s) for s, name in strategies.items()}
    sent = 0
    any_seat = next(iter(tokens))
    while True:
        public = (await stubs[any_seat].GetView(
            pb.GetViewRequest(game_id=game_id, token=tokens[any_seat]))).view
        if public.phase == pb.PHASE_GAME_OVER or sent >= max_commands:
            return public
        seat = public.turn
        stub = stubs[seat]
        v = (await stub.GetView(pb.GetViewRequest(game_id=game_id, token=tokens[seat]))).view
        if check_view:
            check_view(seat, v)
        cmd = agents[seat].act(view_from_proto(v))
        await send(stub, game_id, tokens[seat], cmd, expected_version=v.version,
                   request_id=f"{seat}:{v.version}")
        sent += 1


async def play_app_bot_game(strategies: list[str], *, seed: int = 4,
                            target: int = 30) -> list[Any]:
    """A whole game of server bots (``strategies``, one per seat, each also allowed by the
    app's ``bot_strategies``) on a :class:`GameApp` over the memory store: its events, once
    the game left the active index (at most 30 s)."""
    from rummy_grpc.app import GameApp, SeatSpec
    from rummy_store import MemoryEventStore

    from rummy.events import from_dict

    store = MemoryEventStore()
    app = GameApp(store, bot_strategies=list(dict.fromkeys(strategies)))
    created = await app.create_game([SeatSpec("bot", strategy=s) for s in strategies],
                                    {"target_score": str(target)}, seed=seed)
    for _ in range(3000):
        if not await store.list_games(active_only=True):
            break
        await asyncio.sleep(0.01)
    events = [from_dict(se.data) for se in await store.read(created.game_id, 0)]
    await app.close()
    return events


def rpc_error_rule(err: grpc.aio.AioRpcError) -> str:
    """The rule id of a rule error: from the ErrorInfo detail (checked equal to the
    ``rummy-rule`` trailer)."""
    from google.rpc import error_details_pb2, status_pb2
    md = dict(err.trailing_metadata() or ())
    status = status_pb2.Status.FromString(md["grpc-status-details-bin"])
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.domain == "rummy"
    assert info.metadata.get("rule", "") == md.get("rummy-rule", "")
    return info.metadata.get("rule", "")
