"""The contract of the results feed (:mod:`rummy_store.results`): summaries appended in
the append's step, consumer groups, leases, parking, abandoned games."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rummy_store.base import EventStore, VersionConflict
from rummy_store.contract._helpers import StoreFactory, numbered, pytestmark
from rummy_store.results import ResultsFeed

__all__ = [
    "pytestmark",
    "test_results_feed_is_a_port_of_the_store",
    "test_a_summary_is_appended_with_its_events_and_only_then",
    "test_each_entry_goes_to_one_member_and_every_group_gets_all",
    "test_an_unacknowledged_entry_goes_to_another_member_after_the_lease",
    "test_an_entry_delivered_too_often_is_parked_and_listable",
    "test_a_new_group_starts_where_asked",
    "test_an_expired_active_game_gets_one_abandoned_summary",
    "test_results_arguments_are_checked",
]


def _summary(game: str, kind: str) -> dict[str, Any]:
    return {"kind": kind, "game_id": game}


def _feed(store: EventStore) -> ResultsFeed:
    assert isinstance(store, ResultsFeed)
    return store


async def test_results_feed_is_a_port_of_the_store(store: EventStore) -> None:
    assert isinstance(store, ResultsFeed)


async def test_a_summary_is_appended_with_its_events_and_only_then(store: EventStore) -> None:
    feed = _feed(store)
    await store.append("g1", numbered(2), 0, request_id="r1", request_hash="h",
                       summary=_summary("g1", "created"))
    # a retry of the same request appends nothing, summary included
    again = await store.append("g1", numbered(2), 0, request_id="r1", request_hash="h",
                               summary=_summary("g1", "created"))
    assert again.duplicate
    with pytest.raises(VersionConflict):  # refused: no events, no summary
        await store.append("g1", numbered(1), 0, summary=_summary("g1", "ended"))
    await store.append("g2", numbered(1), 0, summary=_summary("g2", "created"))
    await store.append("g1", numbered(1), 2)  # no summary
    await store.append("g1", numbered(1), 3, summary=_summary("g1", "ended"))
    got = await feed.results_read("grp", "c1", count=10, block_ms=10)
    assert [(e.summary["game_id"], e.summary["kind"]) for e in got] == [
        ("g1", "created"), ("g2", "created"), ("g1", "ended")]
    assert [e.deliveries for e in got] == [1, 1, 1]
    ids = [e.id for e in got]
    assert ids == sorted(ids, key=lambda i: tuple(int(x) for x in i.split("-")))
    status = await feed.results_status("grp", "c1")
    assert (status.pending, status.consumer_pending, status.length, status.lag) == (3, 3, 3, 0)
    assert await feed.results_ack("grp", [ids[0], ids[0], ids[1]]) == 2
    assert await feed.results_ack("grp", [ids[0]]) == 0
    assert (await feed.results_status("grp")).pending == 1


async def test_each_entry_goes_to_one_member_and_every_group_gets_all(
        store_factory: StoreFactory) -> None:
    a, b = _feed(store_factory()), _feed(store_factory())
    writer = store_factory()
    for i in range(30):
        await writer.append(f"g{i}", numbered(1), 0, summary=_summary(f"g{i}", "created"))
    seen: list[str] = []
    for _ in range(10):
        for member, name in ((a, "m1"), (b, "m2")):
            batch = await member.results_read("split", name, count=4, block_ms=10)
            seen += [e.summary["game_id"] for e in batch]
            await member.results_ack("split", [e.id for e in batch])
    assert sorted(seen) == sorted(f"g{i}" for i in range(30))  # each once
    other = await a.results_read("other", "m1", count=100, block_ms=10)
    assert sorted(e.summary["game_id"] for e in other) == sorted(seen)


async def test_an_unacknowledged_entry_goes_to_another_member_after_the_lease(
        store_factory: StoreFactory) -> None:
    a, b = _feed(store_factory()), _feed(store_factory())
    writer = store_factory()
    for i in range(3):
        await writer.append(f"g{i}", numbered(1), 0, summary=_summary(f"g{i}", "created"))
    first = await a.results_read("grp", "dies", count=3, block_ms=10, lease=0.2)
    await a.results_ack("grp", [first[0].id])  # then "dies" holding two
    assert await b.results_read("grp", "lives", count=3, block_ms=10, lease=30) == []
    await asyncio.sleep(0.4)
    taken = await b.results_read("grp", "lives", count=3, block_ms=10, lease=0.2)
    assert [e.id for e in taken] == [e.id for e in first[1:]]
    assert [e.deliveries for e in taken] == [2, 2]
    assert (await b.results_status("grp", "lives")).consumer_pending == 2
    assert (await b.results_status("grp", "dies")).consumer_pending == 0


async def test_an_entry_delivered_too_often_is_parked_and_listable(store: EventStore) -> None:
    feed = _feed(store)
    await store.append("g1", numbered(1), 0, summary=_summary("g1", "ended"))
    await store.append("g2", numbered(1), 0, summary=_summary("g2", "ended"))
    got = await feed.results_read("grp", "c", count=10, block_ms=10, lease=0.05,
                                  max_deliveries=2)
    await feed.results_ack("grp", [got[1].id])  # g2 processed; g1 fails every time
    await asyncio.sleep(0.15)
    again = await feed.results_read("grp", "c", count=10, block_ms=10, lease=0.05,
                                    max_deliveries=2)
    assert [(e.id, e.deliveries) for e in again] == [(got[0].id, 2)]
    await asyncio.sleep(0.15)
    assert await feed.results_read("grp", "c", count=10, block_ms=10, lease=0.05,
                                   max_deliveries=2) == []
    parked = await feed.results_parked("grp")
    assert [(p.entry.id, p.entry.summary, p.entry.deliveries, p.consumer)
            for p in parked] == [(got[0].id, _summary("g1", "ended"), 2, "c")]
    status = await feed.results_status("grp")
    assert (status.pending, status.parked) == (0, 1)
    assert await feed.results_parked("grp", after=parked[0].parked_id) == []
    assert await feed.results_parked("nobody") == []


async def test_a_new_group_starts_where_asked(store: EventStore) -> None:
    feed = _feed(store)
    for i in range(3):
        await store.append(f"g{i}", numbered(1), 0, summary=_summary(f"g{i}", "created"))
    everything = await feed.results_read("all", "c", block_ms=10)
    assert len(everything) == 3
    assert await feed.results_read("late", "c", start="$", block_ms=10) == []
    after = await feed.results_read("mid", "c", start=everything[0].id, block_ms=10)
    assert [e.id for e in after] == [e.id for e in everything[1:]]
    await store.append("g9", numbered(1), 0, summary=_summary("g9", "created"))
    late = await feed.results_read("late", "c", start="$", block_ms=10)
    assert [e.summary["game_id"] for e in late] == ["g9"]
    # an existing group keeps its position, whatever start says
    assert [e.summary["game_id"] for e in
            await feed.results_read("all", "c", start="0", block_ms=10)] == ["g9"]


async def test_an_expired_active_game_gets_one_abandoned_summary(
        limited_store: EventStore) -> None:
    store, feed = limited_store, _feed(limited_store)
    await store.append("left", numbered(1), 0, summary=_summary("left", "created"))
    await store.append("done", numbered(1), 0, summary=_summary("done", "created"))
    await store.append("done", numbered(1), 1, summary=_summary("done", "ended"))
    await store.set_active("done", False)  # finished: kept, never abandoned
    await asyncio.sleep(0.8)
    assert await feed.results_sweep() == 1
    assert await feed.results_sweep() == 0
    assert await store.list_games(active_only=True) == []
    got = await feed.results_read("grp", "c", block_ms=10)
    assert [(e.summary["game_id"], e.summary["kind"]) for e in got] == [
        ("left", "created"), ("done", "created"), ("done", "ended"), ("left", "abandoned")]


async def test_results_arguments_are_checked(store: EventStore) -> None:
    feed = _feed(store)
    for bad in ("", "a b", "x" * 65, "{g}"):
        with pytest.raises(ValueError):
            await feed.results_read(bad, "c", block_ms=10)
        with pytest.raises(ValueError):
            await feed.results_read("g", bad, block_ms=10)
    with pytest.raises(ValueError):
        await feed.results_read("g", "c", start="yesterday", block_ms=10)
    with pytest.raises(ValueError):
        await feed.results_read("g", "c", count=0, block_ms=10)
    with pytest.raises(ValueError):
        await feed.results_ack("g", ["not-an-id"])
    with pytest.raises(TypeError):
        await store.append("g1", numbered(1), 0, summary={"x": object()})
    assert await store.version("g1") == 0
