"""The contract: subscriptions, the game index and meta, the event repository."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from rummy.cards import parse_card
from rummy.events import CardDrawn, Event, Passed, TurnEnded
from rummy_store import (
    EventStore,
)
from rummy_store.contract._helpers import HANG_GUARD, StoreFactory, numbered, pytestmark, take

__all__ = [
    "pytestmark",
    "test_subscribe_catches_up_then_receives_live_events",
    "test_subscribe_misses_nothing_appended_between_catch_up_and_blocking",
    "test_subscribe_from_a_version_and_before_the_game_exists",
    "test_subscribe_is_in_order_without_gaps_under_concurrent_appends",
    "test_cancel_during_blocking_read_ends_every_subscriber",
    "test_subscribe_ends_when_its_task_is_cancelled",
    "test_many_subscribers_of_one_game_all_get_every_event_in_order",
    "test_subscribers_of_many_games_at_once",
    "test_cancelling_200_subscribers_leaves_none_registered",
    "test_an_event_appended_between_catch_up_and_registration_is_not_lost",
    "test_first_append_enters_the_game_in_the_index_as_active",
    "test_set_active_false_hides_a_finished_game",
    "test_a_retried_first_append_does_not_reactivate_a_finished_game",
    "test_meta_round_trip",
    "test_set_active_on_a_game_outside_the_index_enters_it",
    "test_the_repository_appends_and_reads_core_events",
]

# -- subscribe -------------------------------------------------------------------------------


async def test_subscribe_catches_up_then_receives_live_events(store: EventStore) -> None:
    await store.append("g1", numbered(5), 0)
    sub = store.subscribe("g1", block_ms=50)
    try:
        assert [e.version for e in await take(sub, 5)] == [1, 2, 3, 4, 5]
        pending = asyncio.ensure_future(take(sub, 4))
        await asyncio.sleep(0.2)  # the subscriber is now blocked waiting (several rounds)
        assert not pending.done()
        await store.append("g1", numbered(3, 6), 5)
        await store.append("g1", numbered(1, 9), 8)
        live = await pending
        assert [e.version for e in live] == [6, 7, 8, 9]
        assert [e.data["points"] for e in live] == [6, 7, 8, 9]
    finally:
        await sub.aclose()


async def test_subscribe_misses_nothing_appended_between_catch_up_and_blocking(
    store: EventStore,
) -> None:
    # The subscriber is suspended right after yielding its last catch-up event, before it
    # first blocks; whatever is appended then must still arrive (XREAD from the last id read,
    # never from "$").
    await store.append("g1", numbered(3), 0)
    sub = store.subscribe("g1", block_ms=50)
    try:
        assert [e.version for e in await take(sub, 3)] == [1, 2, 3]
        await store.append("g1", numbered(2, 4), 3)
        await store.append("g1", numbered(1, 6), 5)
        assert [e.version for e in await take(sub, 3)] == [4, 5, 6]
    finally:
        await sub.aclose()


async def test_subscribe_from_a_version_and_before_the_game_exists(store: EventStore) -> None:
    early = store.subscribe("later", block_ms=50)
    resumed = store.subscribe("later", after_version=2, block_ms=50)
    try:
        pending = asyncio.ensure_future(take(early, 4))
        await asyncio.sleep(0.1)
        await store.append("later", numbered(4), 0)
        assert [e.version for e in await pending] == [1, 2, 3, 4]
        assert [e.version for e in await take(resumed, 2)] == [3, 4]
    finally:
        await early.aclose()
        await resumed.aclose()


async def test_subscribe_is_in_order_without_gaps_under_concurrent_appends(
    store_factory: StoreFactory,
) -> None:
    writer_store, reader_store = store_factory(), store_factory()
    sub = reader_store.subscribe("g1", block_ms=20)

    async def write() -> None:
        version = 0
        for k in range(60):
            result = await writer_store.append("g1", numbered(1 + k % 3, version + 1), version)
            version = result.version
            if k % 7 == 0:
                await asyncio.sleep(0.01)

    total = sum(1 + k % 3 for k in range(60))
    try:
        writer = asyncio.ensure_future(write())
        got = await take(sub, total)
        await writer
        assert [e.version for e in got] == list(range(1, total + 1))
        assert [e.data["points"] for e in got] == list(range(1, total + 1))
    finally:
        await sub.aclose()


async def test_cancel_during_blocking_read_ends_every_subscriber(store: EventStore) -> None:
    # redis-py 8 swallows some cancellations inside a blocking read; 60
    # subscribers cancelled at random moments across several blocking reads must all end
    import random

    await store.append("quiet", numbered(1), 0)

    async def consume() -> None:
        async for _ in store.subscribe("quiet", 1, block_ms=50):
            pass

    rng = random.Random(19)
    tasks = [asyncio.create_task(consume()) for _ in range(60)]

    async def cancel_later(task: asyncio.Task[None]) -> None:
        await asyncio.sleep(rng.uniform(0.01, 0.6))
        task.cancel()

    await asyncio.gather(*(cancel_later(t) for t in tasks))
    done, pending = await asyncio.wait(tasks, timeout=HANG_GUARD)
    assert not pending, f"{len(pending)} subscribers still polling after cancel"
    assert all(t.cancelled() for t in done)


async def test_subscribe_ends_when_its_task_is_cancelled(store: EventStore) -> None:
    await store.append("g1", numbered(1), 0)
    seen: list[int] = []

    async def consume() -> None:
        async for event in store.subscribe("g1", block_ms=50):
            seen.append(event.version)

    task = asyncio.ensure_future(consume())
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == [1]
    # the store still works after a cancelled subscriber
    await store.append("g1", numbered(1, 2), 1)
    assert await store.version("g1") == 2


async def _until(predicate: Callable[[], bool], timeout: float = HANG_GUARD) -> bool:
    """Wait until ``predicate()`` holds (polling every 10 ms); its last value."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate() and loop.time() < end:
        await asyncio.sleep(0.01)
    return predicate()


async def test_many_subscribers_of_one_game_all_get_every_event_in_order(
    store_factory: StoreFactory,
) -> None:
    # one reader fans out to every subscriber of a game
    writer, reader = store_factory(), store_factory()
    await writer.append("g1", numbered(2), 0)
    subs = [reader.subscribe("g1", block_ms=50) for _ in range(50)]
    total = 2 + sum(1 + k % 4 for k in range(25))
    try:
        pending = [asyncio.ensure_future(take(sub, total)) for sub in subs]
        await asyncio.sleep(0.05)
        version = 2
        for k in range(25):
            version = (await writer.append("g1", numbered(1 + k % 4, version + 1),
                                           version)).version
            if k % 5 == 0:
                await asyncio.sleep(0.01)
        for got in await asyncio.gather(*pending):
            assert [e.version for e in got] == list(range(1, total + 1))
            assert [e.data["points"] for e in got] == list(range(1, total + 1))
    finally:
        for sub in subs:
            await sub.aclose()


async def test_subscribers_of_many_games_at_once(store_factory: StoreFactory) -> None:
    writer, reader = store_factory(), store_factory()
    games = [f"m{i}" for i in range(40)]
    subs = {g: [reader.subscribe(g, block_ms=50) for _ in range(3)] for g in games}
    try:
        pending = {g: [asyncio.ensure_future(take(s, 4)) for s in subs[g]]
                   for g in games}
        await asyncio.sleep(0.1)
        for i, g in enumerate(games):
            await writer.append(g, numbered(3, 100 * i), 0)
        for i, g in enumerate(games):
            await writer.append(g, numbered(1, 100 * i + 3), 3)
        for i, g in enumerate(games):
            for got in await asyncio.gather(*pending[g]):
                assert [e.version for e in got] == [1, 2, 3, 4], g
                assert [e.data["points"] for e in got] == [100 * i + k for k in range(4)]
    finally:
        for group in subs.values():
            for sub in group:
                await sub.aclose()


async def test_cancelling_200_subscribers_leaves_none_registered(store: EventStore) -> None:
    # cancelled streams used to leak handlers that kept polling the store
    await store.append("busy", numbered(1), 0)
    await store.append("other", numbered(1), 0)
    started = asyncio.Event()
    seen = 0

    async def consume(game: str) -> None:
        nonlocal seen
        async for _ in store.subscribe(game, block_ms=50):
            seen += 1
            if seen == 200:
                started.set()

    base = store.subscriber_count()
    tasks = [asyncio.create_task(consume("busy" if i % 2 else "other")) for i in range(200)]
    await asyncio.wait_for(started.wait(), HANG_GUARD)
    assert await _until(lambda: store.subscriber_count() == base + 200)
    for task in tasks:
        task.cancel()
    done, pending = await asyncio.wait(tasks, timeout=HANG_GUARD)
    assert not pending, f"{len(pending)} subscribers still running after cancel"
    errors = [t.exception() for t in done if not t.cancelled()]
    assert not errors, errors[:3]
    assert store.subscriber_count() == base
    # the store still delivers to a new subscriber afterwards
    sub = store.subscribe("busy", block_ms=50)
    try:
        assert [e.version for e in await take(sub, 1)] == [1]
        await store.append("busy", numbered(1, 2), 1)
        assert [e.version for e in await take(sub, 1)] == [2]
    finally:
        await sub.aclose()
    assert store.subscriber_count() == base


async def test_an_event_appended_between_catch_up_and_registration_is_not_lost(
    store_factory: StoreFactory,
) -> None:
    # A is live on the game, so the store already reads it; B has caught up to version 3
    # and is suspended before it waits for live events. Version 4, appended now, reaches A
    # and must reach B too, although nothing is appended after it.
    writer, reader = store_factory(), store_factory()
    await writer.append("g1", numbered(3), 0)
    a = reader.subscribe("g1", block_ms=50)
    b = reader.subscribe("g1", block_ms=50)
    try:
        assert [e.version for e in await take(a, 3)] == [1, 2, 3]
        pending_a = asyncio.ensure_future(take(a, 1))
        await asyncio.sleep(0.1)
        assert [e.version for e in await take(b, 3)] == [1, 2, 3]
        await writer.append("g1", numbered(1, 4), 3)
        assert [e.version for e in await pending_a] == [4]
        assert [e.version for e in await take(b, 1)] == [4]
    finally:
        await a.aclose()
        await b.aclose()


# -- index and metadata ----------------------------------------------------------------------


async def test_first_append_enters_the_game_in_the_index_as_active(store: EventStore) -> None:
    assert await store.list_games() == []
    for name in ("a", "b", "c"):
        await store.append(name, numbered(1), 0)
        await asyncio.sleep(0.002)  # distinct creation times
    await store.append("a", numbered(1), 1)  # later appends do not move a game
    assert await store.list_games() == ["c", "b", "a"]  # newest first
    assert await store.list_games(limit=2) == ["c", "b"]
    assert await store.list_games(limit=0) == []
    assert await store.list_games(active_only=True) == ["c", "b", "a"]


async def test_set_active_false_hides_a_finished_game(store: EventStore) -> None:
    for name in ("a", "b", "c"):
        await store.append(name, numbered(1), 0)
        await asyncio.sleep(0.002)
    assert await store.set_active("b", False) is True  # it was listed
    assert await store.list_games(active_only=True) == ["c", "a"]
    assert await store.list_games() == ["c", "b", "a"]
    assert await store.set_active("b", False) is False  # idempotent: no longer listed
    assert await store.set_active("b", True) is False
    assert await store.set_active("b", True) is True
    assert await store.list_games(active_only=True) == ["c", "b", "a"]


async def test_a_retried_first_append_does_not_reactivate_a_finished_game(
    store: EventStore,
) -> None:
    await store.append("g", numbered(1), 0, request_id="create", request_hash="h")
    await store.set_active("g", False)
    again = await store.append("g", numbered(1), 0, request_id="create", request_hash="h")
    assert again.duplicate
    assert await store.list_games() == ["g"]
    assert await store.list_games(active_only=True) == []


async def test_meta_round_trip(store: EventStore) -> None:
    meta = {
        "seats": [{"kind": "human", "token_sha256": "ab" * 32}, {"kind": "bot", "bot": "greedy"}],
        "turn_seconds": 30,
        "admin": None,
    }
    await store.put_meta("g1", meta)
    assert await store.get_meta("g1") == meta
    await store.put_meta("g1", {"replaced": True})
    assert await store.get_meta("g1") == {"replaced": True}
    assert await store.get_meta("g2") is None
    # meta without events (a creation that failed halfway) is not a game: it is
    # neither listed nor active; the first append enters the game in the index
    assert "g1" not in await store.list_games()
    assert not await store.exists("g1")


async def test_set_active_on_a_game_outside_the_index_enters_it(store: EventStore) -> None:
    await store.set_active("x", True)
    assert await store.list_games() == ["x"]
    assert await store.list_games(active_only=True) == ["x"]


# -- the event repository (core events through the one mapper) ------------------------------


async def test_the_repository_appends_and_reads_core_events(store: EventStore) -> None:
    from rummy_store import EventRepository

    repo = EventRepository(store)
    events: list[Event] = [CardDrawn(seat=1, card=parse_card("*"), draw=1), Passed(seat=1),
                           TurnEnded(1)]
    result = await repo.append("g1", events, 0, request_id="r1", request_hash="h")
    assert result.version == 3 and [e.data["type"] for e in result.events] == \
        ["CardDrawn", "Passed", "TurnEnded"]
    back = await repo.read("g1")
    assert [r.event for r in back] == events and [r.version for r in back] == [1, 2, 3]
    assert (await repo.read("g1", 1, 2))[0].event == Passed(seat=1)
    again = await repo.get_request("g1", "r1", "h")
    assert again is not None and again.duplicate and again.version == 3
    sub = repo.subscribe("g1", 1)
    try:
        got = [await asyncio.wait_for(anext(sub), HANG_GUARD) for _ in range(2)]
    finally:
        await sub.aclose()
    assert [r.event for r in got] == events[1:]
