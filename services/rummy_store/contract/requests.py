"""The contract: request ids (idempotent retries) and input validation."""

from __future__ import annotations

import asyncio

import pytest

from rummy_store import (
    AppendResult,
    EventStore,
    RequestIdReused,
    request_digest,
)
from rummy_store.contract._helpers import StoreFactory, numbered, pytestmark, turn

__all__ = [
    "pytestmark",
    "test_retried_request_id_returns_the_original_result",
    "test_get_request_reads_the_original_result_without_appending",
    "test_retry_is_recognised_before_the_version_check",
    "test_same_request_id_with_another_body_is_refused",
    "test_request_ids_are_per_game",
    "test_empty_append_with_request_id_records_the_request",
    "test_fifty_concurrent_retries_of_one_request_append_once",
    "test_bad_game_ids_are_value_errors",
    "test_malformed_appends_are_refused_before_anything_is_written",
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
    # get_request replaces the "append nothing at version 2**40" probe
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
