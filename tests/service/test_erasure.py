"""Erasure of seat names (rummy_store.shred, rummy_store.erase, EraseSeatNames, rummy
erase): after it no stored byte holds a name, in any Redis key, snapshot, feed entry or
archive row, for games written sealed and for games written plaintext before sealing,
in Redis or archived; and every game still replays to the same final state (names read
"erased")."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

import psycopg
import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_store import RedisEventStore
from rummy_store.archive import PgArchive
from rummy_store.retention import Archiver
from rummy_store.sealed import GameStore
from rummy_store.shred import ERASED

from rummy.snapshot import state_to_dict
from tests.redis_helpers import REDIS_URL
from tests.service.archive_helpers import short_game, write_game
from tests.service.conftest import ADMIN_TOKEN, serving

pytestmark = [pytest.mark.redis, pytest.mark.asyncio, pytest.mark.timeout(180)]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _names(gid: str) -> tuple[str, str]:
    return f"Zelda-{gid}-Quill", f"Yorick-{gid}-Vane"


async def redis_values(store: RedisEventStore) -> list[bytes]:
    """Every key name and value of the store's prefix, whatever the key's type."""
    r = store.client
    out: list[bytes] = []
    async for key in r.scan_iter(match=f"{store.prefix}:*", count=1000):
        out.append(key.encode())
        kind = await r.type(key)
        if kind == "string":
            out.append((await r.get(key)).encode())
        elif kind == "hash":
            out += [f"{k}={v}".encode() for k, v in (await r.hgetall(key)).items()]
        elif kind == "zset":
            out += [m.encode() for m in await r.zrange(key, 0, -1)]
        elif kind == "set":
            out += [m.encode() for m in await r.smembers(key)]
        elif kind == "list":
            out += [m.encode() for m in await r.lrange(key, 0, -1)]
        elif kind == "stream":
            out += [repr(e).encode() for e in await r.xrange(key)]
        else:
            raise AssertionError(f"unexpected key type {kind} of {key}")
    return out


def archive_values(pg: tuple[str, str]) -> list[bytes]:
    """Every column of every row of the archive's tables."""
    out: list[bytes] = []
    with psycopg.connect(pg[0]) as conn:
        for table in ("games", "game_keys", "results"):
            for row in conn.execute(f"SELECT * FROM {pg[1]}.{table}"):
                for v in row:
                    out.append(bytes(v) if isinstance(v, (bytes, memoryview))
                               else str(v).encode())
    return out


def holds(values: list[bytes], names: tuple[str, ...]) -> bool:
    return any(n.encode() in v for v in values for n in names)


async def test_erased_games_hold_no_name_anywhere_and_replay_the_same(
        store: RedisEventStore, pg_archive: tuple[str, str]) -> None:
    archive = PgArchive(pg_archive[0], schema=pg_archive[1])
    gs = GameStore(store, archive)
    # A, B sealed; C, D plaintext (written before sealing); A and D then archived
    for i, gid in enumerate(("A", "D")):
        await write_game(gs if gid == "A" else store, gid, seed=20 + i, names=_names(gid))
    await asyncio.sleep(0.05)
    assert (await Archiver(gs, retain=0.01).run_once()).moved == 2
    await write_game(gs, "B", seed=22, names=_names("B"))
    await write_game(store, "C", seed=23, names=_names("C"))
    final_c, events_c = short_game(23, _names("C"))
    await store.put_snapshot("C", len(events_c), state_to_dict(final_c))  # plaintext
    seeds = {"A": 20, "D": 21, "B": 22, "C": 23}
    # before: sealed names are nowhere in plaintext, old ones are; all read back opened
    stored = await redis_values(store) + archive_values(pg_archive)
    assert not holds(stored, _names("A") + _names("B"))
    assert holds(stored, _names("C")) and holds(stored, _names("D"))
    for gid in seeds:
        assert (await gs.read(gid))[0].data["names"] == list(_names(gid))
        assert [s["name"] for s in (await gs.get_meta(gid))["seats"]] == list(_names(gid))
    async with serving(gs) as running:
        for gid in seeds:
            got = await running.stub.EraseSeatNames(pb.EraseSeatNamesRequest(
                game_id=gid, admin_token=ADMIN_TOKEN))
            assert (got.in_store, got.in_archive) == (gid in "BC", gid in "AD")
            plain = sum(got.rewritten.values())
            assert (plain > 0) == (gid in "CD"), (gid, got.rewritten)
        with pytest.raises(Exception, match="NOT_FOUND|no game"):
            await running.stub.EraseSeatNames(pb.EraseSeatNamesRequest(
                game_id="nope", admin_token=ADMIN_TOKEN))
        for gid, seed in seeds.items():
            final, events = short_game(seed, (ERASED, ERASED))
            page = await running.stub.GetEvents(pb.GetEventsRequest(
                game_id=gid, admin_token=ADMIN_TOKEN))
            assert len(page.events) == len(events)
            assert list(page.events[0].game_started.names) == [ERASED, ERASED]
            state, _ = await running.server.app.repo.load(gid)
            assert state == final  # replays to the same final state, names erased
            results = await running.stub.ListGameResults(pb.ListGameResultsRequest(
                game_id=gid, admin_token=ADMIN_TOKEN))
            assert [r.kind for r in results.results] == [pb.RESULT_KIND_CREATED,
                                                         pb.RESULT_KIND_ENDED]
            assert {s.name for r in results.results for s in r.seats} == {ERASED}
    stored = await redis_values(store) + archive_values(pg_archive)
    for gid in seeds:
        assert not holds(stored, _names(gid)), gid
        assert [s["name"] for s in (await gs.get_meta(gid))["seats"]] == [ERASED, ERASED]
    # an erased game stays erased through a later move to the archive
    await asyncio.sleep(0.05)
    assert (await Archiver(gs, retain=0.01).run_once()).moved == 2
    assert (await gs.read("B"))[0].data["names"] == [ERASED, ERASED]
    await gs.close()


async def test_rummy_erase_erases_a_game_in_redis_and_the_feed(
        store: RedisEventStore, pg_archive: tuple[str, str]) -> None:
    await write_game(store, "E", seed=30, names=_names("E"))  # plaintext, feed included
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT}/services")
    out = subprocess.run([sys.executable, "-m", "rummy_cli", "erase", "E", "--redis-url",
                          REDIS_URL, "--prefix", store.prefix, "--archive-url", pg_archive[0],
                          "--archive-schema", pg_archive[1]], env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "erased the seat names of game E in the store" in out.stdout
    assert "feed_entries 2" in out.stdout and "events 1" in out.stdout
    assert not holds(await redis_values(store), _names("E"))
    gs: Any = GameStore(store)
    assert (await gs.read("E"))[0].data["names"] == [ERASED, ERASED]
    missing = subprocess.run([sys.executable, "-m", "rummy_cli", "erase", "nope",
                              "--redis-url", REDIS_URL, "--prefix", store.prefix], env=env,
                             capture_output=True, text=True, timeout=120, check=False)
    assert missing.returncode == 1 and "no game 'nope'" in missing.stderr
