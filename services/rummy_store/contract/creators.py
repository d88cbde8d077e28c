"""The contract of the per-creator index (:mod:`rummy_store.creators`): each creator's
games newest first, paged by the last id, filtered by state, expired games left out."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from rummy_store.base import EventStore
from rummy_store.contract._helpers import numbered, pytestmark
from rummy_store.creators import CreatorIndex, UnknownCursor

__all__ = [
    "pytestmark",
    "test_creator_index_is_a_port_of_the_store",
    "test_each_creator_pages_through_its_own_games_by_state",
    "test_creator_index_arguments_are_checked",
    "test_an_expired_game_leaves_its_creators_index",
]


def _index(store: EventStore) -> CreatorIndex:
    assert isinstance(store, CreatorIndex)
    return store


async def _game(store: EventStore, creator: str, created: float) -> str:
    game = uuid.uuid4().hex
    await store.append(game, numbered(1), 0)
    await _index(store).add_created(creator, game, created)
    return game


async def _pages(index: CreatorIndex, creator: str, size: int, state: str) -> list[str]:
    out: list[str] = []
    after = None
    while True:
        page = await index.list_created(creator, limit=size, after=after, state=state)
        out += page
        if len(page) < size:
            return out
        after = page[-1]


async def test_creator_index_is_a_port_of_the_store(store: EventStore) -> None:
    assert isinstance(store, CreatorIndex)


async def test_each_creator_pages_through_its_own_games_by_state(store: EventStore) -> None:
    index = _index(store)
    me, other = f"key:me-{uuid.uuid4().hex[:6]}", f"cn:{{odd}} name {uuid.uuid4().hex[:6]}"
    mine = [await _game(store, me, 1000.0 + i) for i in range(7)]
    tie = [await _game(store, me, 2000.0) for _ in range(3)]  # same time: by id, descending
    theirs = [await _game(store, other, 1500.0 + i) for i in range(4)]
    await index.add_created(me, mine[0], 9999.0)  # a retry changes nothing
    newest_first = sorted(tie, reverse=True) + mine[::-1]
    assert await _pages(index, me, 3, "all") == newest_first
    assert await _pages(index, me, 100, "all") == newest_first
    assert await _pages(index, other, 2, "all") == theirs[::-1]
    for g in (mine[1], mine[4], tie[0]):
        await store.set_active(g, False)  # finished
    ended = {mine[1], mine[4], tie[0]}
    assert await _pages(index, me, 2, "finished") == [g for g in newest_first if g in ended]
    assert await _pages(index, me, 2, "active") == [g for g in newest_first if g not in ended]
    assert await _pages(index, other, 10, "finished") == []
    assert await index.list_created(me, limit=0) == []
    assert await index.list_created(f"key:nobody-{uuid.uuid4().hex[:6]}", limit=5) == []
    with pytest.raises(UnknownCursor):
        await index.list_created(me, limit=5, after=theirs[0])  # not the caller's game


async def test_creator_index_arguments_are_checked(store: EventStore) -> None:
    index = _index(store)
    for bad in ({"creator": ""}, {"limit": -1}, {"state": "won"}):
        args = {"creator": "key:x", "limit": 1, "state": "all", **bad}
        with pytest.raises(ValueError):
            await index.list_created(args.pop("creator"), **args)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        await index.add_created("", uuid.uuid4().hex, 1.0)


async def test_an_expired_game_leaves_its_creators_index(limited_store: EventStore) -> None:
    index = _index(limited_store)
    me = f"key:me-{uuid.uuid4().hex[:6]}"
    kept = await _game(limited_store, me, 1.0)
    await limited_store.set_active(kept, False)  # finished: kept for good
    gone = await _game(limited_store, me, 2.0)
    await asyncio.sleep(1.0)  # past the 0.4 s idle expiry of the active game
    assert await index.list_created(me, limit=10) == [kept]
    assert await index.list_created(me, limit=10, state="active") == []
    assert await index.list_created(me, limit=10, state="finished") == [kept]
    with pytest.raises(UnknownCursor):
        await index.list_created(me, limit=10, after=gone)
