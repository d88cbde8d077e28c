"""Redis memory of a whole game played through the service (compact storage): at most
120 bytes per event with every command's request record, the figure
``benchmarks/bench_storage.py`` prints over more games. Memory is counted, not timed."""

from __future__ import annotations

import json

import pytest
from rummy_grpc.app import GameApp
from rummy_store import RedisEventStore

from benchmarks.bench_storage import ADMIN, keys_of, play

pytestmark = [pytest.mark.redis, pytest.mark.timeout(120)]


@pytest.mark.asyncio
async def test_a_whole_game_costs_at_most_120_bytes_per_event(store: RedisEventStore) -> None:
    app = GameApp(store, admin_token=ADMIN)
    try:
        game = await play(app, seed=3)
    finally:
        await app.close()
    stored = await store.read(game)
    assert stored[-1].type == "GameEnded" and len(stored) > 500
    client = store.client
    keys = await keys_of(client, store.prefix, game)
    assert len(keys["requests"]) == 8  # every command had a request id
    assert {await client.object("encoding", k) for k in keys["requests"]} == {"listpack"}
    memory = {kind: sum([await client.memory_usage(k) or 0 for k in names])
              for kind, names in keys.items()}
    per_event = sum(memory.values()) / len(stored)
    assert per_event <= 120, memory
    json_bytes = sum(len(json.dumps(e.data, separators=(",", ":"))) for e in stored)
    assert memory["events"] < json_bytes  # the stream is smaller than the records' JSON
