"""Faults found by attacking the workers and batches, each on real processes: real
``rummy worker`` / ``celery worker`` processes, the real Redis broker (and a private
``redis-server`` where the broker is killed), the real batch state.

* a malformed entry on the broker's queue ended the worker, and ``rummy worker`` exited 0;
* chunks only waiting in the queue longer than a lease were sent again at every sweep;
* after the broker restarted empty, the chunks in flight were never sent again;
* a chunk that failed deterministically was sent again forever.

Pass criteria are counts and equalities, never durations; timeouts only guard hangs.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from rummy_worker.batches import BatchSpec, BatchStore, batch_report

from rummy.balance import BalanceReport
from rummy.simulate import run_games
from tests.chaos_helpers import free_port
from tests.harness import HANG_GUARD
from tests.workers.helpers import BROKER_PREFIX, REDIS_URL, ROOT, wait_complete, worker_env

pytestmark = [pytest.mark.redis, pytest.mark.slow]

BOTS = ("random", "random")


def _local(spec: BatchSpec) -> BalanceReport:
    return BalanceReport.of(run_games(spec.bots, spec.seed, 0, spec.games, spec.ruleset(),
                                      spec.rotate))


def _outcomes(*logs: str) -> dict[str, int]:
    """How often each chunk outcome ('stored', 'duplicate', 'skipped') was logged."""
    counts = {"stored": 0, "duplicate": 0, "skipped": 0}
    for text in logs:
        for m in re.finditer(r"'outcome': '(\w+)'", text):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def _received(*logs: str) -> int:
    return sum(len(re.findall(r"Task rummy_worker.run_chunk\[[-\w]+\] received", text))
               for text in logs)


def _wait_for(pred: Any, timeout: float, what: str, poll: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(poll)
    raise AssertionError(f"not within {timeout} s: {what}")


def _wait_ready(worker: Any, timeout: float = 60.0) -> None:
    _wait_for(lambda: " ready." in worker.output() or worker.proc.poll() is not None,
              timeout, "worker ready")
    assert worker.proc.poll() is None, worker.output()[-3000:]


# ----------------------------------------------- a malformed entry on the broker's queue

def _kombu_message(body: Any) -> dict[str, Any]:
    """An envelope as kombu's Redis transport writes one (for a body that is not a task)."""
    return {"body": body, "content-encoding": "utf-8", "content-type": "application/json",
            "headers": {}, "properties": {"delivery_tag": "t", "body_encoding": "base64",
                                          "delivery_info": {"exchange": "",
                                                            "routing_key": "q"}}}


MALFORMED = [
    b"{not json",
    b"42",
    b"\xff\xfe not utf-8",
    json.dumps({"properties": {}}).encode(),
    json.dumps({"body": "x", "properties": {"delivery_tag": 5}}).encode(),
    json.dumps(_kombu_message("%%% not base64 %%%")).encode(),
    json.dumps(_kombu_message(base64.b64encode(b"{not json").decode())).encode(),
    b"[" * (2 << 20),  # 2 MB, parked undecoded
    # task messages whose JSON body is not [args, kwargs, embed]: Celery's consumer raised
    # "not enough values to unpack", the worker exited and the message went back on the
    # queue for the next worker (found by a tester)
    json.dumps({**_kombu_message(base64.b64encode(b"[]").decode()),
                "headers": {"task": "rummy_worker.run_chunk", "id": "abc2"}}).encode(),
    json.dumps({**_kombu_message(base64.b64encode(b'{"x": 1}').decode()),
                "headers": {"task": "rummy_worker.run_chunk", "id": "abc3"}}).encode(),
]


def test_a_malformed_broker_entry_is_parked_and_the_worker_goes_on(
        celery_app, store, queue, start_worker, rclient) -> None:
    """Malformed entries on the queue (not JSON, not a message, a body that does not
    decode, 2 MB of brackets) and a key of the wrong type on a priority queue's name: the
    worker logs and parks each one and goes on consuming: a batch sent after them
    completes, equal to the local simulation. Before: `Unrecoverable error:
    JSONDecodeError` and the worker exited. Then forged tasks for a chunk of that finished
    batch (an extra key; an 8 MB spec) are refused and write nothing into it."""
    from rummy_worker.tasks import submit

    w = start_worker(queue, concurrency=1, rummy=True,
                     env={"RUMMY_KEY_PREFIX": store.prefix})
    _wait_ready(w)
    key = f"{BROKER_PREFIX}{queue}"
    for entry in MALFORMED:
        rclient.lpush(key, entry)
    rclient.set(f"{key}\x06\x163", "a string, not a list")  # priority 3's list
    _wait_for(lambda: rclient.exists(f"{key}\x06\x163.malformed"), 60,
              "the wrong-typed key renamed", poll=0.2)
    spec = BatchSpec(games=12, bots=BOTS, seed=11, chunk_size=4)
    bid = submit(spec, store=store, queue=queue)
    wait_complete(store, bid, timeout=90, workers=[w])
    assert w.proc.poll() is None, w.output()[-3000:]
    assert batch_report(*store.merged(bid)) == _local(spec)
    # forged tasks for a chunk of the finished batch: an extra key, 8 MB of it
    from rummy_worker.tasks import run_chunk

    before = {k: rclient.dump(k) for k in rclient.scan_iter(match=f"{store.prefix}:*")}
    run_chunk.apply_async((bid, 1, {**spec.to_dict(), "extra": 1}, store.prefix),
                          queue=queue)
    run_chunk.apply_async((bid, 1, {**spec.to_dict(), "extra": "x" * (8 << 20)},
                           store.prefix), queue=queue)
    _wait_for(lambda: "differs from the batch's submitted spec" in w.output()
              and w.output().count("dropped a malformed entry") == len(MALFORMED), 60,
              "the forged tasks refused")
    assert {k: rclient.dump(k) for k in rclient.scan_iter(match=f"{store.prefix}:*")} \
        == before  # nothing written: no failure note on the finished batch
    # a well-formed envelope whose body is not JSON is Celery's to refuse (logged, acked)
    parked = redis.Redis.from_url(REDIS_URL).lrange(f"{key}.malformed", 0, -1)
    assert len(parked) == len(MALFORMED)  # the 8 MB task is parked, undecoded
    assert rclient.type(f"{key}\x06\x163.malformed") == "string"
    out = w.output()
    assert out.count("dropped a malformed entry") == len(MALFORMED)
    assert "Can't decode message body" in out
    assert "Unrecoverable error" not in out


def _private_redis(port: int, *extra: str) -> subprocess.Popen[bytes]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


def test_rummy_worker_exits_non_zero_on_a_fatal_error(tmp_path: Path, prefix: str,
                                                     queue: str) -> None:
    """A broker that refuses BRPOP (renamed away): Celery ends the worker with
    'Unrecoverable error'; `rummy worker` must exit non-zero so that a restart-on-failure
    supervisor brings it back (it exited 0)."""
    port = free_port()
    broker = _private_redis(port, "--rename-command", "BRPOP", "")
    try:
        url = f"redis://127.0.0.1:{port}/0"
        env = worker_env({"RUMMY_BROKER_URL": url, "RUMMY_KEY_PREFIX": prefix})
        proc = subprocess.run(
            [sys.executable, "-m", "rummy", "worker", "-Q", queue, "-c", "1", "--",
             "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    finally:
        broker.kill()
        broker.wait()
    out = proc.stdout + proc.stderr
    assert "Unrecoverable error" in out, out[-3000:]
    assert proc.returncode == 1, out[-3000:]


# ------------------------------------------------------ chunks only waiting in the queue

AMQP_URL = os.environ.get("RUMMY_TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")


def _amqp_up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 5672), timeout=1):
            return True
    except OSError:
        return False


def _amqp_length(queue: str) -> int:
    from kombu import Connection

    with Connection(AMQP_URL) as conn:
        try:
            return int(conn.default_channel.queue_declare(queue=queue,
                                                          passive=True).message_count)
        except Exception:  # noqa: BLE001 - not declared yet
            return 0


@pytest.mark.parametrize("broker", ["redis", pytest.param("amqp", marks=pytest.mark.skipif(
    not _amqp_up(), reason="no RabbitMQ on 127.0.0.1:5672"))])
def test_chunks_waiting_longer_than_a_lease_are_never_sent_twice(
        celery_app, store, queue, start_worker, rclient, broker) -> None:
    """Chunks that take over 3 leases each (lease 1.5 s, chunks of 1,500 games) on one worker
    process: the last ones wait in the queue many leases long. Nothing is sent again:
    every chunk is received and computed exactly once, the queue never holds more
    messages than the batch has chunks, and no sweep reports a lost chunk (it re-sent
    them at every sweep: 116 messages for 16 chunks on Redis, 107 deliveries for 14 on
    RabbitMQ)."""
    from rummy_worker.tasks import heal, submit

    lease = 1.5
    env = {"RUMMY_CHUNK_LEASE": str(lease), "RUMMY_SWEEP_INTERVAL": "0.5",
           "RUMMY_VISIBILITY_TIMEOUT": "3600", "RUMMY_KEY_PREFIX": store.prefix}
    if broker == "amqp":
        env["RUMMY_BROKER_URL"] = AMQP_URL
    w = start_worker(queue, concurrency=1, env=env)
    _wait_ready(w)
    # 3,000 random games take about 9 s on an idle core with the compiled modules (about
    # 17 s pure): twice 3 leases, so a faster machine still waits many leases (1,500 took
    # 4.5 s compiled, under the 4.5 s needed)
    spec = BatchSpec(games=15000, bots=BOTS, seed=23, chunk_size=3000)
    if broker == "redis":
        bid = submit(spec, store=store, queue=queue)
        key = f"{BROKER_PREFIX}{queue}"
        length = lambda: rclient.llen(key)  # noqa: E731
    else:
        bid = subprocess.run(
            [sys.executable, "-m", "rummy", "batch", "submit", "--games", "15000",
             "--players", "2", "--bots", "random,random", "--seed", "23", "--chunk-size",
             "3000", "--queue", queue], cwd=ROOT, env=worker_env(env), capture_output=True,
            text=True, timeout=120, check=True).stdout.strip()
        assert store.spec(bid) == spec
        length = lambda: _amqp_length(queue)  # noqa: E731
    longest = 0
    sent_by_us = []
    deadline = time.monotonic() + 400
    try:
        while not store.status(bid).complete:
            assert time.monotonic() < deadline, w.output()[-3000:]
            longest = max(longest, length())
            if broker == "redis":  # a waiting `batch status --wait` sweeps too
                sent_by_us += heal(store, grace=lease)
            time.sleep(0.25)
        meta = rclient.hgetall(f"{store.prefix}:batch:{{{bid}}}")
        mean = float(meta["busy_seconds"]) / int(meta["timed"])
        assert mean >= 3 * lease, f"chunks took {mean:.1f} s, not 3 leases: make them longer"
        time.sleep(2)  # any copy sent late would be received by now
        out = w.output()
        assert _outcomes(out) == {"stored": spec.chunks, "duplicate": 0, "skipped": 0}
        assert _received(out) == spec.chunks
        assert longest <= spec.chunks and length() == 0
        assert "sent again" not in out and sent_by_us == []
        assert batch_report(*store.merged(bid)) == _local(spec)
    finally:
        if broker == "amqp":
            from kombu import Connection

            w.stop()
            with Connection(AMQP_URL) as conn:
                conn.default_channel.queue_delete(queue)
    print(f"\n{broker}: {spec.chunks} chunks of {mean:.1f} s each (lease {lease:g} s): "
          f"{_received(out)} deliveries, longest queue {longest}, 0 duplicates")


# ------------------------------------------------------------ the broker restarted empty

@pytest.mark.chaos
@pytest.mark.parametrize("down", [0.0, 8.0])
def test_a_batch_heals_itself_after_its_broker_restarts_empty(
        tmp_path: Path, store: BatchStore, queue: str, start_worker, rclient,
        down: float) -> None:
    """A private broker redis-server (no persistence) is SIGKILLed mid-batch and started
    again on the same port, empty (at once, or after ``down`` seconds): the chunks queued
    and held were lost with it. The workers' sweeps send them again with no `rummy batch
    resume` (the batch waited at 59/60 until resumed), and the report equals `rummy
    simulate`'s."""
    port = free_port()
    broker = _private_redis(port)
    url = f"redis://127.0.0.1:{port}/0"
    env = {"RUMMY_BROKER_URL": url, "RUMMY_CHUNK_LEASE": "2", "RUMMY_SWEEP_INTERVAL": "1",
           "RUMMY_VISIBILITY_TIMEOUT": "3600", "RUMMY_KEY_PREFIX": store.prefix,
           "RUMMY_BROKER_KEYPREFIX": ""}
    procs = [broker]
    try:
        w = start_worker(queue, concurrency=2, env=env)
        _wait_ready(w)
        spec = BatchSpec(games=400, bots=BOTS, seed=31, chunk_size=20)
        sub = subprocess.run(
            [sys.executable, "-m", "rummy", "batch", "submit", "--games", "400",
             "--players", "2", "--bots", "random,random", "--seed", "31", "--chunk-size",
             "20", "--broker", url, "--state-url", REDIS_URL, "--prefix", store.prefix,
             "--queue", queue], cwd=ROOT, env=worker_env(env), capture_output=True,
            text=True, timeout=120, check=True)
        bid = sub.stdout.strip()
        assert store.spec(bid) == spec
        _wait_for(lambda: store.status(bid).done >= 3, 120, "progress")
        broker.kill()
        broker.wait()
        killed = time.monotonic()
        done_at_kill = store.status(bid).done
        assert done_at_kill < spec.chunks, "the batch finished before the kill"
        time.sleep(down)
        procs.append(_private_redis(port))  # empty: no persistence
        wait_complete(store, bid, timeout=240, workers=[w])
        took = time.monotonic() - killed
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert batch_report(*store.merged(bid)) == _local(spec)
    out = w.output()
    assert "sent again" in out
    lost = spec.chunks - done_at_kill
    print(f"\nbroker killed with {lost} of {spec.chunks} chunks left, down {down:g} s; the "
          f"batch completed by itself {took:.1f} s after the kill; outcomes {_outcomes(out)}")


# ------------------------------------------------------------ a chunk that keeps failing

@pytest.mark.chaos
def test_a_chunk_that_keeps_failing_is_given_up_with_back_off(
        celery_app, store, queue, start_worker) -> None:
    """Chunk 0 exceeds its soft time limit every time (400 games in 0.5 s); chunk 1 is one
    game. Chunk 0 is tried RUMMY_CHUNK_MAX_FAILURES = 3 times, each retry after a longer
    back-off, then given up: the batch ends as failed, `batch status` shows the error,
    and no sweep sends it again (it was sent again 14 times in 25 s)."""
    from rummy_worker.tasks import submit

    env = {"RUMMY_CHUNK_LEASE": "2", "RUMMY_SWEEP_INTERVAL": "0.5",
           "RUMMY_CHUNK_RETRY_BACKOFF": "1", "RUMMY_CHUNK_MAX_FAILURES": "3",
           "RUMMY_VISIBILITY_TIMEOUT": "3600", "RUMMY_KEY_PREFIX": store.prefix}
    w = start_worker(queue, concurrency=1, env=env)
    _wait_ready(w)
    spec = BatchSpec(games=401, bots=BOTS, seed=1, chunk_size=400)
    bid = submit(spec, store=store, queue=queue, soft_time_limit=0.5, time_limit=30)
    seen: dict[int, float] = {}
    deadline = time.monotonic() + 180
    while not store.status(bid, 3).failed:
        assert time.monotonic() < deadline, (store.status(bid, 3), w.output()[-3000:])
        count, at = store.failed_attempts(bid).get(0, (0, 0.0))
        seen.setdefault(count, at)
        time.sleep(0.05)
    st = store.status(bid, 3)
    assert st.done == 1 and st.given_up == (0,) and st.attempts == {0: 3}
    assert "soft time limit exceeded" in st.failures[0]
    time.sleep(6)  # several sweeps later: nothing more was sent
    out = w.output()
    assert out.count("SoftTimeLimitExceeded") >= 3
    assert _received(out) == 2 + 2  # chunks 0 and 1, then chunk 0's two retries
    assert store.failed_attempts(bid)[0][0] == 3
    times = [seen[k] for k in (1, 2, 3) if k in seen]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(g >= d for g, d in zip(gaps, (1.0, 2.0), strict=False)), gaps  # back-off
    env_cli = worker_env({"RUMMY_KEY_PREFIX": store.prefix})
    status = subprocess.run([sys.executable, "-m", "rummy", "batch", "status", bid],
                            cwd=ROOT, env=env_cli, capture_output=True, text=True,
                            timeout=120, check=False)
    assert "failed" in status.stdout and "given up after 3 failed attempts" in status.stdout
    assert "soft time limit exceeded" in status.stdout
    waited = subprocess.run([sys.executable, "-m", "rummy", "batch", "status", bid, "--wait",
                             "--json"], cwd=ROOT, env=env_cli, capture_output=True, text=True,
                            timeout=120, check=False)
    assert waited.returncode == 1
    doc = json.loads(waited.stdout)
    assert (doc["failed"], doc["given_up"], doc["attempts"]) == (True, [0], {"0": 3})
