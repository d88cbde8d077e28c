"""``rummy batch list`` against the real Redis: it names the store it read, shows each
batch's rules, and fails (exit 1, naming the settings) when the store has no batch or
cannot be reached, instead of printing nothing with exit 0."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest
import redis
from rummy_worker.batches import BatchSpec, BatchStore

from tests.workers.helpers import REDIS_URL, ROOT, delete_keys, worker_env

pytestmark = [pytest.mark.redis]


def _list(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rummy", "batch", "list", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120, check=False)


def test_list_shows_the_store_and_the_rules_of_each_batch() -> None:
    prefix = f"test-list-{uuid.uuid4().hex[:8]}"
    store = BatchStore(redis.Redis.from_url(REDIS_URL, decode_responses=True), prefix)
    try:
        store.create(BatchSpec(games=10, bots=("greedy", "random"), seed=3,
                               rules={"joker_moves": "locked"}), "plain1")
        store.create(BatchSpec(games=10, bots=("greedy", "random"), seed=3,
                               compare_rules={"knock_threshold": 10}), "ab1")
        out = _list(worker_env({"RUMMY_KEY_PREFIX": prefix, "RUMMY_STATE_URL": REDIS_URL}))
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert lines[0] == f"batches in {REDIS_URL} (key prefix {prefix!r}), newest first:"
        rows = {line.split()[0]: line for line in lines[1:]}
        assert rows["plain1"].endswith("bots greedy,random  rules joker_moves=locked")
        assert rows["ab1"].endswith("rules [A/B] A: default | B: knock_threshold=10")
    finally:
        delete_keys(prefix)


def test_list_of_an_empty_store_fails_and_names_the_settings() -> None:
    prefix = f"test-list-empty-{uuid.uuid4().hex[:8]}"
    out = _list(worker_env({"RUMMY_KEY_PREFIX": prefix, "RUMMY_STATE_URL": REDIS_URL}))
    assert out.returncode == 1
    assert out.stdout == ""
    assert out.stderr.startswith(f"error: no batches in the batch-state store {REDIS_URL} "
                                 f"(key prefix {prefix!r})")
    assert "RUMMY_STATE_URL and RUMMY_KEY_PREFIX" in out.stderr


def test_list_of_an_unreachable_store_fails_and_names_the_setting() -> None:
    out = _list(worker_env({"RUMMY_STATE_URL": "redis://127.0.0.1:1/0"}))
    assert out.returncode == 1
    assert out.stderr.startswith("error: cannot reach the batch-state Redis at "
                                 "redis://127.0.0.1:1/0")
    assert "set RUMMY_STATE_URL (or --state-url)" in out.stderr
