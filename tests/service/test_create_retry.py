"""A ``CreateGame`` retried with the same ``request_id`` (a client whose reply was lost)
returns the first game for every kind of seat list, with or without the admin token, on a
real ``rummy serve`` process over the real Redis.

The fault: the request digest covered the seed the server drew on each attempt when no seat
is human or the admin token was sent, so the retry of the very same request was refused
ALREADY_EXISTS "... for a different request".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc

from tests.chaos_helpers import ADMIN_TOKEN, served_server
from tests.redis_helpers import REDIS_URL, redis_unreachable

from .conftest import bots, humans

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


@pytest.fixture
def served(prefix: str, tmp_path: Path) -> Iterator[int]:
    """A ``rummy serve`` process over the real Redis under the test's prefix; its port."""
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    with served_server(REDIS_URL, prefix, tmp_path, "create") as port:
        yield port


CASES = {
    "all bots, no seed": dict(seats=bots("basic", "random")),
    "all bots, a seed": dict(seats=bots("basic", "random"), seed=5),
    "humans": dict(seats=humans(2)),
    "humans, admin token": dict(seats=humans(2), admin_token=ADMIN_TOKEN),
    "humans, admin token and seed": dict(seats=humans(2), admin_token=ADMIN_TOKEN, seed=9),
    "mixed, admin token": dict(seats=humans(1) + bots("basic"), admin_token=ADMIN_TOKEN),
    "all bots, admin token": dict(seats=bots("basic", "basic", "random"),
                                  admin_token=ADMIN_TOKEN),
}


async def test_a_retried_create_game_returns_the_first_game_for_every_seat_list(
        served: int, prefix: str) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{served}") as channel:
        stub = pb_grpc.GameServiceStub(channel)
        for name, fields in CASES.items():
            request_id = f"{prefix}:{name.replace(' ', '-')}"
            request = pb.CreateGameRequest(request_id=request_id,
                                           variants={"target_score": "40"},
                                           **fields)  # type: ignore[arg-type]
            first = await stub.CreateGame(request, timeout=10)
            again = await stub.CreateGame(request, timeout=10)
            assert (again.game_id, list(again.tokens), again.version) == \
                (first.game_id, list(first.tokens), first.version), name
            n_humans = sum(s.kind == pb.SEAT_KIND_HUMAN for s in request.seats)
            assert len(first.tokens) == n_humans, name
            # another request under the same id is still refused, naming the first game
            other = pb.CreateGameRequest()
            other.CopyFrom(request)
            other.turn_seconds = 30
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.CreateGame(other, timeout=10)
            assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS, name
            assert first.game_id in (err.value.details() or ""), name
