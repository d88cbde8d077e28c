"""The event-store contract: every implementation of ``rummy_store.EventStore`` passes it.

A pytest suite shipped with the package, so that a third-party store can run it (needs
``pytest``, ``pytest-asyncio`` and ``pytest-timeout``, the ``dev`` extra). In a test module
of your own, import the tests and provide two fixtures::

    import pytest
    from rummy_store.contract import *  # noqa: F403 - the contract's tests

    @pytest.fixture
    def store_factory():
        # a function returning stores on ONE backend: each call like another server
        # process on the same data (a new client), or the same store
        return lambda: MyEventStore(...)

    @pytest.fixture
    def store(store_factory):
        return store_factory()

This project runs it against the in-memory store and the real Redis
(``tests/contract/test_event_store.py``, fixtures in ``tests/contract/conftest.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from rummy.cards import parse_card
from rummy.events import CardDrawn, Event, Knocked, Passed, TurnEnded, to_dict
from rummy_store import (
    AppendResult,
    EventStore,
    RequestIdReused,
    StoredEvent,
    VersionConflict,
    decode_events,
    encode_events,
    request_digest,
)

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(60)]

StoreFactory = Callable[[], EventStore]
"""The ``store_factory`` fixture: a function returning stores on one backend."""


def turn(seat: int) -> list[dict[str, Any]]:
    """The dicts of one short turn of ``seat``: draw, pass, end."""
    return encode_events(
        [CardDrawn(seat=seat, card=parse_card("7S"), draw=1), Passed(seat=seat), TurnEnded(seat)]
    )


def numbered(n: int, start: int = 1) -> list[dict[str, Any]]:
    """``n`` distinct event dicts (Knocked with points start, start+1, ...)."""
    return [to_dict(Knocked(seat=0, points=p)) for p in range(start, start + n)]


async def take(iterator: AsyncIterator[StoredEvent], n: int,
               timeout: float = 10.0) -> list[StoredEvent]:
    """The next ``n`` items of an async iterator (fails the test if they do not come)."""
    return [await asyncio.wait_for(anext(iterator), timeout) for _ in range(n)]


# -- append / read ---------------------------------------------------------------------------


async def test_the_store_implements_the_port(store: EventStore) -> None:
    assert isinstance(store, EventStore)


async def test_append_then_read_round_trips_the_event_dicts(store: EventStore) -> None:
    before = time.time()
    result = await store.append("g1", turn(0), 0)
    after = time.time()
    assert result.version == 3 and not result.duplicate and result.response is None
    stored = await store.read("g1")
    assert stored == list(result.events)
    assert [e.version for e in stored] == [1, 2, 3]
    assert [e.type for e in stored] == ["CardDrawn", "Passed", "TurnEnded"]
    assert [e.data for e in stored] == turn(0)
    assert decode_events(stored) == [
        CardDrawn(seat=0, card=parse_card("7S"), draw=1),
        Passed(seat=0),
        TurnEnded(0),
    ]
    assert all(before - 1 <= e.ts <= after + 1 for e in stored)  # seconds; Redis clock


async def test_versions_are_consecutive_over_many_appends(store: EventStore) -> None:
    version = 0
    for size in (1, 4, 2, 1, 7):
        result = await store.append("g1", numbered(size, version + 1), version)
        assert [e.version for e in result.events] == list(range(version + 1, version + size + 1))
        version = result.version
    stored = await store.read("g1")
    assert [e.version for e in stored] == list(range(1, 16))
    assert [e.data["points"] for e in stored] == list(range(1, 16))
    assert await store.version("g1") == 15


async def test_read_slices_by_after_and_to_version(store: EventStore) -> None:
    await store.append("g1", numbered(10), 0)
    assert [e.version for e in await store.read("g1", 3)] == list(range(4, 11))
    assert [e.version for e in await store.read("g1", 3, 6)] == [4, 5, 6]
    assert [e.version for e in await store.read("g1", 0, 1)] == [1]
    assert await store.read("g1", 10) == []
    assert await store.read("g1", 12) == []
    assert await store.read("g1", 5, 5) == []
    assert await store.read("g1", 6, 2) == []


async def test_unknown_game_reads_empty_at_version_zero(store: EventStore) -> None:
    assert await store.read("nope") == []
    assert await store.version("nope") == 0
    assert not await store.exists("nope")
    assert await store.get_meta("nope") is None


async def test_exists_after_the_first_append(store: EventStore) -> None:
    await store.append("g1", numbered(1), 0)
    assert await store.exists("g1")
    assert not await store.exists("g2")


async def test_games_are_separate_streams(store: EventStore) -> None:
    await store.append("g1", numbered(2), 0)
    await store.append("g2", numbered(3, 100), 0)
    assert [e.data["points"] for e in await store.read("g1")] == [1, 2]
    assert [e.data["points"] for e in await store.read("g2")] == [100, 101, 102]


async def test_stored_data_is_a_json_copy(store: EventStore) -> None:
    event: dict[str, Any] = {"type": "Custom", "v": 1, "cards": ("7S", "*8H"),
                             "nested": {"a": [1, 2.5, None]}}
    result = await store.append("g1", [event], 0)
    event["nested"]["a"].append("mutated after the append")
    expected = {"type": "Custom", "v": 1, "cards": ["7S", "*8H"], "nested": {"a": [1, 2.5, None]}}
    assert result.events[0].data == expected
    assert (await store.read("g1"))[0].data == expected


async def test_empty_append_without_request_id_only_checks_the_version(store: EventStore) -> None:
    await store.append("g1", numbered(2), 0)
    assert await store.append("g1", [], 2) == AppendResult(2, (), False, None)
    with pytest.raises(VersionConflict):
        await store.append("g1", [], 1)
    assert await store.version("g1") == 2


# -- optimistic concurrency ------------------------------------------------------------------


async def test_expected_version_conflict_raises_and_appends_nothing(store: EventStore) -> None:
    await store.append("g1", numbered(3), 0)
    for wrong in (0, 2, 4, 99):
        with pytest.raises(VersionConflict) as info:
            await store.append("g1", numbered(2, 50), wrong, request_id=f"r{wrong}")
        assert (info.value.game_id, info.value.expected, info.value.actual) == ("g1", wrong, 3)
        assert "expected version" in str(info.value)
    assert [e.data["points"] for e in await store.read("g1")] == [1, 2, 3]
    # a rejected append records nothing: the same request id works once the version is right
    result = await store.append("g1", numbered(2, 50), 3, request_id="r0")
    assert not result.duplicate and result.version == 5


async def test_first_append_to_an_unknown_game_needs_version_zero(store: EventStore) -> None:
    with pytest.raises(VersionConflict) as info:
        await store.append("new", numbered(1), 1)
    assert info.value.actual == 0
    assert not await store.exists("new")
    assert await store.list_games() == []


async def test_fifty_concurrent_appenders_exactly_one_wins(
        store_factory: StoreFactory) -> None:
    stores = [store_factory() for _ in range(5)]  # Redis: five clients, like five servers
    await stores[0].append("race", numbered(1), 0)

    async def contender(i: int) -> AppendResult | VersionConflict:
        try:
            return await stores[i % 5].append(
                "race", [to_dict(Knocked(seat=1, points=i))], 1, request_id=f"cmd-{i}"
            )
        except VersionConflict as exc:
            return exc

    outcomes = await asyncio.gather(*(contender(i) for i in range(50)))
    wins = [o for o in outcomes if isinstance(o, AppendResult)]
    losses = [o for o in outcomes if isinstance(o, VersionConflict)]
    assert len(wins) == 1 and len(losses) == 49
    assert all(loss.expected == 1 and loss.actual == 2 for loss in losses)
    stored = await stores[0].read("race")
    assert [e.version for e in stored] == [1, 2]
    assert stored[1].data["points"] == wins[0].events[0].data["points"]


async def test_concurrent_appenders_that_retry_build_one_gapless_stream(
        store_factory: StoreFactory) -> None:
    stores = [store_factory() for _ in range(4)]

    async def writer(w: int) -> None:
        store = stores[w % 4]
        for k in range(10):
            while True:
                version = await store.version("busy")
                try:
                    await store.append("busy", [{"type": "T", "w": w, "k": k}], version)
                    break
                except VersionConflict:
                    await asyncio.sleep(0)

    await asyncio.gather(*(writer(w) for w in range(8)))
    stored = await stores[0].read("busy")
    assert [e.version for e in stored] == list(range(1, 81))
    assert sorted((e.data["w"], e.data["k"]) for e in stored) == [
        (w, k) for w in range(8) for k in range(10)
    ]


# -- request ids -----------------------------------------------------------------------------


async def test_retried_request_id_returns_the_original_result(store: EventStore) -> None:
    await store.append("g1", numbered(1), 0)
    body = {"command": "draw", "seat": 0}
    first = await store.append(
        "g1",
        turn(0),
        1,
        request_id="req-1",
        request_hash=request_digest(body),
        response={"ok": True, "n": 3},
    )
    assert first.version == 4 and not first.duplicate
    assert first.response == {"ok": True, "n": 3}
    await store.append("g1", numbered(2, 10), 4)  # the game moves on
    retry = await store.append(
        "g1",
        turn(0),
        1,
        request_id="req-1",
        request_hash=request_digest(body),
        response={"ignored": 1},
    )
    assert retry.duplicate
    assert retry.version == 4
    assert retry.events == first.events
    assert retry.response == {"ok": True, "n": 3}
    assert await store.version("g1") == 6  # nothing appended by the retry


async def test_get_request_reads_the_original_result_without_appending(
        store: EventStore) -> None:
    # issue 11: replaces the "append nothing at version 2**40" probe
    assert await store.get_request("g1", "req-1") is None  # no such game yet
    await store.append("g1", numbered(1), 0)
    assert await store.get_request("g1", "req-1", "h") is None  # no such request
    first = await store.append("g1", turn(0), 1, request_id="req-1", request_hash="h",
                               response={"seat": 0})
    await store.append("g1", numbered(2, 10), first.version)
    got = await store.get_request("g1", "req-1", "h")
    assert got is not None and got.duplicate
    assert (got.version, got.events, got.response) == (first.version, first.events,
                                                       {"seat": 0})
    with pytest.raises(RequestIdReused):
        await store.get_request("g1", "req-1", "another body")
    assert await store.get_request("g2", "req-1", "h") is None  # per game
    assert await store.version("g1") == 6  # reads only


async def test_retry_is_recognised_before_the_version_check(store: EventStore) -> None:
    # a client whose append timed out retries with its stale expected_version: it must get
    # the original outcome, not a VersionConflict
    first = await store.append("g1", numbered(2), 0, request_id="r", request_hash="h")
    again = await store.append("g1", numbered(2), 0, request_id="r", request_hash="h")
    assert again.duplicate and again.events == first.events and again.version == 2
    assert await store.version("g1") == 2


async def test_same_request_id_with_another_body_is_refused(store: EventStore) -> None:
    await store.append("g1", numbered(1), 0, request_id="r", request_hash="hash-a")
    with pytest.raises(RequestIdReused) as info:
        await store.append("g1", numbered(1, 9), 1, request_id="r", request_hash="hash-b")
    assert (info.value.game_id, info.value.request_id) == ("g1", "r")
    with pytest.raises(RequestIdReused):
        await store.append("g1", numbered(1, 9), 1, request_id="r")  # None is a hash too
    assert await store.version("g1") == 1


async def test_request_ids_are_per_game(store: EventStore) -> None:
    await store.append("g1", numbered(1), 0, request_id="r", request_hash="a")
    other = await store.append("g2", numbered(1), 0, request_id="r", request_hash="b")
    assert not other.duplicate and await store.version("g2") == 1


async def test_empty_append_with_request_id_records_the_request(store: EventStore) -> None:
    await store.append("g1", numbered(2), 0)
    noop = await store.append("g1", [], 2, request_id="q", request_hash="h", response={"r": 1})
    assert noop == AppendResult(2, (), False, {"r": 1})
    await store.append("g1", numbered(1, 7), 2)
    again = await store.append("g1", [], 2, request_id="q", request_hash="h")
    assert again == AppendResult(2, (), True, {"r": 1})
    assert await store.version("g1") == 3


async def test_fifty_concurrent_retries_of_one_request_append_once(
        store_factory: StoreFactory) -> None:
    stores = [store_factory() for _ in range(5)]
    results = await asyncio.gather(
        *(
            stores[i % 5].append("g1", numbered(3), 0, request_id="same", request_hash="h")
            for i in range(50)
        )
    )
    assert sum(not r.duplicate for r in results) == 1
    assert all(r.events == results[0].events and r.version == 3 for r in results)
    assert await stores[0].version("g1") == 3


# -- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize("game_id", ["", "a{b", "a}b", "with space", "tab\t"])
async def test_bad_game_ids_are_value_errors(store: EventStore, game_id: str) -> None:
    with pytest.raises(ValueError, match="game id"):
        await store.append(game_id, numbered(1), 0)
    with pytest.raises(ValueError, match="game id"):
        await store.read(game_id)


async def test_malformed_appends_are_refused_before_anything_is_written(store: EventStore) -> None:
    with pytest.raises(ValueError, match="type"):
        await store.append("g1", [{"type": "A"}, {"no": "type"}], 0)
    with pytest.raises(TypeError, match="not a dict"):
        await store.append("g1", ["CardDrawn"], 0)  # type: ignore[list-item]
    with pytest.raises(TypeError):
        await store.append("g1", [{"type": "A", "x": object()}], 0)
    with pytest.raises(TypeError):
        await store.append("g1", [{"type": "A", "x": float("nan")}], 0)
    with pytest.raises(ValueError, match="expected_version"):
        await store.append("g1", numbered(1), -1)
    with pytest.raises(ValueError, match="request_id"):
        await store.append("g1", numbered(1), 0, request_id="")
    assert await store.version("g1") == 0


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
        got = await take(sub, total, timeout=20)
        await writer
        assert [e.version for e in got] == list(range(1, total + 1))
        assert [e.data["points"] for e in got] == list(range(1, total + 1))
    finally:
        await sub.aclose()


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
    await store.set_active("b", False)
    assert await store.list_games(active_only=True) == ["c", "a"]
    assert await store.list_games() == ["c", "b", "a"]
    await store.set_active("b", False)  # idempotent
    await store.set_active("b", True)
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
    assert "g1" in await store.list_games()  # meta enters the game in the index
    assert not await store.exists("g1")  # but a game exists only once it has events


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
        got = [await asyncio.wait_for(anext(sub), 10) for _ in range(2)]
    finally:
        await sub.aclose()
    assert [r.event for r in got] == events[1:]
