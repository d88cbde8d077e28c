"""Features built on single Redis and the memory store, proved on a local 3-master Redis
Cluster (fixtures in conftest.py) through real ``rummy serve`` processes on the cluster URL:

* the seat lifecycle (R13): a human leaves mid-turn, the taking-over bot plays the seat to
  the game's end, the log replays (``verify_log``) and names who played each seat; every
  human gone ends the game at once (R13.5);
* the legal-move help: ``CheckMeld`` answers as ``Meld`` would, refused or accepted, and
  appends nothing; ``GetLegalActions`` and ``GetHint`` answer the seat to act;
* ``ListGames`` of an API-key caller reads its own games from the per-creator index, paged
  and filtered by state;
* retention: ``rummy serve --retain-finished`` moves finished games from the cluster to the
  PostgreSQL archive (their cluster keys and index entries gone), and they still answer
  ``GetEvents`` and ``GetState``.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import grpc
import pytest
import rummy_grpc  # noqa: F401 - generates rummy_api when missing
from rummy_api.v1 import game_service_pb2 as pb
from rummy_api.v1 import game_service_pb2_grpc as pb_grpc
from rummy_grpc.callers import hash_api_key, new_api_key
from rummy_grpc.convert import view_from_proto
from rummy_store import RedisEventStore
from rummy_store.retention import _KINDS

from rummy.bots import make_bot
from rummy.events import SeatLeft, SeatTakenOver, from_dict
from rummy.invariants import verify_log
from tests.chaos_helpers import ADMIN_TOKEN, ROOT, served_server
from tests.harness import HANG_GUARD
from tests.service.conftest import humans, rpc_error_rule, send
from tests.service.test_lifecycle import SEAT_MOVES, _play_humans, _view

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.asyncio,
              pytest.mark.timeout(600)]


def _channel(port: int) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(f"127.0.0.1:{port}")


async def test_a_human_leaves_mid_turn_on_the_cluster_and_the_bot_plays_to_the_end(
        store: RedisEventStore, tmp_path: Path, cluster_url: str) -> None:
    with served_server(cluster_url, store.prefix, tmp_path, "life") as port:
        async with _channel(port) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            created = await stub.CreateGame(pb.CreateGameRequest(
                seats=humans(3), variants={"target_score": "1"}, seed=61,
                admin_token=ADMIN_TOKEN, takeover_strategy="random"))
            game = created.game_id
            tokens = {t.seat: t.token for t in created.tokens}
            first = (await _view(stub, game, tokens[0])).turn
            # the seat to act draws, then leaves before it melds or passes (R13.1)
            await stub.Draw(pb.DrawRequest(game_id=game, token=tokens[first]))
            left = (await stub.Leave(pb.LeaveRequest(game_id=game,
                                                     token=tokens[first]))).result
            assert [e.type for e in left.events][:2] == ["SeatLeft", "SeatTakenOver"]
            assert left.events[1].seat_taken_over.strategy == "random"
            for s in range(3):  # every seat sees who plays each seat now
                v = await _view(stub, game, tokens[s])
                assert v.controllers[first] == "bot:random" and v.away[first] == "leave"
            with pytest.raises(grpc.aio.AioRpcError) as err:  # its token moves no more
                await stub.Draw(pb.DrawRequest(game_id=game, token=tokens[first]))
            assert rpc_error_rule(err.value) == "R13.1"
            with pytest.raises(grpc.aio.AioRpcError) as err:  # no reclaim in this game
                await stub.ReclaimSeat(pb.ReclaimSeatRequest(game_id=game,
                                                             token=tokens[first]))
            assert rpc_error_rule(err.value) == "R13.3"
            others = {s: t for s, t in tokens.items() if s != first}
            final = await _play_humans({s: stub for s in others}, game, others)
            assert list(final.result.left) == [first]
            assert first not in final.result.winners and final.result.bonuses[first] == 0
            assert final.controllers[first] == "bot:random"
            page = await stub.GetEvents(pb.GetEventsRequest(game_id=game,
                                                            admin_token=ADMIN_TOKEN))
    stored = await store.read(game)  # the log as the cluster holds it
    assert [e.version for e in page.events] == [e.version for e in stored]
    events = [from_dict(e.data) for e in stored]
    *_, state = verify_log(events)  # every event legal where it stands
    assert state.is_over
    assert [(e.seat, e.reason) for e in events if isinstance(e, SeatLeft)] == [(first, "leave")]
    taken = [i for i, e in enumerate(events) if isinstance(e, SeatTakenOver)]
    assert len(taken) == 1 and events[taken[0]].seat == first
    assert events[taken[0]].strategy == "random"
    assert any(getattr(e, "seat", None) == first and e.TYPE in SEAT_MOVES
               for e in events[taken[0] + 1:])  # the bot went on playing the seat


async def test_two_servers_on_the_cluster_drive_the_taking_over_bot_once(
        store: RedisEventStore, tmp_path: Path, cluster_url: str) -> None:
    """The seat a bot took over is played by whichever server claims the game's turn (its
    due entry): two processes on one cluster, each of its moves recorded once."""
    with served_server(cluster_url, store.prefix, tmp_path, "a") as port_a, \
            served_server(cluster_url, store.prefix, tmp_path, "b") as port_b:
        async with _channel(port_a) as ca, _channel(port_b) as cb:
            a, b = pb_grpc.GameServiceStub(ca), pb_grpc.GameServiceStub(cb)
            created = await a.CreateGame(pb.CreateGameRequest(
                seats=humans(3), variants={"target_score": "1"}, seed=63,
                admin_token=ADMIN_TOKEN))
            game = created.game_id
            tokens = {t.seat: t.token for t in created.tokens}
            await a.Leave(pb.LeaveRequest(game_id=game, token=tokens[1]))  # through A
            rest = {0: tokens[0], 2: tokens[2]}
            final = await _play_humans({0: b, 2: b}, game, rest)  # through B
            assert list(final.result.left) == [1]
    events = [from_dict(e.data) for e in await store.read(game)]
    states = list(verify_log(events))  # a bot move recorded twice would be illegal
    assert states[-1].is_over
    assert [e.seat for e in events if isinstance(e, SeatTakenOver)] == [1]
    moves = [e for e in events if getattr(e, "seat", None) == 1 and e.TYPE in SEAT_MOVES]
    assert sum(e.TYPE == "TurnEnded" for e in moves) >= 1  # the bot played turns of seat 1


async def test_a_seat_left_is_reclaimed_at_the_start_of_its_turn_on_the_cluster(
        store: RedisEventStore, tmp_path: Path, cluster_url: str) -> None:
    """R13.3 on the cluster: a seat that left asks back while the bot plays it; the server
    records the request and hands the seat back at the start of its next turn."""
    with served_server(cluster_url, store.prefix, tmp_path, "reclaim") as port:
        async with _channel(port) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            created = await stub.CreateGame(pb.CreateGameRequest(
                seats=humans(2), seed=64, admin_token=ADMIN_TOKEN, allow_reclaim=True))
            game = created.game_id
            tokens = {t.seat: t.token for t in created.tokens}
            away = (await _view(stub, game, tokens[0])).turn  # leaves in its own turn
            other = 1 - away
            await stub.Leave(pb.LeaveRequest(game_id=game, token=tokens[away]))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + HANG_GUARD
            while (await _view(stub, game, tokens[other])).turn != other:
                assert loop.time() < deadline, "the bot did not play the seat's turn"
                await asyncio.sleep(0.05)
            asked = (await stub.ReclaimSeat(pb.ReclaimSeatRequest(
                game_id=game, token=tokens[away], wait=True))).result
            assert [e.type for e in asked.events][:1] == ["ReclaimRequested"]
            agent = make_bot("basic", 7)
            while True:  # the other seat plays its turn; the seat comes back after it
                got = [e for e in await store.read(game) if e.type == "SeatReclaimed"]
                if got:
                    break
                assert loop.time() < deadline, "the seat was not reclaimed"
                v = await _view(stub, game, tokens[other])
                assert v.phase != pb.PHASE_GAME_OVER
                if v.turn == other and v.actions:
                    try:
                        await send(stub, game, tokens[other], agent.act(view_from_proto(v)),
                                   expected_version=v.version)
                    except grpc.aio.AioRpcError as err:
                        assert err.code() == grpc.StatusCode.ABORTED, err
                else:
                    await asyncio.sleep(0.05)
            at = (await stub.GetState(pb.GetStateRequest(
                game_id=game, version=got[0].version, admin_token=ADMIN_TOKEN))).view
            assert at.turn == away and at.draws == 0 and at.controllers[away] == "human"
            mine = await _view(stub, game, tokens[away])
            assert mine.controllers[away] == "human" and mine.turn == away
            drawn = (await stub.Draw(pb.DrawRequest(game_id=game,
                                                    token=tokens[away]))).result
            assert drawn.view.phase == pb.PHASE_MELD_OR_PASS  # its token moves again
    events = [from_dict(e.data) for e in await store.read(game)]
    verify_log(events)
    assert [e.TYPE for e in events if e.TYPE in ("SeatLeft", "SeatTakenOver",
                                                  "ReclaimRequested", "SeatReclaimed")] == \
        ["SeatLeft", "SeatTakenOver", "ReclaimRequested", "SeatReclaimed"]


async def test_every_human_gone_ends_the_game_at_once_on_the_cluster(
        store: RedisEventStore, tmp_path: Path, cluster_url: str) -> None:
    with served_server(cluster_url, store.prefix, tmp_path, "r135") as port:
        async with _channel(port) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            created = await stub.CreateGame(pb.CreateGameRequest(
                seats=[*humans(2), pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy="basic")],
                seed=62, admin_token=ADMIN_TOKEN))
            game = created.game_id
            t = {x.seat: x.token for x in created.tokens}
            await stub.Resign(pb.ResignRequest(game_id=game, token=t[1]))
            end = (await stub.Leave(pb.LeaveRequest(game_id=game, token=t[0]))).result
            assert [e.type for e in end.events] == ["SeatLeft", "GameEnded"]  # R13.5
            ended = end.events[-1].game_ended
            assert sorted(ended.left) == [0, 1]
            assert list(ended.final) == list(ended.totals)
            view = (await stub.GetView(pb.GetViewRequest(game_id=game))).view
            assert view.phase == pb.PHASE_GAME_OVER
    events = [from_dict(e.data) for e in await store.read(game)]
    *_, state = verify_log(events)
    assert state.is_over and events[-1].TYPE == "GameEnded"
    assert await store.client.zscore(f"{store.prefix}:games:active", game) is None


async def _refusal(call: Any) -> tuple[grpc.StatusCode, str, str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    md = dict(err.value.trailing_metadata() or ())
    return (err.value.code(), md.get("rummy-reason", ""), rpc_error_rule(err.value),
            err.value.details() or "")


async def test_check_meld_agrees_with_meld_on_the_cluster_and_appends_nothing(
        store: RedisEventStore, tmp_path: Path, cluster_url: str) -> None:
    with served_server(cluster_url, store.prefix, tmp_path, "help") as port:
        async with _channel(port) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            created = await stub.CreateGame(pb.CreateGameRequest(
                seats=humans(2), seed=11, admin_token=ADMIN_TOKEN))
            game = created.game_id
            tokens = {x.seat: x.token for x in created.tokens}
            compared = accepted = 0
            for _ in range(400):  # follow the hints until a meld was accepted twice
                public = (await stub.GetView(pb.GetViewRequest(game_id=game))).view
                if public.phase == pb.PHASE_GAME_OVER or accepted >= 2:
                    break
                token = tokens[public.turn]
                view = (await stub.GetView(pb.GetViewRequest(game_id=game,
                                                             token=token))).view
                legal = await stub.GetLegalActions(pb.GetLegalActionsRequest(
                    game_id=game, token=token))
                assert legal.version == view.version
                assert list(legal.actions) == list(view.actions)
                h = await stub.GetHint(pb.GetHintRequest(game_id=game, token=token))
                assert h.version == view.version and h.action in view.actions
                hand, table = list(view.hand), list(view.table)
                refused = [[*table, pb.Cards(cards=hand[:1])],  # a one-card meld
                           [*table, pb.Cards(cards=hand[:2])]]  # a two-card meld
                if table:
                    refused.append(table[1:])  # a table card dropped
                if h.action == pb.ACTION_MELD:
                    refused.append([*h.table, pb.Cards(cards=["ZZ"])])  # no such card
                for bad in refused:
                    checked = await _refusal(stub.CheckMeld(pb.CheckMeldRequest(
                        game_id=game, token=token, table=bad)))
                    melded = await _refusal(stub.Meld(pb.MeldRequest(
                        game_id=game, token=token, table=bad)))
                    assert checked[:3] == melded[:3], (bad, checked, melded)
                    compared += 1
                assert await store.version(game) == view.version  # nothing appended
                opts = pb.CommandOptions(expected_version=h.version)
                if h.action == pb.ACTION_MELD:
                    checked_ok = await stub.CheckMeld(pb.CheckMeldRequest(
                        game_id=game, token=token, table=h.table,
                        expected_version=h.version))
                    assert await store.version(game) == view.version
                    assert checked_ok.version == h.version and checked_ok.points == h.points
                    result = (await stub.Meld(pb.MeldRequest(
                        game_id=game, token=token, table=h.table, options=opts))).result
                    after = sorted(hand)
                    for card in checked_ok.cards:
                        after.remove(card)  # the cards CheckMeld named left the hand
                    assert sorted(result.view.hand) == after
                    assert checked_ok.goes_out == (not after)
                    accepted += 1
                    continue
                method = {pb.ACTION_DRAW: stub.Draw, pb.ACTION_PASS: stub.Pass,
                          pb.ACTION_KNOCK: stub.Knock, pb.ACTION_END_TURN: stub.EndTurn}
                request = {pb.ACTION_DRAW: pb.DrawRequest, pb.ACTION_PASS: pb.PassRequest,
                           pb.ACTION_KNOCK: pb.KnockRequest,
                           pb.ACTION_END_TURN: pb.EndTurnRequest}[h.action]
                await method[h.action](request(game_id=game, token=token, options=opts))
            assert accepted >= 1 and compared >= 10
    events = [from_dict(e.data) for e in await store.read(game)]
    verify_log(events)  # only the commands sent are in the log, each legal


KEY_A, KEY_B = new_api_key(), new_api_key()
AS_A = (("authorization", f"Bearer {KEY_A}"),)
AS_B = (("authorization", f"Bearer {KEY_B}"),)


async def _pages(stub: Any, size: int, state: int = 0) -> list[list[str]]:
    pages, token = [], ""
    while True:
        page = await stub.ListGames(pb.ListGamesRequest(page_size=size, page_token=token,
                                                        state=state), metadata=AS_A)
        pages.append([g.game_id for g in page.games])
        token = page.next_page_token
        if not token:
            return pages


async def test_an_api_key_caller_lists_its_own_games_on_the_cluster(
        store: RedisEventStore, tmp_path: Path, cluster_url: str) -> None:
    keys = tmp_path / "keys"
    keys.write_text(f"alice:{hash_api_key(KEY_A)}\nbob:{hash_api_key(KEY_B)}\n")
    mine: list[str] = []
    theirs: list[str] = []
    with served_server(cluster_url, store.prefix, tmp_path, "list", "--api-keys",
                       str(keys)) as port:
        async with _channel(port) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            for i in range(24):
                who = AS_A if i % 3 == 0 else AS_B
                created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)),
                                                metadata=who)
                (mine if who is AS_A else theirs).append(created.game_id)
                if i % 6 == 0:  # every human leaves: the game ends at once (R13.5)
                    for tok in created.tokens:
                        await stub.Leave(pb.LeaveRequest(game_id=created.game_id,
                                                         token=tok.token))
            ended = set(mine[::2])
            newest = mine[::-1]
            assert len(mine) == 8
            assert await _pages(stub, 3) == [newest[0:3], newest[3:6], newest[6:8]]
            finished = await _pages(stub, 2, state=pb.GAME_LIST_FILTER_FINISHED)
            assert [g for p in finished for g in p] == [g for g in newest if g in ended]
            assert all(len(p) <= 2 for p in finished)
            active = await _pages(stub, 10, state=pb.GAME_LIST_FILTER_ACTIVE)
            assert active == [[g for g in newest if g not in ended]]
            bob = await stub.ListGames(pb.ListGamesRequest(page_size=100), metadata=AS_B)
            assert [g.game_id for g in bob.games] == theirs[::-1]
            with pytest.raises(grpc.aio.AioRpcError) as err:  # no key: not a caller
                await stub.ListGames(pb.ListGamesRequest(page_size=10))
            assert err.value.code() in (grpc.StatusCode.UNAUTHENTICATED,
                                        grpc.StatusCode.PERMISSION_DENIED)


async def _game_keys(store: RedisEventStore, game_id: str) -> list[str]:
    """The game's keys that still exist on the cluster: each kind the mover deletes, and
    any other key naming the game (a scan of every primary)."""
    named = [k for k in (store.key(game_id, kind) for kind in _KINDS)
             if await store.client.exists(k)]
    # this store's keys only (other tests' stores share the cluster under other prefixes and
    # may name games alike), and the id as a whole word ("g1" is not in "g12")
    word = re.compile(rf"(?<![\w-]){re.escape(game_id)}(?![\w-])")
    scanned = [k.decode() if isinstance(k, bytes) else k
               async for k in store.client.scan_iter(match=f"{store.prefix}:*{game_id}*")]
    return sorted({*named, *(k for k in scanned if word.search(k))})


async def test_the_mover_archives_finished_games_from_the_cluster(
        store: RedisEventStore, tmp_path: Path, cluster_url: str,
        pg_archive: tuple[str, str]) -> None:
    pg_url, schema = pg_archive
    with served_server(cluster_url, store.prefix, tmp_path, "arch", "--retain-finished",
                       "3s", "--archive-url", pg_url, "--archive-schema", schema) as port:
        async with _channel(port) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            games = {}
            for seed in range(6):  # bot games of one round: over soon after creation
                created = await stub.CreateGame(pb.CreateGameRequest(
                    seats=[pb.SeatSpec(kind=pb.SEAT_KIND_BOT, strategy="random")] * 2,
                    variants={"target_score": "1"}, seed=70 + seed))
                games[created.game_id] = None
            scanned = {k.decode() if isinstance(k, bytes) else k
                       async for k in store.client.scan_iter(match=f"{store.prefix}:*")}
            nodes = {store.client.get_node_from_key(store.key(g, "events")).port
                     for g in games}
            if len(nodes) > 1:  # the scan of _game_keys reaches every primary
                assert {store.key(g, "events") for g in games} <= scanned
            running = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + HANG_GUARD
            while True:  # until the server's bots ended every game
                views = [(await stub.GetView(pb.GetViewRequest(game_id=g))).view
                         for g in games]
                if all(v.phase == pb.PHASE_GAME_OVER for v in views):
                    break
                assert loop.time() < deadline, "the bot games did not end"
                await asyncio.sleep(0.2)
            for g in games:  # the whole log and the final view, read from the cluster
                page = await stub.GetEvents(pb.GetEventsRequest(game_id=g,
                                                                admin_token=ADMIN_TOKEN))
                final = (await stub.GetState(pb.GetStateRequest(
                    game_id=g, admin_token=ADMIN_TOKEN, version=len(page.events)))).view
                games[g] = (list(page.events), list(final.totals), final.version)
            deadline = loop.time() + HANG_GUARD
            while any([await _game_keys(store, g) for g in games]):  # a pass every 5 s
                assert loop.time() < deadline, "the finished games were not moved"
                await asyncio.sleep(0.5)
            for g, (events, totals, version) in games.items():
                assert await store.client.zscore(f"{store.prefix}:games", g) is None
                assert await store.client.zscore(f"{store.prefix}:due", g) is None
                page = await stub.GetEvents(pb.GetEventsRequest(game_id=g,
                                                                admin_token=ADMIN_TOKEN))
                assert list(page.events) == events  # the archive's copy, event for event
                state = await stub.GetState(pb.GetStateRequest(
                    game_id=g, admin_token=ADMIN_TOKEN, version=version))
                assert state.version == version and list(state.view.totals) == totals
                assert state.view.phase == pb.PHASE_GAME_OVER
                assert not await _game_keys(store, g)  # reading it put nothing back
            one = next(iter(games))
            streamed = []  # a spectator's stream of an archived game
            async for msg in stub.StreamEvents(pb.StreamEventsRequest(game_id=one)):
                streamed.append(msg.event)
                if msg.event.type == "GameEnded":
                    break
            assert streamed == games[one][0]
            assert not await _game_keys(store, one)
            # the game still being played stays on the cluster
            assert await _game_keys(store, running.game_id)
            assert await store.client.zscore(f"{store.prefix}:games:active",
                                             running.game_id) is not None
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'services'}",
               RUMMY_ARCHIVE_URL=pg_url, RUMMY_ARCHIVE_SCHEMA=schema)
    out = subprocess.run([sys.executable, "-m", "rummy_cli", "replay", one, "--redis-url",
                          cluster_url, "--prefix", store.prefix], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr  # the command line reads the archive's copy
    assert f"verified {len(games[one][0])} events" in out.stdout
    from rummy_store.archive import PgArchive
    archive = PgArchive(pg_url, schema=schema)
    await archive.setup()
    try:
        assert await archive.count_games() == len(games)
        for g in games:
            assert await archive.has_game(g)
    finally:
        await archive.close()


async def test_a_move_cut_between_the_keys_and_the_index_is_finished_by_the_next_pass(
        store: RedisEventStore, pg_archive: tuple[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a cluster the game's keys go in one script (their slot) and its index entries
    right after, in other slots: a mover killed in between leaves an index entry without
    keys, which the next pass removes once it finds the archive's copy; a game appended
    to after the copy keeps its keys."""
    from rummy_store.archive import PgArchive
    from rummy_store.retention import Archiver
    from rummy_store.sealed import GameStore

    from tests.service.archive_helpers import digest, write_game

    assert store.is_cluster
    tag = uuid.uuid4().hex[:8]  # game ids of this test only
    archive = PgArchive(*pg_archive[:1], schema=pg_archive[1])
    await archive.setup()
    gs = GameStore(store, archive)
    try:
        for i in range(4):
            await write_game(gs, f"g{i}-{tag}", seed=i, names=(f"Ann{i}", f"Bob{i}"))
        before = {g: digest(await gs.read(g)) for g in (f"g{i}-{tag}" for i in range(4))}
        await asyncio.sleep(0.05)
        archiver = Archiver(gs, retain=0.01)
        real = archiver._unlist

        async def killed(game_id: str) -> None:
            raise ConnectionError("killed between the keys and the index")

        monkeypatch.setattr(archiver, "_unlist", killed)
        got = await archiver.run_once()
        assert (got.moved, got.failed) == (0, 4)  # the keys went, the index entries not
        index = f"{store.prefix}:games"
        for g in before:
            assert not await _game_keys(store, g)
            assert await store.client.zscore(index, g) is not None
            assert digest(await gs.read(g)) == before[g]  # read from the archive
        monkeypatch.setattr(archiver, "_unlist", real)
        got = await archiver.run_once()
        assert (got.moved, got.failed) == (0, 0)
        for g in before:
            assert await store.client.zscore(index, g) is None
            assert digest(await gs.read(g)) == before[g]
        await write_game(gs, "late", seed=5, names=("Cy", "Di"))
        n = await store.version("late")
        await store.append("late", [{"type": "Passed", "v": 1, "seat": 0}], n)
        assert await archiver._delete("late", n) == 0  # the script checks the stream's end
        assert await store.version("late") == n + 1
        assert await store.client.zscore(index, "late") is not None
        assert await archive.count_games() == 4
    finally:
        await archive.close()


@pytest.mark.parametrize("idle", [[], ["--idle-expiry", "0"]], ids=["idle-expiry", "none"])
async def test_a_callers_list_after_its_finished_games_moved_to_the_archive(
        store: RedisEventStore, tmp_path: Path, cluster_url: str,
        pg_archive: tuple[str, str], idle: list[str]) -> None:
    """``ListGames`` lists the games still in Redis (docs/operations.md, "What an archived
    game answers"): once the caller's finished games moved, its pages hold the others,
    whatever the idle expiry, and every listed game answers."""
    keys = tmp_path / "keys"
    keys.write_text(f"alice:{hash_api_key(KEY_A)}\n")
    pg_url, schema = pg_archive
    with served_server(cluster_url, store.prefix, tmp_path, "la", "--api-keys", str(keys),
                       "--retain-finished", "1s", "--archive-url", pg_url,
                       "--archive-schema", schema, *idle) as port:
        async with _channel(port) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            mine = []
            for i in range(6):
                created = await stub.CreateGame(pb.CreateGameRequest(seats=humans(2)),
                                                metadata=AS_A)
                mine.append(created.game_id)
                if i % 2 == 0:  # every human leaves: the game ends at once (R13.5)
                    for tok in created.tokens:
                        await stub.Leave(pb.LeaveRequest(game_id=created.game_id,
                                                         token=tok.token))
            ended, newest = set(mine[::2]), mine[::-1]
            assert await _pages(stub, 2, state=pb.GAME_LIST_FILTER_FINISHED) == \
                [[g for g in newest if g in ended][:2], [newest[-1]]]
            loop = asyncio.get_running_loop()
            deadline = loop.time() + HANG_GUARD
            while any([await _game_keys(store, g) for g in ended]):
                assert loop.time() < deadline, "the finished games were not moved"
                await asyncio.sleep(0.5)
            still = [g for g in newest if g not in ended]
            creator = (await store.get_meta(still[0]))["creator"]
            for key in store._creator_keys(creator):  # the mover took them out, unlisted
                assert set(ended).isdisjoint(await store.client.zrange(key, 0, -1))
            assert await _pages(stub, 2) == [still[:2], still[2:]]
            assert await _pages(stub, 2, state=pb.GAME_LIST_FILTER_FINISHED) == [[]]
            assert await _pages(stub, 5, state=pb.GAME_LIST_FILTER_ACTIVE) == [still]
            for g in ended:  # moved, not lost
                page = await stub.GetEvents(pb.GetEventsRequest(
                    game_id=g, admin_token=ADMIN_TOKEN), metadata=AS_A)
                assert page.events[-1].type == "GameEnded"
