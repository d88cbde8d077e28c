"""The results feed on a Redis Cluster: the append script writes the summary to the game's
outbox (its own slot), the relay appends it to the feed once; a process that dies between
the two leaves it in the outbox, and the sweep relays it (fixtures in conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest
from rummy_store import EventStore, RedisEventStore
from rummy_store.contract._helpers import numbered

pytestmark = [pytest.mark.asyncio, pytest.mark.timeout(120)]


async def test_a_relay_that_never_ran_is_done_by_the_sweep_once(store: EventStore,
                                                               monkeypatch: Any) -> None:
    assert isinstance(store, RedisEventStore)

    async def dies(**_: Any) -> None:  # the appending process dies before the relay
        raise ConnectionError("killed")

    relay = store._relay
    monkeypatch.setattr(store, "_relay", dies)
    await store.append("g1", numbered(2), 0, summary={"kind": "created", "game_id": "g1"})
    await store.append("g2", numbered(1), 0, summary={"kind": "created", "game_id": "g2"})
    assert await store.results_read("grp", "c", block_ms=10) == []  # not in the feed yet
    outbox = await store.client.hgetall(store.key("g1", "results"))
    assert outbox == {"2": '{"kind":"created","game_id":"g1"}'}
    monkeypatch.setattr(store, "_relay", relay)
    await store.results_sweep()
    await store.results_sweep()  # nothing left to relay
    # a relay repeated after a crash between XADD and HDEL appends nothing
    assert not await store._relay(keys=[store._results_feed, store._results_seen],
                                  args=["g1 2", "g1", "{}"])
    got = await store.results_read("grp", "c", block_ms=10)
    assert sorted(e.summary["game_id"] for e in got) == ["g1", "g2"]
    assert await store.client.exists(store.key("g1", "results")) == 0
    await store.append("g1", numbered(1), 2, summary={"kind": "ended", "game_id": "g1"})
    got = await store.results_read("grp", "c", block_ms=10)  # relayed by the append itself
    assert [(e.summary["game_id"], e.summary["kind"]) for e in got] == [("g1", "ended")]
