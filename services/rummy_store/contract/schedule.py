"""The contract: due times of games (bot turns and turn deadlines held in the store, claimed
by whichever replica polls first)."""

from __future__ import annotations

import asyncio
import time

import pytest

from rummy_store import EventStore
from rummy_store.contract._helpers import StoreFactory, numbered, pytestmark

__all__ = [
    "pytestmark",
    "test_a_due_game_is_claimed_once_and_leased",
    "test_a_claim_lapses_after_its_lease",
    "test_a_game_not_yet_due_is_not_claimed",
    "test_only_earlier_keeps_an_earlier_due_time",
    "test_unschedule_forgets_the_game",
    "test_claim_one_game",
    "test_claim_limit_and_order",
    "test_concurrent_replicas_claim_each_game_once",
    "test_bad_schedule_arguments_are_value_errors",
    "test_put_if_absent_keeps_the_first_value",
    "test_put_if_absent_expires_after_its_ttl",
    "test_an_idle_game_expires_and_leaves_the_index",
    "test_a_finished_game_is_kept_and_its_requests_expire",
]


async def test_a_due_game_is_claimed_once_and_leased(store: EventStore) -> None:
    await store.schedule("g1", 0)
    before = time.time()
    assert await store.claim_due(5.0) == ["g1"]
    assert await store.claim_due(5.0) == []  # leased: nobody else takes it
    due = await store.due("g1")
    assert due is not None and before + 4.0 < due < before + 6.0


async def test_a_claim_lapses_after_its_lease(store: EventStore) -> None:
    await store.schedule("g1", 0)
    assert await store.claim_due(0.2) == ["g1"]
    await asyncio.sleep(0.3)  # the claimer did not act: another replica may
    assert await store.claim_due(0.2) == ["g1"]


async def test_a_game_not_yet_due_is_not_claimed(store: EventStore) -> None:
    await store.schedule("g1", 60)
    assert await store.claim_due(1.0) == []
    assert await store.claim_due(1.0, game_id="g1") == []
    due = await store.due("g1")
    assert due is not None and due > time.time() + 58


async def test_only_earlier_keeps_an_earlier_due_time(store: EventStore) -> None:
    await store.schedule("g1", 10)
    first = await store.due("g1")
    await store.schedule("g1", 20, only_earlier=True)
    assert await store.due("g1") == first
    await store.schedule("g1", 1, only_earlier=True)
    second = await store.due("g1")
    assert second is not None and first is not None and second < first
    await store.schedule("g1", 30)  # a plain schedule always sets it
    third = await store.due("g1")
    assert third is not None and third > first
    await store.schedule("g2", 5, only_earlier=True)  # absent: added
    assert await store.due("g2") is not None


async def test_unschedule_forgets_the_game(store: EventStore) -> None:
    await store.schedule("g1", 0)
    await store.unschedule("g1")
    await store.unschedule("never-scheduled")
    assert await store.due("g1") is None
    assert await store.claim_due(1.0) == []


async def test_claim_one_game(store: EventStore) -> None:
    await store.schedule("g1", 0)
    await store.schedule("g2", 0)
    assert await store.claim_due(5.0, game_id="g2") == ["g2"]
    assert await store.claim_due(5.0, game_id="g2") == []
    assert await store.claim_due(5.0, game_id="nope") == []
    assert await store.claim_due(5.0) == ["g1"]


async def test_claim_limit_and_order(store: EventStore) -> None:
    for i in range(5):
        await store.schedule(f"g{i}", 0)
        await asyncio.sleep(0.002)  # distinct due times: g0 oldest
    assert await store.claim_due(5.0, limit=2) == ["g0", "g1"]
    assert sorted(await store.claim_due(5.0, limit=10)) == ["g2", "g3", "g4"]


async def test_concurrent_replicas_claim_each_game_once(store_factory: StoreFactory) -> None:
    stores = [store_factory() for _ in range(4)]
    for i in range(40):
        await stores[0].schedule(f"g{i}", 0)
    claims = await asyncio.gather(*(s.claim_due(30.0, limit=7) for s in stores for _ in range(3)))
    taken = [g for batch in claims for g in batch]
    assert sorted(taken) == sorted(set(taken))  # nobody claimed a game twice
    assert len(taken) == 40


@pytest.mark.parametrize("delay", [-1, float("nan"), float("inf"), "1"])
async def test_bad_schedule_arguments_are_value_errors(store: EventStore, delay: object) -> None:
    with pytest.raises(ValueError):
        await store.schedule("g1", delay)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        await store.claim_due(0)
    with pytest.raises(ValueError):
        await store.claim_due(1.0, limit=0)
    with pytest.raises(ValueError):
        await store.schedule("bad id", 1)


async def test_put_if_absent_keeps_the_first_value(store_factory: StoreFactory) -> None:
    stores = [store_factory() for _ in range(4)]
    won = await asyncio.gather(*(s.put_if_absent("create:r1", {"by": i}, 60)
                                 for i, s in enumerate(stores)))
    assert len({w["by"] for w in won}) == 1  # everybody sees the one winner
    assert await stores[0].put_if_absent("create:r1", {"by": 99}, 60) == won[0]


async def test_put_if_absent_expires_after_its_ttl(store: EventStore) -> None:
    assert await store.put_if_absent("create:r2", {"v": 1}, 0.2) == {"v": 1}
    await asyncio.sleep(0.3)
    assert await store.put_if_absent("create:r2", {"v": 2}, 0.2) == {"v": 2}
    with pytest.raises(ValueError):
        await store.put_if_absent("bad name", {"v": 1}, 1)
    with pytest.raises(ValueError):
        await store.put_if_absent("n", {"v": 1}, 0)


# -- limits: idle expiry and the request window (needs a store_factory taking options) ---


async def test_an_idle_game_expires_and_leaves_the_index(limited_store: EventStore) -> None:
    store = limited_store  # idle_ttl 0.4 s, request_ttl 0.4 s
    await store.put_meta("idle", {"seats": []})
    await store.append("idle", numbered(2), 0, request_id="r1", request_hash="h")
    await store.put_meta("busy", {"seats": []})
    await store.append("busy", numbered(1), 0)
    await store.put_meta("meta-only", {"seats": []})  # a creation that failed halfway
    for _ in range(4):  # "busy" keeps appending, "idle" does not
        await asyncio.sleep(0.15)
        await store.append("busy", numbered(1), await store.version("busy"))
    assert await store.read("idle") == [] and await store.version("idle") == 0
    assert await store.get_meta("idle") is None and await store.get_meta("meta-only") is None
    assert await store.get_request("idle", "r1", "h") is None
    assert await store.list_games(active_only=True) == ["busy"]
    assert await store.list_games() == ["busy"]
    assert await store.version("busy") == 5


async def test_a_finished_game_is_kept_and_its_requests_expire(
        limited_store: EventStore) -> None:
    store = limited_store
    await store.put_meta("done", {"seats": []})
    await store.append("done", numbered(3), 0, request_id="r1", request_hash="h")
    await store.set_active("done", False)
    await asyncio.sleep(0.6)  # past the idle expiry and the request window
    assert await store.version("done") == 3 and await store.get_meta("done") == {"seats": []}
    assert await store.list_games() == ["done"]
    assert await store.get_request("done", "r1", "h") is None  # trimmed after the window
