"""``GameStore.subscribe`` (rummy_store.sealed) on the memory store: from version 0 the
``GameStarted`` names come opened; from version 1 on it is the inner store's own
subscription, and delivers exactly what the inner store holds, in order, live included."""

from __future__ import annotations

import asyncio

import pytest
from rummy_store.memory import MemoryEventStore
from rummy_store.sealed import GameStore

from tests.service.archive_helpers import MAPPER, short_game, write_game

pytestmark = [pytest.mark.asyncio]

NAMES = ("Zelda-S-Quill", "Yorick-S-Vane")


async def take(sub, n: int) -> list:
    return [await asyncio.wait_for(anext(sub), 5) for _ in range(n)]


async def test_from_version_0_names_are_opened_and_past_1_events_are_the_stored_ones():
    inner = MemoryEventStore()
    store = GameStore(inner)
    count = await write_game(store, "S", seed=31, names=NAMES)
    raw = await inner.read("S")
    assert len(raw) == count
    assert raw[0].type == "GameStarted" and tuple(raw[0].data["names"]) != NAMES  # sealed

    sub = store.subscribe("S", 0)
    got = await take(sub, count)
    await sub.aclose()
    assert got[0].type == "GameStarted" and tuple(got[0].data["names"]) == NAMES
    assert got[1:] == raw[1:]

    for after in (1, 2, count - 1):
        sub = store.subscribe("S", after)
        assert sub.ag_code is MemoryEventStore.subscribe.__code__  # no wrapper generator
        got = await take(sub, count - after)
        await sub.aclose()
        assert got == raw[after:]
        assert [e.version for e in got] == list(range(after + 1, count + 1))


async def test_a_subscription_past_version_1_gets_live_appends_once_in_order():
    inner = MemoryEventStore()
    store = GameStore(inner)
    _, events = short_game(32, NAMES)
    records = MAPPER.to_records(events)
    await store.put_meta("L", {"seats": [{"kind": "human", "name": n, "strategy": ""}
                                         for n in NAMES], "tokens": {}, "players": 2,
                               "hand_size": 10, "turn_seconds": 0})
    await store.append("L", records[:2], 0)
    sub = store.subscribe("L", 1)
    first = asyncio.ensure_future(take(sub, 1))
    await asyncio.sleep(0)
    for v in range(2, 6):
        await store.append("L", records[v:v + 1], v)
    got = await first + await take(sub, 4)
    await sub.aclose()
    assert [e.version for e in got] == [2, 3, 4, 5, 6]
    assert got == (await inner.read("L"))[1:]
