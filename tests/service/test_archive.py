"""Retention and the archive (rummy_store.retention, rummy_store.archive): finished games
move from Redis to PostgreSQL, verified before the Redis keys go, and still read the same
through the store, the service (GetEvents, GetState) and ``rummy replay GAME_ID``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_store import RedisEventStore
from rummy_store.archive import PgArchive
from rummy_store.retention import Archiver
from rummy_store.sealed import GameStore
from rummy_store.shred import is_sealed

from tests.redis_helpers import REDIS_URL
from tests.service.archive_helpers import digest, short_game, write_game
from tests.service.conftest import ADMIN_TOKEN, serving

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.timeout(180)]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


async def _keys(store: RedisEventStore, game_id: str) -> list[str]:
    return [k async for k in store.client.scan_iter(match=f"{store.prefix}:{{{game_id}}}:*")]


async def _game_store(store: RedisEventStore, pg: tuple[str, str]) -> GameStore:
    archive = PgArchive(pg[0], schema=pg[1])
    await archive.setup()
    return GameStore(store, archive)


async def test_finished_games_move_verified_and_read_the_same(
        store: RedisEventStore, pg_archive: tuple[str, str]) -> None:
    gs = await _game_store(store, pg_archive)
    games = {}
    for i in range(12):
        target = gs if i < 8 else store  # four written plaintext, as before sealing
        await write_game(target, f"g{i}", seed=i, names=(f"Ann{i}", f"Bob{i}"))
        games[f"g{i}"] = (digest(await gs.read(f"g{i}")), await gs.get_meta(f"g{i}"),
                          await gs.version(f"g{i}"))
    await store.set_active("running", True)
    await write_game(gs, "running", seed=99, names=("Cy", "Di"))
    await store.set_active("running", True)  # still being played: stays
    await asyncio.sleep(0.05)
    archiver = Archiver(gs, retain=0.01)
    got = await archiver.run_once()
    assert (got.moved, got.failed) == (12, 0)
    assert got.trimmed == 26  # both summaries of each moved game (the running one's too
    # are older than the retention and nobody reads the feed: its created/ended entries)
    for gid, (hashed, meta, version) in games.items():
        assert await _keys(store, gid) == []  # every key of the game left Redis
        assert await store.client.zscore(f"{store.prefix}:games", gid) is None
        assert digest(await gs.read(gid)) == hashed
        assert await gs.get_meta(gid) == meta
        assert await gs.version(gid) == version and await gs.exists(gid)
        assert [e.version for e in await gs.read(gid, 3, 5)] == [4, 5]
        assert (await gs.get_meta(gid))["seats"][0]["name"] == f"Ann{gid[1:]}"
        history = await gs.results_history(gid)
        assert [h.summary["kind"] for h in history] == ["created", "ended"]
        assert history[0].summary["seats"][1]["name"] == f"Bob{gid[1:]}"
    assert await gs.exists("running") and await _keys(store, "running")
    assert await gs.archive.count_games() == 12  # type: ignore[union-attr]
    # what the archive holds of a sealed game: no name in plaintext
    info, events = (await gs.archive.game("g0"))  # type: ignore[union-attr]
    assert all(is_sealed(n) for n in events[0].data["names"])
    assert all(is_sealed(s["name"]) for s in info.meta["seats"])  # type: ignore[index]
    assert (await archiver.run_once()).moved == 0  # nothing left to move
    await gs.archive.close()  # type: ignore[union-attr]


async def test_a_crash_between_the_archive_commit_and_the_delete_leaves_both_then_one(
        store: RedisEventStore, pg_archive: tuple[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    gs = await _game_store(store, pg_archive)
    await write_game(gs, "g", seed=3, names=("Eve", "Fay"))
    before = digest(await gs.read("g"))
    await asyncio.sleep(0.05)
    archiver = Archiver(gs, retain=0.01)

    async def killed(*_: Any) -> int:
        raise ConnectionError("killed before the delete")

    monkeypatch.setattr(archiver, "_delete", killed)
    got = await archiver.run_once()
    assert (got.moved, got.failed) == (0, 1)
    assert await gs.archive.has_game("g") and await store.exists("g")  # type: ignore[union-attr]
    reads: list[str] = []
    real = gs.archive.game  # type: ignore[union-attr]

    async def spy(game_id: str) -> Any:
        reads.append(game_id)
        return await real(game_id)

    monkeypatch.setattr(gs.archive, "game", spy)
    assert digest(await gs.read("g")) == before and reads == []  # Redis's copy is read
    monkeypatch.undo()
    got = await archiver.run_once()  # the next pass finds the copy equal and deletes
    assert got.moved == 1 and not await store.exists("g")
    assert digest(await gs.read("g")) == before
    await gs.archive.close()  # type: ignore[union-attr]


async def test_a_game_appended_to_after_the_copy_stays_in_redis(
        store: RedisEventStore, pg_archive: tuple[str, str]) -> None:
    gs = await _game_store(store, pg_archive)
    await write_game(gs, "g", seed=4, names=("Gus", "Hal"))
    archiver = Archiver(gs, retain=0.01)
    n = await store.version("g")
    await store.append("g", [{"type": "Passed", "v": 1, "seat": 0}], n)  # after the read
    assert await archiver._delete("g", n) == 0  # the script checks the stream's end
    assert await store.version("g") == n + 1
    await gs.archive.close()  # type: ignore[union-attr]


async def test_archived_games_answer_get_events_get_state_and_replay(
        store: RedisEventStore, pg_archive: tuple[str, str]) -> None:
    gs = await _game_store(store, pg_archive)
    await write_game(gs, "old", seed=5, names=("Ivy", "Jo"))
    final, events = short_game(5, ("Ivy", "Jo"))
    await asyncio.sleep(0.05)
    assert (await Archiver(gs, retain=0.01).run_once()).moved == 1
    assert not await store.exists("old")
    async with serving(gs) as running:
        page = await running.stub.GetEvents(pb.GetEventsRequest(
            game_id="old", admin_token=ADMIN_TOKEN))
        assert len(page.events) == len(events)
        assert list(page.events[0].game_started.names) == ["Ivy", "Jo"]
        state = await running.stub.GetState(pb.GetStateRequest(
            game_id="old", admin_token=ADMIN_TOKEN, version=len(events)))
        assert state.version == len(events) and list(state.view.totals) == list(final.totals)
        assert list(state.view.names) == ["Ivy", "Jo"]
        streamed = []
        async for msg in running.stub.StreamEvents(pb.StreamEventsRequest(game_id="old")):
            streamed.append(msg.event.type)
            if msg.event.type == "GameEnded":
                break
        assert len(streamed) == len(events)  # a spectator's stream of the archived game
    assert not await _keys(store, "old")  # reading it left nothing in Redis (no snapshot)
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT}/services",
               RUMMY_ARCHIVE_URL=pg_archive[0], RUMMY_ARCHIVE_SCHEMA=pg_archive[1])
    out = subprocess.run([sys.executable, "-m", "rummy_cli", "replay", "old", "--redis-url",
                          REDIS_URL, "--prefix", store.prefix], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert f"verified {len(events)} events" in out.stdout and "Ivy" in out.stdout
    await gs.archive.close()  # type: ignore[union-attr]


async def test_the_feed_keeps_what_a_group_has_not_acknowledged(
        store: RedisEventStore, pg_archive: tuple[str, str]) -> None:
    gs = await _game_store(store, pg_archive)
    for i in range(3):
        await write_game(gs, f"f{i}", seed=40 + i, names=(f"Kit{i}", f"Lou{i}"))
    got = await gs.results_read("ratings", "c1", count=3, block_ms=10)  # 3 of 6 delivered
    assert len(got) == 3
    await gs.results_ack("ratings", [got[0].id])  # the 2nd and 3rd stay pending
    await asyncio.sleep(0.05)
    archiver = Archiver(gs, retain=0.01)
    result = await archiver.run_once()
    assert result.moved == 3 and result.trimmed == 1  # only the acknowledged first entry
    assert await store.client.xlen(f"{store.prefix}:{{{store.prefix}:results}}:feed") == 5
    await gs.results_ack("ratings", [got[1].id, got[2].id])
    rest = await gs.results_read("ratings", "c1", count=10, block_ms=10)
    await gs.results_ack("ratings", [e.id for e in rest])
    assert (await archiver.run_once()).trimmed == 5
    for i in range(3):  # every summary readable once, now from the archive
        kinds = [h.summary["kind"] for h in await gs.results_history(f"f{i}")]
        assert kinds == ["created", "ended"]
    await gs.archive.close()  # type: ignore[union-attr]
