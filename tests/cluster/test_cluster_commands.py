"""Every command that takes a store URL accepts a Redis Cluster URL, as ``rummy serve`` does
(one factory, ``rummy_store.factory.open_store``), on a local 3-master cluster.

Before: ``rummy replay GAME_ID --redis-url redis+cluster://...`` failed for every game
("unknown event store url"), and a batch with ``--record-every`` whose event store was a
cluster never completed (each chunk failed at recording its sampled games).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from rummy_store import append_sync, encode_events, read_all_sync

from rummy.simulate import play_game
from tests.workers.helpers import BROKER_PREFIX, REDIS_UP, REDIS_URL, ROOT, delete_keys, worker_env

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.timeout(300)]


def _rummy(*args: str, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rummy", *args], cwd=ROOT,
                          env=env or worker_env(), capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_replay_and_export_read_a_game_from_the_cluster(cluster_url: str,
                                                         tmp_path: Path) -> None:
    prefix = f"rummytest:{uuid.uuid4().hex}"
    game = play_game(("basic", "random"), 7, record=True)
    events = encode_events(game.events)
    assert append_sync(cluster_url, "g1", events, 0, prefix=prefix).version == len(events)

    replay = _rummy("replay", "g1", "--redis-url", cluster_url, "--prefix", prefix)
    assert replay.returncode == 0, replay.stderr
    assert "unknown event store" not in replay.stderr

    out = tmp_path / "g1.jsonl"
    export = _rummy("export", "g1", "--redis-url", cluster_url, "--prefix", prefix,
                    "--output", str(out))
    assert export.returncode == 0, export.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["type"] for line in lines] == [e["type"] for e in events]


@pytest.fixture()
def batch_worker(cluster_url: str, tmp_path: Path) -> Iterator[tuple[dict[str, str], str]]:
    """``rummy worker`` whose event store is the cluster (batch state and broker on the
    test Redis); yields (env, event-store prefix)."""
    if not REDIS_UP:
        pytest.skip(f"no Redis at {REDIS_URL}")
    tag = uuid.uuid4().hex[:8]
    prefix, queue = f"rummy-test-cluster-{tag}", f"cluster-{tag}"
    env = worker_env({"RUMMY_KEY_PREFIX": prefix, "RUMMY_QUEUE": queue,
                      "RUMMY_EVENT_STORE_URL": cluster_url,
                      "RUMMY_EVENT_STORE_PREFIX": prefix})
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "rummy", "worker", "-c", "1", "-l", "info", "--",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield env, prefix
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(15)
        except ProcessLookupError:
            pass
        log.close()
        delete_keys(prefix)
        delete_keys(BROKER_PREFIX)


def test_a_record_every_batch_completes_on_a_cluster_store(
        batch_worker: tuple[dict[str, str], str], cluster_url: str) -> None:
    env, prefix = batch_worker
    sub = _rummy("batch", "submit", "--games", "6", "--players", "2", "--bots", "random",
                 "--seed", "3", "--chunk-size", "3", "--record-every", "2", "--wait",
                 env=env, timeout=180)
    assert sub.returncode == 0, sub.stderr
    batch_id = sub.stdout.split()[0]
    status = json.loads(_rummy("batch", "status", batch_id, "--json", env=env).stdout)
    assert (status["done"], status["complete"], status["failures"]) == (2, True, {})
    for index in (0, 2, 4):  # every second game is in the cluster's event store
        assert read_all_sync(cluster_url, f"batch-{batch_id}-{index}", prefix=prefix)
    assert read_all_sync(cluster_url, f"batch-{batch_id}-1", prefix=prefix) == []
    replay = _rummy("replay", f"batch-{batch_id}-4", "--redis-url", cluster_url,
                    "--prefix", prefix, env=env)
    assert replay.returncode == 0, replay.stderr
