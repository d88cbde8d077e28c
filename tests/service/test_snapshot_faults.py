"""A snapshot this release cannot read is ignored and the game rebuilt from its events,
never a failed call (docs/events.md, "Snapshots are not events").

Before: a snapshot whose stored text was not valid JSON made every call on the game fail
with INTERNAL (JSONDecodeError) until someone deleted it by hand. Here the real Redis holds
the store of ``tests/fixtures/store_v1.json`` (a game in progress with a snapshot at 256, a
finished one with snapshots at 256 and 512); the snapshot is replaced by text that is not
JSON, by one of a future schema version, by one of a wrong shape; GetState, GetView and the
next command still answer as the events say, and the next rebuild writes a good snapshot
again.
"""

from __future__ import annotations

import json

import pytest
import redis.asyncio as aioredis
from rummy_api.v1 import game_service_pb2 as pb
from rummy_store import RedisEventStore

from rummy.events import from_dict
from rummy.evolve import replay
from rummy.snapshot import state_from_dict, state_to_dict
from tests.redis_helpers import REDIS_URL

from .conftest import ADMIN_TOKEN, play_turns, serving
from .test_store_fixture import FIXTURE, GAMES, _recorded, _state_of, restore

pytestmark = [pytest.mark.redis, pytest.mark.timeout(120)]


BROKEN = {
    "not-json": lambda good: "{this is not json",
    "truncated": lambda good: json.dumps(good)[:200],
    "future-version": lambda good: json.dumps({**good, "snapshot": 99, "new_field": 1}),
    "older-version": lambda good: json.dumps({**good, "snapshot": 0}),
    "wrong-schema": lambda good: json.dumps({**good, "hands": "7S 8S", "phase": 3}),
    "missing-fields": lambda good: json.dumps({"snapshot": 1, "version": 256}),
    "not-an-object": lambda good: json.dumps([1, 2, 3]),
    "rules-of-another-release": lambda good: json.dumps(
        {**good, "rules": {**good["rules"], "doubles_bonus": 3}}),
    "bad-table": lambda good: json.dumps({**good, "table": [[1, 2, 3]], "deck": [None]}),
    "member-without-version": lambda good: RAW + "no version prefix at all",
}


RAW = "raw member:"  #: a text starting with this is written as the whole member


async def _break_snapshot(prefix: str, game_id: str, at: int, text: str) -> None:
    """Replace the game's snapshot at version ``at`` by ``text`` (member ``at:text``, or
    the text after :data:`RAW` as the whole member)."""
    r = aioredis.Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        key = f"{prefix}:{{{game_id}}}:snapshots"
        assert await r.zremrangebyscore(key, at, at) == 1
        member = text[len(RAW):] if text.startswith(RAW) else f"{at}:{text}"
        await r.zadd(key, {member: at})
    finally:
        await r.aclose()


@pytest.mark.asyncio
@pytest.mark.parametrize("how", sorted(BROKEN))
async def test_an_unreadable_snapshot_is_ignored_and_the_game_rebuilt(
        how: str, store: RedisEventStore, prefix: str) -> None:
    await restore(prefix, FIXTURE["keys"])
    targets = {"open-long": 256, "done-short": 512}
    for name, at in targets.items():
        gid = GAMES[name]["game_id"]
        found = await store.get_snapshot(gid, at)
        assert found is not None and found[0] == at
        await _break_snapshot(prefix, gid, at, BROKEN[how](found[1]))
    async with serving(store) as running:  # a fresh server: nothing cached
        stub = running.stub
        for name, at in targets.items():
            game = GAMES[name]
            gid = game["game_id"]
            got = await stub.GetState(pb.GetStateRequest(game_id=gid, admin_token=ADMIN_TOKEN))
            assert _state_of(game, got) == _recorded(game)
            mid = await stub.GetState(pb.GetStateRequest(game_id=gid, version=at,
                                                         admin_token=ADMIN_TOKEN))
            log = [from_dict(se.data) for se in await store.read(gid, 0, at)]
            expected = replay(log)
            assert expected is not None and mid.version == at
            assert [list(h.cards) for h in mid.hands] == state_to_dict(expected)["hands"]
            view = (await stub.GetView(pb.GetViewRequest(game_id=gid))).view
            assert view.version == game["version"]
            # the rebuild stored a good snapshot at that version again
            healed = await store.get_snapshot(gid, at)
            assert healed is not None and healed[0] == at
            rebuilt = state_from_dict(healed[1])
            # the new snapshot seals the seat names (docs/security.md, erasure): the rest
            # is the state the events give
            assert all(n.startswith("enc1:") for n in rebuilt.names), rebuilt.names
            assert rebuilt._replace(names=expected.names) == expected
        game = GAMES["open-long"]  # the next command of the game in progress
        tokens = {int(s): t for s, t in game["tokens"].items()}
        await play_turns(stub, game["game_id"], tokens, dict.fromkeys(tokens, "basic"),
                         max_commands=1)
        view = (await stub.GetView(pb.GetViewRequest(game_id=game["game_id"]))).view
        assert view.version > game["version"]
