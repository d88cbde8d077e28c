"""A store written by an older release stays readable (docs/events.md, "stored games stay
readable forever").

``tests/fixtures/store_v1.json`` is every key a real GameService wrote into the real Redis
(events schema v1, snapshot schema 1, the compact stream codec, bucketed request records):
finished games, games in progress, snapshots, request records, non-default rule sets
(``tests/fixtures/make_store_fixture.py`` made it; it is never regenerated). Each test
restores it under a fresh prefix into the real Redis and checks that every game loads,
replays with every invariant (I4), and has the version and state the fixture recorded;
then that the service serves it: GetState at the recorded version, GetView, a retried
request, the next command of a game in progress.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.convert import rules_to_proto
from rummy_store import RedisEventStore
from rummy_store.codec import pack, unpack

from rummy.commands import Draw
from rummy.errors import NotationError
from rummy.events import EVENT_TYPES, GameStarted, from_dict, to_dict
from rummy.evolve import replay
from rummy.invariants import verify_log
from rummy.rules import RuleSet
from rummy.snapshot import SNAPSHOT_VERSION, state_from_dict
from tests.fixtures.make_store_fixture import expected_state
from tests.redis_helpers import REDIS_URL

from .conftest import ADMIN_TOKEN, humans, play_turns, send, serving

pytestmark = [pytest.mark.redis, pytest.mark.timeout(180)]

FIXTURE = json.loads((Path(__file__).parents[1] / "fixtures" / "store_v1.json").read_text())
GAMES: dict[str, dict[str, Any]] = FIXTURE["games"]


async def restore(prefix: str, keys: dict[str, Any]) -> None:
    """Write every dumped key under ``prefix:`` (no expiry)."""
    r = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        async with r.pipeline(transaction=False) as pipe:
            for suffix, item in keys.items():
                key, kind, value = f"{prefix}:{suffix}", item["type"], item["value"]
                if kind == "string":
                    pipe.set(key, value)
                elif kind == "hash":
                    pipe.hset(key, mapping=value)
                elif kind == "zset":
                    pipe.zadd(key, {m: s for m, s in value})
                elif kind == "stream":
                    for entry_id, fields in value:
                        pipe.xadd(key, fields, id=entry_id)
                elif kind == "set":
                    pipe.sadd(key, *value)
                elif kind == "list":
                    pipe.rpush(key, *value)
                else:
                    raise AssertionError(f"unknown key type {kind}")
            await pipe.execute()
    finally:
        await r.aclose()


def test_every_stored_record_is_written_again_byte_for_byte() -> None:
    """Decoding a stored record and encoding it again gives the stored text (the field
    encodings declared per event class write what the release of the fixture wrote), for
    every event type still at the version the fixture holds."""
    seen = set()
    for suffix, item in FIXTURE["keys"].items():
        if item["type"] != "stream":
            continue
        for _, entry in item["value"]:
            record = unpack(entry["data"])
            event = from_dict(record)
            if record["v"] == event.VERSION:  # a type bumped since is written at its new v
                assert pack(to_dict(event)) == entry["data"], suffix
                seen.add(event.TYPE)
    # the seat lifecycle's events (§13) came after the fixture's release: it holds none
    later = {"SeatLeft", "SeatTakenOver", "ReclaimRequested", "SeatReclaimed", "TimedOut"}
    assert seen == {name for name, cls in EVENT_TYPES.items() if cls.VERSION == 1} - later


def test_the_fixture_covers_what_it_says() -> None:
    assert any(g["over"] for g in GAMES.values())
    assert any(not g["over"] for g in GAMES.values())
    assert any(g["snapshots"] and not g["over"] for g in GAMES.values())
    assert any(g["state"]["rules"] for g in GAMES.values())  # a non-default rule set
    kinds = {k.split(":")[-2] if k.split(":")[-1].isdigit() else k.split(":")[-1]
             for k in FIXTURE["keys"]}
    assert {"events", "meta", "snapshots", "requests", "active"} <= kinds
    assert any(k.startswith("once:") for k in FIXTURE["keys"])


@pytest.mark.asyncio
async def test_every_stored_game_loads_and_replays_to_its_recorded_state(
        store: RedisEventStore, prefix: str) -> None:
    await restore(prefix, FIXTURE["keys"])
    listed = set(await store.list_games())
    active = set(await store.list_games(active_only=True))
    for name, game in GAMES.items():
        gid = game["game_id"]
        stored = await store.read(gid)
        assert [se.version for se in stored] == list(range(1, game["version"] + 1)), name
        log = [from_dict(se.data) for se in stored]
        assert isinstance(log[0], GameStarted)
        states = list(verify_log(log))  # every event checked, I1-I3 after each
        state = states[-1]
        assert state == replay(log)  # I4
        assert state.version == game["version"] and state.is_over == game["over"], name
        now = expected_state(state)  # a field GameState gains later is not compared
        recorded = dict(game["state"])
        for k in ("result", "last_round"):  # an event of an older version, compared as read
            if recorded.get(k) is not None:
                recorded[k] = to_dict(from_dict(recorded[k]))
        assert {k: now.get(k) for k in recorded} == recorded, name
        for at in game["snapshots"]:
            found = await store.get_snapshot(gid, at)
            assert found is not None and found[0] == at, (name, at)
            data = found[1]
            if (data.get("snapshot") == SNAPSHOT_VERSION
                    and set(data["rules"]) == {f.name for f in fields(RuleSet)}):
                assert state_from_dict(data) == states[at - 1], (name, at)
            else:  # a later release's snapshot schema or rule set: refused, and rebuilt
                with pytest.raises(NotationError):
                    state_from_dict(data)
        assert gid in listed and (gid in active) == (not game["over"]), name
        assert await store.version(gid) == game["version"]
        assert await store.get_meta(gid) is not None


def _state_of(game: dict[str, Any], msg: pb.GetStateResponse) -> dict[str, Any]:
    return {"version": msg.version, "hands": [list(h.cards) for h in msg.hands],
            "totals": list(msg.view.totals), "table": [list(m.cards) for m in msg.view.table],
            "round": msg.view.round, "turn": msg.view.turn}


def _recorded(game: dict[str, Any]) -> dict[str, Any]:
    s = game["state"]
    return {"version": game["version"], "hands": s["hands"], "totals": s["totals"],
            "table": s["table"], "round": s["round"], "turn": s["turn"]}


@pytest.mark.asyncio
async def test_the_service_serves_every_stored_game(store: RedisEventStore,
                                                    prefix: str) -> None:
    await restore(prefix, FIXTURE["keys"])
    async with serving(store) as running:
        stub = running.stub
        for game in GAMES.values():
            gid = game["game_id"]
            got = await stub.GetState(pb.GetStateRequest(
                game_id=gid, version=game["version"], admin_token=ADMIN_TOKEN))
            assert got.full_information
            assert _state_of(game, got) == _recorded(game)
            for at in game["snapshots"]:  # a version read from the snapshot
                mid = await stub.GetState(pb.GetStateRequest(game_id=gid, version=at,
                                                             admin_token=ADMIN_TOKEN))
                assert mid.version == at
            view = (await stub.GetView(pb.GetViewRequest(game_id=gid))).view
            assert view.version >= game["version"]
            rules = RuleSet.from_dict(game["state"]["rules"])
            assert rules_to_proto(rules) == view.rules
        # the request record of the last command: a retry returns the original result
        game = GAMES["open-humans"]
        last = game["last_draw"]
        token = game["tokens"][str(last["seat"])]
        again = await send(stub, game["game_id"], token, Draw(last["seat"]),
                           expected_version=last["expected_version"],
                           request_id=last["request_id"])
        assert again.duplicate and again.version == last["version"]
        # CreateGame's request record: the retry names the original game
        created = await stub.CreateGame(pb.CreateGameRequest(
            seats=humans(2), request_id="fixture-create-1"))
        assert created.game_id == game["game_id"]
        assert {t.seat: t.token for t in created.tokens} == {
            int(s): t for s, t in game["tokens"].items()}
        # every game in progress takes its next command
        for game in GAMES.values():
            if game["over"]:
                continue
            tokens = {int(s): t for s, t in game["tokens"].items()}
            before = (await stub.GetView(pb.GetViewRequest(game_id=game["game_id"]))).view
            await play_turns(stub, game["game_id"], tokens, dict.fromkeys(tokens, "basic"),
                             max_commands=1)
            after = (await stub.GetView(pb.GetViewRequest(game_id=game["game_id"]))).view
            assert after.version > before.version
