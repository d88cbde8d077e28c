"""End to end: real Celery worker processes, the real Redis broker and batch state.

A batch's report must equal ``BalanceReport.of(run_games(...))`` computed locally with the same
seed, for any chunk size and number of workers, and also after a worker is SIGKILLed mid-batch
(acks_late + reject_on_worker_lost + the broker's visibility timeout redeliver its chunks;
HSETNX keeps each chunk counted once).
"""

from __future__ import annotations

import os
import re
import signal
import time

import pytest
from rummy_worker.batches import ABReport, BatchSpec, batch_report

from rummy.balance import BalanceReport
from rummy.simulate import run_games
from tests.harness import HANG_GUARD
from tests.workers.helpers import BROKER_PREFIX, wait_complete

pytestmark = [pytest.mark.redis, pytest.mark.slow]

BOTS = ("random", "random")


def _local(spec: BatchSpec) -> dict:
    return BalanceReport.of(run_games(spec.bots, spec.seed, 0, spec.games, spec.ruleset(),
                                      spec.rotate))


def _submit(celery_app, store, spec: BatchSpec, queue: str, **limits: float) -> str:
    from rummy_worker.tasks import submit

    return submit(spec, store=store, queue=queue, **limits)


def test_batch_on_a_worker_equals_local_simulation(celery_app, store, queue, start_worker):
    w = start_worker(queue, concurrency=2)
    spec = BatchSpec(games=40, bots=BOTS, seed=2024, chunk_size=6)
    bid = _submit(celery_app, store, spec, queue)
    wait_complete(store, bid, workers=[w])
    got_spec, merged = store.merged(bid)
    assert merged.chunks == spec.chunks == 7
    assert batch_report(got_spec, merged) == _local(spec)


def test_same_seed_same_report_for_any_chunk_size_and_worker_count(
        celery_app, store, queue, start_worker):
    one = start_worker(queue + "-one", concurrency=1)
    two = [start_worker(queue + "-two", concurrency=1), start_worker(queue + "-two",
                                                                     concurrency=2)]
    reports = []
    for q, chunk in ((queue + "-one", 30), (queue + "-two", 4), (queue + "-two", 11)):
        spec = BatchSpec(games=30, bots=BOTS, seed=77, chunk_size=chunk)
        bid = _submit(celery_app, store, spec, q)
        wait_complete(store, bid, workers=[one, *two])
        reports.append(batch_report(*store.merged(bid)))
    assert reports[0] == reports[1] == reports[2] == _local(spec)


def test_ab_batch_on_workers(celery_app, store, queue, start_worker):
    w = start_worker(queue, concurrency=2)
    spec = BatchSpec(games=12, bots=("basic", "random"), seed=5, chunk_size=5,
                     compare_rules={"knock_threshold": 9}).validate()
    bid = _submit(celery_app, store, spec, queue)
    wait_complete(store, bid, workers=[w])
    rep = batch_report(*store.merged(bid))
    assert isinstance(rep, ABReport)
    assert rep.a == _local(spec)
    assert rep.b == BalanceReport.of(run_games(spec.bots, 5, 0, 12, spec.ruleset("b")))
    assert rep.compare["games"] == 12
    # every game-quality figure paired through the workers' chunk results, and the same
    # as the chunks computed here
    from rummy_worker.batches import merge_results
    from rummy_worker.chunks import compute_chunk

    local = batch_report(spec, merge_results(spec.players, [
        compute_chunk(spec, i) for i in range(spec.chunks)]))
    assert rep.compare["quality"] == local.compare["quality"]  # type: ignore[union-attr]
    assert {e["games"] for e in rep.compare["quality"]} == {12}


def _wait_progress(store, bid: str, at_least: int, timeout: float = HANG_GUARD) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = store.status(bid).done
        if done >= at_least:
            return done
        time.sleep(0.02)
    raise AssertionError(f"no progress on batch {bid}")


def test_sigkill_whole_worker_mid_batch_still_gives_exact_report(
        celery_app, store, queue, start_worker, rclient):
    """The worker and its pool die with SIGKILL while chunks run; a second worker picks up
    the queued chunks at once and the unacknowledged ones after the visibility timeout."""
    spec = BatchSpec(games=96, bots=BOTS, seed=9, chunk_size=6)
    first = start_worker(queue, concurrency=2)
    bid = _submit(celery_app, store, spec, queue)
    done = _wait_progress(store, bid, 2)
    first.kill(signal.SIGKILL)
    assert done < spec.chunks, "the batch finished before the kill: make chunks longer"
    # the dead worker held chunks it never acknowledged: only redelivery can finish them
    assert rclient.hlen(f"{BROKER_PREFIX}unacked") >= 1
    second = start_worker(queue, concurrency=2)
    wait_complete(store, bid, workers=[first, second])
    got_spec, merged = store.merged(bid)
    assert merged.chunks == spec.chunks and merged.a.games == 96
    assert batch_report(got_spec, merged) == _local(spec)


def test_a_batch_heals_itself_after_its_worker_is_killed(
        celery_app, store, queue, start_worker, rclient):
    """A whole worker SIGKILLed mid-batch with the broker's visibility timeout at
    an hour. Its chunks' leases lapse (no heartbeat) and the other worker's sweeper sends
    them again: the batch completes by itself, with no `resume`, long before the visibility
    timeout, and its report equals `rummy simulate`'s (every game counted once)."""
    healing = {"RUMMY_VISIBILITY_TIMEOUT": "3600", "RUMMY_CHUNK_LEASE": "3",
               "RUMMY_SWEEP_INTERVAL": "1", "RUMMY_KEY_PREFIX": store.prefix}
    spec = BatchSpec(games=96, bots=BOTS, seed=19, chunk_size=6)
    first = start_worker(queue, concurrency=2, env=healing)
    bid = _submit(celery_app, store, spec, queue)
    _wait_progress(store, bid, 2)
    # kill inside a chunk: poll until one holds its lease (chunks of 6 greedy games are short,
    # so one sample after the progress wait could fall between two chunks)
    leases = f"{store.prefix}:batch:{{{bid}}}:leases"
    deadline = time.monotonic() + HANG_GUARD
    while not (leased := rclient.hlen(leases)) and time.monotonic() < deadline:
        time.sleep(0.002)
    first.kill(signal.SIGKILL)
    done = store.status(bid).done
    killed = time.monotonic()
    assert done < spec.chunks, "the batch finished before the kill: make chunks longer"
    assert leased >= 1, "no chunk was being computed at the kill"
    second = start_worker(queue, concurrency=2, env=healing)
    wait_complete(store, bid, workers=[first, second])
    took = time.monotonic() - killed
    # healed by the lease sweeper, not by the broker: the dead worker's deliveries are still
    # unacknowledged, and the visibility timeout (3600 s) has not passed
    assert rclient.hlen(f"{BROKER_PREFIX}unacked") >= 1 and took < 3600
    got_spec, merged = store.merged(bid)
    assert merged.chunks == spec.chunks and merged.a.games == 96
    assert batch_report(got_spec, merged) == _local(spec)
    # by the sweeper: chunks it held lost their worker, or (when the killed worker's pool
    # processes finished the leased ones on a loaded machine) the chunks it had reserved
    # were lost by the broker; either way they were sent again without `resume`
    assert re.search(r"lost their worker; sent again|were queued but the broker's queue "
                     r"\S+ lost them .*; sent again", second.output()), second.output()[-3000:]
    print(f"\nworker SIGKILLed with {spec.chunks - done} chunks left: the batch completed "
          f"by itself {took:.1f} s later (visibility timeout 3600 s)")


def test_sigkill_pool_process_redelivers_its_chunk(celery_app, store, queue, start_worker,
                                                   rclient):
    """A pool process dies with SIGKILL mid-chunk: reject_on_worker_lost requeues the chunk
    and the same worker (a fresh pool process) completes the batch."""
    spec = BatchSpec(games=80, bots=BOTS, seed=10, chunk_size=20)
    w = start_worker(queue, concurrency=1)
    deadline = time.monotonic() + HANG_GUARD
    while not w.children() and time.monotonic() < deadline:
        time.sleep(0.05)
    bid = _submit(celery_app, store, spec, queue)
    _wait_progress(store, bid, 1)
    # kill inside a chunk: once the next one holds its lease (a kill between two chunks,
    # as a fixed sleep sometimes gave on a loaded machine, loses nothing to redeliver)
    leases = f"{store.prefix}:batch:{{{bid}}}:leases"
    deadline = time.monotonic() + HANG_GUARD
    while not rclient.hlen(leases) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert store.status(bid).done < spec.chunks, "the batch finished: make chunks longer"
    victims = w.children()
    assert victims
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    wait_complete(store, bid, workers=[w])
    assert "WorkerLostError" in w.output()  # the chunk did die with its process
    assert batch_report(*store.merged(bid)) == _local(spec)


def test_soft_time_limit_marks_the_chunk_failed(celery_app, store, queue, start_worker):
    """A chunk over its soft time limit is not retried forever: it is noted as failed (so
    `batch status --wait` stops) and the other chunks still complete."""
    w = start_worker(queue, concurrency=1)
    # chunk 0: 400 games (seconds), chunk 1: one game
    spec = BatchSpec(games=401, bots=BOTS, seed=1, chunk_size=400)
    bid = _submit(celery_app, store, spec, queue, soft_time_limit=0.5, time_limit=30)
    deadline = time.monotonic() + HANG_GUARD
    while time.monotonic() < deadline:
        st = store.status(bid)
        if 0 in st.failures and st.done == 1:
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"{store.status(bid)}\n{w.output()[-3000:]}")
    assert "soft time limit exceeded" in st.failures[0] and not st.complete
    assert store.missing_chunks(bid) == [0]
