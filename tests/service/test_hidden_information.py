"""I3 through the service: over random games, no view or streamed event shows a seat another
seat's hand or drawn card, the stock order, or the seed."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.app import GameApp, SeatSpec
from rummy_grpc.convert import view_from_proto
from rummy_store import MemoryEventStore

from rummy.bots import make_bot
from rummy.events import CardDrawn, GameStarted, RoundStarted, from_dict
from rummy.evolve import evolve

from .conftest import ADMIN_TOKEN, humans, send


def _deal(event: RoundStarted, seat: int, players: int, hand_size: int) -> tuple[int, ...]:
    assert event.deck is not None
    return tuple(sorted(event.deck[(seat - event.dealer - 1) % players:hand_size * players:
                                   players]))


def check_redacted(seen, truth, seat, players, hand_size):
    """``seen`` (a seat's copies) against ``truth`` (the full log), event by event."""
    assert len(seen) == len(truth)
    for mine, real in zip(seen, truth, strict=True):
        assert type(mine) is type(real)
        if isinstance(real, GameStarted):
            assert mine.seed is None
            assert mine.players == real.players and mine.rules == real.rules
        elif isinstance(real, RoundStarted):
            assert mine.deck is None
            if seat is None:
                assert mine.hand is None
            else:
                assert mine.hand == _deal(real, seat, players, hand_size)
        elif isinstance(real, CardDrawn):
            if real.seat == seat:
                assert mine == real
            else:
                assert mine.card is None and mine.seat == real.seat and mine.draw == real.draw
        else:
            assert mine == real


async def _play_and_check(seed: int, players: int, lineup: list[str]) -> None:
    store = MemoryEventStore()
    app = GameApp(store, admin_token=ADMIN_TOKEN)
    created = await app.create_game([SeatSpec("human") for _ in range(players)],
                                    {"target_score": "30"}, seed=seed,
                                    admin_token=ADMIN_TOKEN)
    gid, tokens = created.game_id, created.tokens

    async def collect(seat):
        return [t.event async for t in app.stream(gid, tokens[seat] if seat is not None else "")]

    watchers = [asyncio.create_task(collect(s)) for s in (*range(players), None)]
    await asyncio.sleep(0.01)  # the watchers subscribe while the game is in progress
    agents = [make_bot(lineup[i], seed + i) for i in range(players)]
    truth_state = None
    for _ in range(5000):
        version = truth_state.version if truth_state else 0
        for se in await store.read(gid, version):
            truth_state = evolve(truth_state, from_dict(se.data))
        assert truth_state is not None
        for s in range(players):
            v, _ = await app.get_view(gid, tokens[s])
            assert v.hand == truth_state.hands[s]  # only the seat's own hand
            assert v.hand_sizes == tuple(len(h) for h in truth_state.hands)
            assert v.stock_size == truth_state.stock_size
        if truth_state.is_over:
            break
        seat = truth_state.turn
        v, _ = await app.get_view(gid, tokens[seat])
        cmd = agents[seat].act(v)
        kind = {"Draw": "draw", "Pass": "pass", "Meld": "meld", "Knock": "knock",
                "EndTurn": "end_turn"}[type(cmd).__name__]
        table = None
        if kind == "meld":
            from rummy.melds import format_table
            table = format_table(cmd.table)
        out = await app.command(gid, tokens[seat], kind, table, expected_version=v.version)
        check_redacted([t.event for t in out.events],
                       [t.event for t in (await app.get_events(
                           gid, "", ADMIN_TOKEN, v.version))[0]][:len(out.events)],
                       seat, players, 10)
    assert truth_state is not None and truth_state.is_over
    seen = await asyncio.wait_for(asyncio.gather(*watchers), 10)
    truth = [from_dict(se.data) for se in await store.read(gid)]
    for s, events in zip((*range(players), None), seen, strict=True):
        check_redacted(events, truth, s, players, 10)
    await app.close()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), players=st.integers(2, 5),
       lineup=st.lists(st.sampled_from(["random", "basic"]), min_size=5, max_size=5))
def test_views_and_streams_never_leak_hidden_information(seed, players, lineup):
    asyncio.run(_play_and_check(seed, players, lineup))


@pytest.mark.redis
@pytest.mark.asyncio
@pytest.mark.parametrize("seed", [1, 2])
async def test_grpc_streams_and_views_leak_nothing(running, store, seed):
    """The same property on the wire: real server, real Redis, three seats streaming."""
    stub = running.stub
    players = 3
    created = await stub.CreateGame(pb.CreateGameRequest(admin_token=ADMIN_TOKEN,
        seats=humans(players), variants={"target_score": "30"}, seed=seed))
    gid = created.game_id
    tokens = {t.seat: t.token for t in created.tokens}

    async def collect(seat):
        req = pb.StreamEventsRequest(game_id=gid, token=tokens[seat])
        return [m.event async for m in stub.StreamEvents(req)]

    watchers = [asyncio.create_task(collect(s)) for s in range(players)]
    await asyncio.sleep(0.05)
    agents = [make_bot("basic", seed + s) for s in range(players)]
    while True:
        views = [(await stub.GetView(pb.GetViewRequest(game_id=gid, token=tokens[s]))).view
                 for s in range(players)]
        admin = await stub.GetState(pb.GetStateRequest(game_id=gid, admin_token=ADMIN_TOKEN))
        for s, v in enumerate(views):
            assert list(v.hand) == list(admin.hands[s].cards)
        if views[0].phase == pb.PHASE_GAME_OVER:
            break
        seat = views[0].turn
        await send(stub, gid, tokens[seat], agents[seat].act(view_from_proto(views[seat])),
                   expected_version=views[seat].version)
    seen = await asyncio.wait_for(asyncio.gather(*watchers), 10)
    truth = [from_dict(se.data) for se in await store.read(gid)]
    for s, events in enumerate(seen):
        assert len(events) == len(truth)
        for mine, real in zip(events, truth, strict=True):
            if mine.type == "GameStarted":
                assert not mine.game_started.HasField("seed")
            if mine.type == "RoundStarted":
                assert not mine.round_started.deck
                assert len(mine.round_started.hand) == 10
            if mine.type == "CardDrawn":
                assert mine.card_drawn.HasField("card") == (real.seat == s)
