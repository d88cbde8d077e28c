"""``ListGames`` for an API-key caller reads only the caller's own games (the store's
per-creator index, :mod:`rummy_store.creators`), on the memory store and on Redis: paged,
filtered by state, and priced by what it reads (index entries and game metas), not by the
number of games in the store."""

from __future__ import annotations

from collections import Counter
from typing import Any
from uuid import uuid4

import pytest
from rummy_api.v1 import game_service_pb2 as pb
from rummy_grpc.callers import CallerPolicy, hash_api_key, new_api_key, parse_api_keys
from rummy_store.memory import MemoryEventStore

from rummy.events import Knocked, to_dict

from .conftest import humans, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(180)]

KEY_A, KEY_B = new_api_key(), new_api_key()
AS_A = (("authorization", f"Bearer {KEY_A}"),)
AS_B = (("authorization", f"Bearer {KEY_B}"),)
MINE, OTHERS = 7, 56  # every ninth game is the caller's


def _policy() -> CallerPolicy:
    return CallerPolicy(parse_api_keys(f"alice:{hash_api_key(KEY_A)}\n"
                                       f"bob:{hash_api_key(KEY_B)}\n"))


class Reads:
    """Counts what the store is asked while listing: metas, index entries, full scans."""

    def __init__(self, store: Any) -> None:
        self.count: Counter[str] = Counter()
        for name in ("get_meta", "list_games", "list_created"):
            original = getattr(store, name)

            async def spy(*args: Any, _name: str = name, _f: Any = original,
                          **kwargs: Any) -> Any:
                result = await _f(*args, **kwargs)
                self.count[_name] += 1
                if _name == "list_created":
                    self.count["entries"] += len(result)
                return result
            setattr(store, name, spy)


async def _pages(stub: Any, size: int, state: int = 0) -> list[list[str]]:
    pages, token = [], ""
    while True:
        page = await stub.ListGames(pb.ListGamesRequest(page_size=size, page_token=token,
                                                        state=state), metadata=AS_A)
        pages.append([g.game_id for g in page.games])
        token = page.next_page_token
        if not token:
            return pages


@pytest.fixture(params=["memory", "redis"])
def any_store(request: pytest.FixtureRequest) -> Any:
    if request.param == "memory":
        return MemoryEventStore()
    return request.getfixturevalue("store")  # the test's own Redis prefix


async def test_a_callers_pages_read_only_its_own_games(any_store: Any) -> None:
    mine: list[str] = []
    async with serving(any_store, callers=_policy()) as running:
        for i in range(MINE + OTHERS):
            created = await running.stub.CreateGame(
                pb.CreateGameRequest(seats=humans(2)), metadata=AS_A if i % 9 == 0 else AS_B)
            if i % 9 == 0:
                mine.append(created.game_id)
        assert len(mine) == MINE
        for g in mine[1::3]:  # finished (the state the index follows)
            await any_store.set_active(g, False)
    newest = mine[::-1]
    ended = set(mine[1::3])
    # a fresh replica on the same store: nothing cached, every meta read counted
    async with serving(any_store, callers=_policy()) as replica:
        reads = Reads(any_store)
        pages = await _pages(replica.stub, 3)
        assert pages == [newest[0:3], newest[3:6], newest[6:7]]
        assert reads.count["list_games"] == 0  # no scan of the whole games index
        assert reads.count["get_meta"] == MINE  # one meta per listed game, no other
        assert reads.count["entries"] <= MINE + len(pages)  # one look-ahead a page
        reads.count.clear()
        finished = await _pages(replica.stub, 2, state=2)
        assert [g for p in finished for g in p] == [g for g in newest if g in ended]
        active = await _pages(replica.stub, 10, state=1)
        assert active == [[g for g in newest if g not in ended]]
        assert reads.count["list_games"] == 0
        assert reads.count["get_meta"] == 0  # cached by the first listing
        assert reads.count["entries"] <= MINE + len(finished) + len(active)
        # bob sees his own, never alice's
        bob = await replica.stub.ListGames(pb.ListGamesRequest(page_size=200), metadata=AS_B)
        assert len(bob.games) == OTHERS and not set(mine) & {g.game_id for g in bob.games}


async def test_games_of_an_older_release_are_backfilled_at_start(any_store: Any) -> None:
    """Games whose meta names the creator but that never entered the per-creator index (a
    release before it) are entered by the first server that starts, once a day."""
    import asyncio

    from rummy_grpc.listing import backfill_creators
    old = []
    for i in range(3):  # as an older release wrote them: meta and events, no creator entry
        game_id = f"old{i}{uuid4().hex}"
        await any_store.put_meta(game_id, {"seats": [], "creator": "key:alice",
                                           "created": 1.0 + i})
        await any_store.append(game_id, [to_dict(Knocked(seat=0, points=1))], 0)
        old.append(game_id)
    assert await any_store.list_created("key:alice", limit=10) == []
    async with serving(any_store, callers=_policy()):  # its start runs the backfill
        for _ in range(200):  # a hang guard, not a timing bound
            listed = await any_store.list_created("key:alice", limit=10)
            if len(listed) == 3:
                break
            await asyncio.sleep(0.05)
    assert listed == old[::-1]
    assert await backfill_creators(any_store, "another server") == 0  # once a day


@pytest.mark.redis
async def test_an_archived_game_leaves_its_creators_index_without_an_idle_expiry(
        store: Any) -> None:
    """The retention mover deletes a finished game's Redis keys (not the per-creator
    index's entry): a listing that meets it drops it, as it drops an expired game, also
    on a store with no idle expiry (``ListGames`` lists the games still in Redis)."""
    from rummy_store.retention import _KINDS
    assert store.idle_ttl == 0
    me = f"key:me-{uuid4().hex[:6]}"
    ids = []
    for i in range(3):
        game_id = f"a{i}{uuid4().hex}"
        await store.put_meta(game_id, {"seats": [], "creator": me, "created": 1.0 + i})
        await store.append(game_id, [to_dict(Knocked(seat=0, points=1))], 0)
        await store.add_created(me, game_id, 1.0 + i)
        await store.set_active(game_id, False)
        ids.append(game_id)
    await store.client.delete(*(store.key(ids[1], k) for k in _KINDS))  # as the mover does
    assert await store.list_created(me, limit=10, state="finished") == [ids[2], ids[0]]
    assert await store.list_created(me, limit=10) == [ids[2], ids[0]]
