"""The contract: appends, reads and optimistic concurrency."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from rummy.cards import parse_card
from rummy.events import CardDrawn, Knocked, Passed, TurnEnded, to_dict
from rummy_store import (
    AppendResult,
    EventStore,
    VersionConflict,
    decode_events,
)
from rummy_store.contract._helpers import HANG_GUARD, StoreFactory, numbered, pytestmark, turn

__all__ = [
    "pytestmark",
    "test_ping_answers",
    "test_the_store_implements_the_port",
    "test_append_then_read_round_trips_the_event_dicts",
    "test_versions_are_consecutive_over_many_appends",
    "test_read_slices_by_after_and_to_version",
    "test_unknown_game_reads_empty_at_version_zero",
    "test_exists_after_the_first_append",
    "test_games_are_separate_streams",
    "test_stored_data_is_a_json_copy",
    "test_empty_append_without_request_id_only_checks_the_version",
    "test_expected_version_conflict_raises_and_appends_nothing",
    "test_first_append_to_an_unknown_game_needs_version_zero",
    "test_fifty_concurrent_appenders_exactly_one_wins",
    "test_concurrent_appenders_that_retry_build_one_gapless_stream",
]

# -- append / read ---------------------------------------------------------------------------


async def test_ping_answers(store: EventStore) -> None:
    await asyncio.wait_for(store.ping(), timeout=HANG_GUARD)  # raises if the store does not answer


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
