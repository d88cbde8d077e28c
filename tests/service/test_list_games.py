"""``ListGames`` on a real server over the real Redis store: an API-key caller lists the
games it created, the admin token lists every game; filtered by state, paged."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.callers import CallerPolicy, hash_api_key, new_api_key, parse_api_keys

from .conftest import ADMIN_TOKEN, bots, humans, play_turns, serving

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.timeout(120)]

KEY_A, KEY_B = new_api_key(), new_api_key()
AS_A = (("authorization", f"Bearer {KEY_A}"),)
AS_B = (("authorization", f"Bearer {KEY_B}"),)


def _policy() -> CallerPolicy:
    return CallerPolicy(parse_api_keys(f"alice:{hash_api_key(KEY_A)}\n"
                                       f"bob:{hash_api_key(KEY_B)}\n"))


async def _all_pages(stub: Any, metadata: Any, **request: Any) -> list[pb.GameSummary]:
    games: list[pb.GameSummary] = []
    token = ""
    while True:
        page = await stub.ListGames(pb.ListGamesRequest(page_token=token, **request),
                                    metadata=metadata)
        games += page.games
        token = page.next_page_token
        if not token:
            return games


async def _reason(call: Any) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    md = dict(err.value.trailing_metadata() or ())
    return err.value.code(), md.get("rummy-reason", "")


async def test_list_games_by_caller_state_and_page(store) -> None:
    async with serving(store, callers=_policy()) as running:
        stub: pb_grpc.GameServiceStub = running.stub
        mine = []
        for i in range(3):  # alice: three games of two humans, the last one played out
            created = await stub.CreateGame(pb.CreateGameRequest(
                seats=humans(2), variants={"target_score": str(30 + i)}), metadata=AS_A)
            mine.append(created)
        bob = await stub.CreateGame(pb.CreateGameRequest(seats=humans(3)), metadata=AS_B)
        last = mine[-1]
        tokens = {t.seat: t.token for t in last.tokens}
        await play_turns(stub, last.game_id, tokens, {0: "greedy", 1: "greedy"})

        listed = await _all_pages(stub, AS_A, page_size=2)
        assert [g.game_id for g in listed] == [c.game_id for c in reversed(mine)]  # newest first
        first = listed[-1]
        assert [(s.kind, s.name) for s in first.seats] == [
            (pb.SEAT_KIND_HUMAN, "p0"), (pb.SEAT_KIND_HUMAN, "p1")]
        assert first.rules.target_score == 30 and first.creator == "key:alice"
        assert 0 < first.created <= first.last_move and first.version == 2
        assert not first.finished
        done = listed[0]
        assert done.finished and done.version > 2 and done.last_move > done.created

        page = await stub.ListGames(pb.ListGamesRequest(page_size=2), metadata=AS_A)
        assert len(page.games) == 2 and page.next_page_token
        active = await _all_pages(stub, AS_A, state=pb.GAME_LIST_FILTER_ACTIVE)
        assert [g.game_id for g in active] == [mine[1].game_id, mine[0].game_id]
        finished = await _all_pages(stub, AS_A, state=pb.GAME_LIST_FILTER_FINISHED)
        assert [g.game_id for g in finished] == [last.game_id]

        bobs = await _all_pages(stub, AS_B)
        assert [g.game_id for g in bobs] == [bob.game_id]
        admin = await _all_pages(stub, AS_B, admin_token=ADMIN_TOKEN, page_size=1)
        assert {g.game_id for g in admin} >= {bob.game_id, *(c.game_id for c in mine)}

        # a page token is bound to its filter; refusals name the reason
        assert await _reason(stub.ListGames(pb.ListGamesRequest(
            page_token=page.next_page_token, state=pb.GAME_LIST_FILTER_ACTIVE),
            metadata=AS_A)) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST")
        assert await _reason(stub.ListGames(pb.ListGamesRequest(page_token="garbage!"),
                                            metadata=AS_A)) == \
            (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST")
        assert await _reason(stub.ListGames(pb.ListGamesRequest(page_size=-1),
                                            metadata=AS_A)) == \
            (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST")
        assert await _reason(stub.ListGames(pb.ListGamesRequest())) == \
            (grpc.StatusCode.UNAUTHENTICATED, "NO_CREDENTIALS")
        assert await _reason(stub.ListGames(pb.ListGamesRequest(admin_token="wrong"),
                                            metadata=AS_A)) == \
            (grpc.StatusCode.PERMISSION_DENIED, "BAD_TOKEN")


async def test_an_open_server_lists_to_the_admin_only(running) -> None:
    stub = running.stub
    created = await stub.CreateGame(pb.CreateGameRequest(seats=bots("random", "random")))
    code, reason = await _reason(stub.ListGames(pb.ListGamesRequest()))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "NO_CREDENTIALS")
    listed = await _all_pages(stub, None, admin_token=ADMIN_TOKEN)
    assert created.game_id in [g.game_id for g in listed]
    assert next(g for g in listed if g.game_id == created.game_id).creator == ""


async def test_a_listing_shows_who_plays_each_seat_now(store) -> None:
    """A human who resigns is played by the server's bot from then on (R13.1): the listing
    shows that bot for the seat, as the seats' views do, and the seat among those that left
    (R13.4); the other seats as created."""
    async with serving(store, callers=_policy()) as running:
        stub: pb_grpc.GameServiceStub = running.stub
        created = await stub.CreateGame(pb.CreateGameRequest(
            seats=[*humans(2), pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy="random")],
            takeover_strategy="greedy"), metadata=AS_A)
        tokens = {t.seat: t.token for t in created.tokens}
        (before,) = await _all_pages(stub, AS_A)
        assert list(before.controllers) == ["human", "human", "bot:random"]
        assert list(before.left) == []
        await stub.Resign(pb.ResignRequest(game_id=created.game_id, token=tokens[1]))
        (after,) = [g for g in await _all_pages(stub, AS_A) if g.game_id == created.game_id]
        assert list(after.controllers) == ["human", "bot:greedy", "bot:random"]
        assert list(after.left) == [1]
        view = await stub.GetView(pb.GetViewRequest(game_id=created.game_id,
                                                    token=tokens[0]))
        assert list(view.view.controllers) == list(after.controllers)


async def test_last_move_is_never_before_created() -> None:
    """The store keeps milliseconds: the creating append's time could read a fraction of
    a millisecond before the creation time taken just before it (seen once in `make
    test`: created 1796557351.3590252, last_move 1796557351.359)."""
    from rummy_grpc.listing import _summary

    from rummy import step
    from rummy.commands import CreateGame

    state, _ = step(None, CreateGame(2, 5))

    class Repo:
        async def meta(self, game_id: str) -> dict[str, Any]:
            return {"seats": [{"kind": "human", "name": f"p{i}"} for i in (0, 1)],
                    "created": 1796557351.3590252, "creator": "key:alice"}

        async def latest(self, game_id: str) -> tuple[Any, float]:
            return state, 1796557351.359

    got = await _summary(Repo(), "g", None)  # type: ignore[arg-type]
    assert got is not None
    assert got.created == 1796557351.3590252 and got.last_move == got.created
