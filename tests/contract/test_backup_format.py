"""The backup file of :mod:`rummy_store.backup` on the real Redis: a round trip, a damaged
or foreign file refused before anything is written, ``replace``, and batches that never
split one game's keys (so that each game is dumped in one MULTI)."""

from __future__ import annotations

import base64
import gzip
import io
import json
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from rummy_store import RedisEventStore
from rummy_store.backup import BackupError, _batches, backup, restore
from rummy_store.contract._helpers import numbered

from tests.redis_helpers import REDIS_URL, delete_prefix, redis_unreachable

pytestmark = [pytest.mark.timeout(60)]


def test_batches_never_split_a_games_keys() -> None:
    keys = sorted(f"p:{{g{i:03}}}:{k}" for i in range(300)
                  for k in ("events", "meta", "snapshots"))
    keys += ["p:games", "p:games:active", "p:{p:results}:feed"]
    batches = list(_batches(keys, "p"))
    assert [k for b in batches for k in b] == keys
    owner: dict[str, int] = {}
    for i, b in enumerate(batches):
        for k in b:
            if "{g" in k:
                assert owner.setdefault(k.split("}")[0], i) == i  # one batch per game


@pytest.mark.asyncio
@pytest.mark.redis
async def test_a_round_trip_and_refusals(tmp_path: Path) -> None:
    reason = redis_unreachable()
    if reason:
        pytest.skip(reason)
    prefix = f"rummytest:{uuid.uuid4().hex}"
    store = RedisEventStore.from_url(REDIS_URL, prefix=prefix, idle_ttl=3600)
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        for g in ("a", "b"):
            await store.append(g, numbered(3), 0, summary={"kind": "created", "game_id": g})
        await store.results_read("grp", "c", block_ms=10)
        buf = io.BytesIO()
        n = await backup(client, prefix, buf)
        path = tmp_path / "b.bak"
        path.write_bytes(buf.getvalue())
        lines = gzip.decompress(buf.getvalue()).splitlines()
        rows = [json.loads(x) for x in lines[1:-1]]
        assert n == len(rows) and json.loads(lines[-1])["keys"] == n
        assert all(0 < r["ttl"] <= 3_600_000 for r in rows if "{a}" in r["k"])  # idle expiry
        # damaged: one payload byte changed -> refused before writing
        rows[0]["d"] = base64.b64encode(b"x" + base64.b64decode(rows[0]["d"])[1:]).decode()
        bad = tmp_path / "bad.bak"
        bad.write_bytes(gzip.compress(b"\n".join(
            [lines[0], *(json.dumps(r).encode() for r in rows), lines[-1]]) + b"\n"))
        await delete_prefix(prefix)
        with pytest.raises(BackupError, match="damaged"):
            await restore(client, bad)
        with pytest.raises(BackupError, match="not 'other'"):
            await restore(client, path, prefix="other")
        assert await client.exists(store.key("a", "events")) == 0
        assert await restore(client, path) == n
        with pytest.raises(BackupError, match="already holds"):
            await restore(client, path)
        assert await restore(client, path, replace=True) == n
        assert await store.version("a") == 3 and await store.version("b") == 3
        status = await store.results_status("grp")
        assert (status.length, status.pending) == (2, 2)  # the group came back with it
    finally:
        await client.aclose()
        await store.close()
        await delete_prefix(prefix)
