"""The contract: snapshots (``put_snapshot`` / ``get_snapshot``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rummy_store import EventStore
from rummy_store.contract._helpers import StoreFactory, numbered, pytestmark

__all__ = [
    "pytestmark",
    "test_no_snapshot_of_an_unknown_game",
    "test_get_snapshot_returns_the_newest_at_or_before_the_version",
    "test_a_snapshot_put_again_at_its_version_replaces_the_old_one",
    "test_snapshots_with_equal_data_at_two_versions_are_both_kept",
    "test_snapshots_are_per_game_and_a_json_copy",
    "test_snapshots_are_seen_by_another_client",
    "test_snapshots_leave_the_stream_alone",
    "test_bad_snapshot_arguments_are_refused",
]


async def test_no_snapshot_of_an_unknown_game(store: EventStore) -> None:
    assert await store.get_snapshot("nobody", 10) is None
    assert await store.get_snapshot("nobody", 0) is None


async def test_get_snapshot_returns_the_newest_at_or_before_the_version(
        store: EventStore) -> None:
    for v in (256, 512, 768):
        await store.put_snapshot("g1", v, {"at": v, "nested": {"list": [v, None, True]}})
    assert await store.get_snapshot("g1", 255) is None
    assert await store.get_snapshot("g1", 256) == (256, {"at": 256,
                                                          "nested": {"list": [256, None, True]}})
    assert (await store.get_snapshot("g1", 511))[0] == 256  # type: ignore[index]
    assert (await store.get_snapshot("g1", 767))[0] == 512  # type: ignore[index]
    assert (await store.get_snapshot("g1", 10**12))[0] == 768  # type: ignore[index]
    await store.put_snapshot("g1", 300, {"at": 300})  # out of order is fine
    assert await store.get_snapshot("g1", 400) == (300, {"at": 300})


async def test_a_snapshot_put_again_at_its_version_replaces_the_old_one(
        store: EventStore) -> None:
    await store.put_snapshot("g1", 5, {"first": 1})
    await store.put_snapshot("g1", 5, {"second": 2})
    await store.put_snapshot("g1", 5, {"second": 2})  # idempotent
    assert await store.get_snapshot("g1", 5) == (5, {"second": 2})
    await store.put_snapshot("g1", 3, {"older": 3})
    assert await store.get_snapshot("g1", 4) == (3, {"older": 3})
    assert await store.get_snapshot("g1", 9) == (5, {"second": 2})


async def test_snapshots_with_equal_data_at_two_versions_are_both_kept(
        store: EventStore) -> None:
    await store.put_snapshot("g1", 2, {"same": True})
    await store.put_snapshot("g1", 7, {"same": True})
    assert await store.get_snapshot("g1", 6) == (2, {"same": True})
    assert await store.get_snapshot("g1", 7) == (7, {"same": True})


async def test_snapshots_are_per_game_and_a_json_copy(store: EventStore) -> None:
    data: dict[str, Any] = {"cards": ["7S", "*"], "t": [1, 2]}
    await store.put_snapshot("g1", 4, data)
    data["cards"].append("KD")  # the store kept a copy
    assert await store.get_snapshot("g2", 4) is None
    got = await store.get_snapshot("g1", 4)
    assert got is not None
    version, kept = got
    assert (version, kept) == (4, {"cards": ["7S", "*"], "t": [1, 2]})
    kept["t"].append(3)  # and hands out copies
    assert await store.get_snapshot("g1", 4) == (4, {"cards": ["7S", "*"], "t": [1, 2]})


async def test_snapshots_are_seen_by_another_client(store_factory: StoreFactory) -> None:
    a, b = store_factory(), store_factory()
    await asyncio.gather(*(a.put_snapshot("g1", v, {"v": v}) for v in range(1, 21)))
    assert await b.get_snapshot("g1", 100) == (20, {"v": 20})
    assert await b.get_snapshot("g1", 13) == (13, {"v": 13})


async def test_snapshots_leave_the_stream_alone(store: EventStore) -> None:
    await store.append("g1", numbered(3), 0)
    await store.put_snapshot("g1", 3, {"x": 1})
    assert await store.version("g1") == 3
    assert [e.version for e in await store.read("g1")] == [1, 2, 3]
    await store.append("g1", numbered(1, 4), 3)  # appends go on as before
    assert await store.get_snapshot("g1", 4) == (3, {"x": 1})
    await store.put_snapshot("fresh", 1, {"x": 2})  # a snapshot does not make a game
    assert not await store.exists("fresh")


async def test_bad_snapshot_arguments_are_refused(store: EventStore) -> None:
    with pytest.raises(ValueError, match="game id"):
        await store.put_snapshot("a b", 1, {})
    with pytest.raises(ValueError, match="game id"):
        await store.get_snapshot("a{b}", 1)
    with pytest.raises(ValueError, match="version"):
        await store.put_snapshot("g1", -1, {})
    with pytest.raises(ValueError, match="version"):
        await store.put_snapshot("g1", True, {})
    with pytest.raises(ValueError, match="max_version"):
        await store.get_snapshot("g1", -1)
    with pytest.raises(TypeError, match="dict"):
        await store.put_snapshot("g1", 1, ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        await store.put_snapshot("g1", 1, {"x": object()})
    with pytest.raises(TypeError):
        await store.put_snapshot("g1", 1, {"x": float("inf")})
    assert await store.get_snapshot("g1", 10) is None
