"""ReviewGame on a real server over the test's Redis store: a finished game's review is the
one `rummy replay --analyse` computes from the same events (same budget and seed), a game
still being played is refused, and the budget is bounded."""

from __future__ import annotations

import json

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_store.sealed import GameStore

from rummy.events import from_dict
from rummy.review import review

from .conftest import humans, play_turns

pytestmark = [pytest.mark.redis, pytest.mark.asyncio]


def _reason(err: grpc.aio.AioRpcError) -> str:
    return dict(err.trailing_metadata() or ()).get("rummy-reason", "")


async def test_review_of_a_finished_game_matches_the_local_review(running, store):
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(
        seats=humans(2), variants={"target_score": "40"}))
    game_id = created.game_id
    tokens = {t.seat: t.token for t in created.tokens}
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.ReviewGame(pb.ReviewGameRequest(game_id=game_id, budget=0))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert _reason(err.value) == "GAME_NOT_OVER"
    await play_turns(stub, game_id, tokens, {0: "basic", 1: "strategic"})
    got = await stub.ReviewGame(pb.ReviewGameRequest(game_id=game_id, budget=1, seed=3))
    data = json.loads(got.review_json)
    # the log as the service reads it: seat names unsealed (rummy_store.sealed)
    events = [from_dict(e.data) for e in await GameStore(store).read(game_id)]
    assert got.version == len(events)
    assert data == json.loads(json.dumps(review(events, budget=1, seed=3).to_dict()))
    assert [s["seat"] for s in data["seats"]] == [0, 1] and data["graph"]
    mine = json.loads((await stub.ReviewGame(pb.ReviewGameRequest(
        game_id=game_id, token=tokens[1], seat=1, budget=0))).review_json)
    assert mine["seat"] == 1 and {d["seat"] for d in mine["decisions"]} <= {1}
    assert mine["graph"] == []
    for bad in (pb.ReviewGameRequest(game_id=game_id, budget=9),
                pb.ReviewGameRequest(game_id=game_id, seat=2)):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.ReviewGame(bad)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.ReviewGame(pb.ReviewGameRequest(game_id="no-such-game"))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
