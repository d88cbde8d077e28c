"""Secret seeds, idempotent CreateGame, a cap of events per game, idle expiry and re-driven
bots, on a real server over the real Redis."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import pytest
import redis.exceptions
from prometheus_client import REGISTRY
from rummy_api.v1 import game_service_pb2 as pb
from rummy_store import RedisEventStore

from rummy.events import GameStarted
from tests.harness import HANG_GUARD
from tests.redis_helpers import REDIS_URL

from .conftest import ADMIN_TOKEN, Running, bots, humans, serving

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.timeout(60)]


def _reason(err: grpc.aio.AioRpcError) -> str:
    return dict(err.trailing_metadata() or ()).get("rummy-reason", "")


# -- secret seeds ---------------------------------------------------------------------------


async def test_a_chosen_seed_with_a_human_seat_needs_the_admin_token(running: Running) -> None:
    # the README's own example used to let the creator compute the bot's hand
    stub = running.stub
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CreateGame(pb.CreateGameRequest(seats=[*humans(1), *bots("basic")], seed=7))
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert _reason(err.value) == "SEED_NEEDS_ADMIN" and "admin token" in err.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CreateGame(pb.CreateGameRequest(seats=humans(2), seed=7,
                                                   admin_token="wrong"))
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert await running.server.app.store.list_games() == []  # nothing was created
    ok = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2), seed=7,
                                                    admin_token=ADMIN_TOKEN))
    assert ok.version == 2
    sim = await stub.CreateGame(pb.CreateGameRequest(seats=bots("random", "random"), seed=7))
    assert sim.version == 2  # all-bot games (simulations) may choose their seed


async def test_the_server_seed_is_secret_until_the_game_is_over(running: Running,
                                                                store: RedisEventStore) -> None:
    stub = running.stub
    games = [await stub.CreateGame(pb.CreateGameRequest(seats=humans(2))) for _ in range(2)]
    seeds = []
    for g in games:
        first = (await store.read(g.game_id, 0, 1))[0]
        seeds.append(first.data["seed"])  # recorded in the log ...
        for token in ("", g.tokens[0].token):  # ... hidden from spectators and seats
            events = (await stub.GetEvents(pb.GetEventsRequest(
                game_id=g.game_id, token=token, to_version=1))).events
            assert not events[0].game_started.HasField("seed")
            state = await stub.GetState(pb.GetStateRequest(game_id=g.game_id, token=token))
            assert not state.HasField("seed") and not state.full_information
    assert seeds[0] != seeds[1] and all(0 <= s < 2**62 for s in seeds)
    admin = await stub.GetState(pb.GetStateRequest(game_id=games[0].game_id,
                                                   admin_token=ADMIN_TOKEN))
    assert admin.seed == seeds[0]
    assert isinstance(running.server.app.repo.mapper.to_event(
        (await store.read(games[0].game_id, 0, 1))[0]), GameStarted)


# -- idempotent CreateGame ------------------------------------------------------------------


async def test_a_retried_create_game_returns_the_original_game(running: Running,
                                                               store: RedisEventStore) -> None:
    stub = running.stub
    req = pb.CreateGameRequest(seats=[*humans(1), *bots("basic")], request_id="c-1",
                               variants={"target_score": "50"})
    first, again = await stub.CreateGame(req), await stub.CreateGame(req)
    assert again.game_id == first.game_id and again.version == first.version
    assert [(t.seat, t.token) for t in again.tokens] == [(t.seat, t.token) for t in first.tokens]
    assert await store.list_games() == [first.game_id]  # one game, not two
    # the same id for another request is refused, and creates nothing
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CreateGame(pb.CreateGameRequest(seats=humans(3), request_id="c-1"))
    assert err.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert await store.list_games() == [first.game_id]
    concurrent = await asyncio.gather(*(stub.CreateGame(pb.CreateGameRequest(
        seats=humans(2), request_id="c-2")) for _ in range(10)))
    assert len({c.game_id for c in concurrent}) == 1
    assert len(await store.list_games()) == 2
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.CreateGame(pb.CreateGameRequest(seats=humans(2), request_id="has space"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_a_create_game_cut_short_is_completed_by_its_retry(
        store: RedisEventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving(store) as running:
        real = type(store).append
        calls = {"n": 0}

        async def failing_once(self: Any, *args: Any, **kwargs: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 1:
                raise redis.exceptions.ConnectionError("lost the store mid-create")
            return await real(self, *args, **kwargs)

        monkeypatch.setattr(type(store), "append", failing_once)
        req = pb.CreateGameRequest(seats=humans(2), request_id="c-3")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await running.stub.CreateGame(req)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert await store.list_games() == []  # meta alone is no game
        created = await running.stub.CreateGame(req)
        assert created.version == 2 and await store.list_games() == [created.game_id]
        view = await running.stub.GetView(pb.GetViewRequest(game_id=created.game_id,
                                                            token=created.tokens[0].token))
        assert view.view.version == 2


# -- limits ---------------------------------------------------------------------------------


async def test_an_endless_bot_game_stops_at_the_cap_of_events(store: RedisEventStore) -> None:
    # an all-bot game to 100000 points used to run forever: 170k events in 30 s
    async with serving(store, max_events=60) as running:
        created = await running.stub.CreateGame(pb.CreateGameRequest(
            seats=bots("random", "random"), variants={"target_score": "100000"}, seed=4))
        deadline = time.monotonic() + HANG_GUARD
        while await store.list_games(active_only=True):
            assert time.monotonic() < deadline, "the game never stopped"
            await asyncio.sleep(0.05)
        version = await store.version(created.game_id)
        assert 55 <= version <= 60
        assert await store.due(created.game_id) is None  # nothing left to do on it
        await asyncio.sleep(0.5)
        assert await store.version(created.game_id) == version


async def test_a_command_past_the_cap_is_refused_and_appends_nothing(
        store: RedisEventStore) -> None:
    async with serving(store, max_events=3) as running:
        created = await running.stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
        tokens = {t.seat: t.token for t in created.tokens}
        turn = (await running.stub.GetView(pb.GetViewRequest(
            game_id=created.game_id, token=tokens[0]))).view.turn
        await running.stub.Draw(pb.DrawRequest(game_id=created.game_id, token=tokens[turn]))
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await running.stub.Pass(pb.PassRequest(game_id=created.game_id,
                                                   token=tokens[turn]))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert _reason(err.value) == "GAME_LIMIT" and "3 events" in err.value.details()
        assert await store.version(created.game_id) == 3


async def test_abandoned_games_expire_and_leave_the_list(prefix: str) -> None:
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix, idle_ttl=0.5,
                                     request_ttl=0.5)
    try:
        async with serving(store) as running:
            left = await running.stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
            done = await running.stub.CreateGame(pb.CreateGameRequest(
                seats=bots("random", "random"), variants={"target_score": "10"}, seed=1))
            deadline = time.monotonic() + HANG_GUARD
            while done.game_id in await store.list_games(active_only=True):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.8)
            assert await store.list_games() == [done.game_id]  # the finished one is kept
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await running.stub.GetView(pb.GetViewRequest(game_id=left.game_id))
            assert err.value.code() == grpc.StatusCode.NOT_FOUND
            events = await store.read(done.game_id)
            assert events[-1].type == "GameEnded"
            assert not await store.client.keys(store.key(done.game_id, "requests") + "*")
    finally:
        await store.close()


# -- bots cut short after an applied command (found by a tester) -------------------------


async def test_bots_cut_short_after_an_applied_command_go_on_at_once(
        store: RedisEventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # A store outage right after a human's append stops the bots that move next. The human's
    # call reports its command applied (it once answered UNAVAILABLE, and a refusal such as
    # OOM answered INTERNAL), and this replica drives the bots again as soon as the store
    # answers: long before the 60 s lease the poll would wait for. A retry of the command
    # with its request_id is a duplicate.
    async with serving(store, lease=60.0) as running:
        stub = running.stub
        created = await stub.CreateGame(pb.CreateGameRequest(
            seats=[*humans(1), *bots("basic")], variants={"target_score": "500"}))
        gid, token = created.game_id, created.tokens[0].token
        view = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=token))).view
        assert view.turn == 0
        bots_driver = running.server.app.bots
        real = type(bots_driver).drive
        calls = {"n": 0}

        async def outage_once(self: Any, game_id: str, out: Any = None) -> Any:
            calls["n"] += 1
            if calls["n"] == 1:
                raise redis.exceptions.ConnectionError("the store went away after the append")
            return await real(self, game_id, out)

        monkeypatch.setattr(type(bots_driver), "drive", outage_once)
        failures = REGISTRY.get_sample_value("rummy_follow_up_failures_total") or 0.0
        # draw and pass (R3.1-R3.3) until the command that hands the turn to the bot
        handed: tuple[str, Any, int] | None = None
        for i in range(20):
            opts = pb.CommandOptions(request_id=f"c{i}")
            kind = {pb.PHASE_DRAW: "draw", pb.PHASE_MELD_OR_PASS: "pass"}.get(view.phase,
                                                                             "end_turn")
            request = {"draw": pb.DrawRequest, "pass": pb.PassRequest,
                       "end_turn": pb.EndTurnRequest}[kind](game_id=gid, token=token,
                                                            options=opts)
            method = {"draw": stub.Draw, "pass": stub.Pass, "end_turn": stub.EndTurn}[kind]
            res = await method(request)  # never UNAVAILABLE: every command here is applied
            if calls["n"]:
                handed = (kind, request, res.result.version)
                break
            view = res.result.view
        assert handed is not None, "no command handed the turn to the bot"
        kind, request, version = handed
        assert (await store.read(gid, version - 1))[0].type == "TurnEnded"
        assert REGISTRY.get_sample_value("rummy_follow_up_failures_total") == failures + 1
        deadline = time.monotonic() + HANG_GUARD
        while await store.version(gid) == version:  # the replica drives the bots again
            assert time.monotonic() < deadline, "the bots waited for the lease"
            await asyncio.sleep(0.05)
        assert calls["n"] >= 2
        method = {"draw": stub.Draw, "pass": stub.Pass, "end_turn": stub.EndTurn}[kind]
        retry = await method(request)
        assert retry.result.duplicate and retry.result.version == version
        while True:
            latest = (await stub.GetView(pb.GetViewRequest(game_id=gid, token=token))).view
            if latest.turn == 0 or latest.phase == pb.PHASE_GAME_OVER:
                break
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
