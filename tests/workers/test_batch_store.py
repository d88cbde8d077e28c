"""Batch state in the real Redis: chunk results stored once (HSETNX), merged exactly."""

from __future__ import annotations

import time

import pytest
from billiard.exceptions import TimeLimitExceeded
from rummy_worker.batches import BatchSpec, UnknownBatch, batch_report
from rummy_worker.chunks import compute_chunk

from rummy.balance import BalanceReport
from rummy.simulate import run_games

pytestmark = pytest.mark.redis

SPEC = BatchSpec(games=20, bots=("random", "random"), seed=42, chunk_size=6)


def test_chunk_stored_twice_is_counted_once(store) -> None:
    """Redelivery after a worker died: the second result of a chunk is not counted."""
    bid = store.create(SPEC)
    results = [compute_chunk(SPEC, i) for i in range(SPEC.chunks)]
    assert [store.put_chunk(bid, i, r) for i, r in enumerate(results)] == [True] * 4
    assert store.put_chunk(bid, 2, results[2]) is False  # a redelivered chunk
    assert store.put_chunk(bid, 0, results[0]) is False
    spec, merged = store.merged(bid)
    assert spec == SPEC and merged.chunks == 4 and merged.a.games == 20
    assert batch_report(spec, merged) == BalanceReport.of(run_games(SPEC.bots, 42, 0, 20))


def test_status_and_missing_chunks(store) -> None:
    bid = store.create(SPEC)
    st = store.status(bid)
    assert (st.chunks, st.done, st.complete, st.failures) == (4, 0, False, {})
    store.put_chunk(bid, 1, compute_chunk(SPEC, 1))
    store.record_failure(bid, 3, "ValueError: boom")
    st = store.status(bid)
    assert (st.done, st.failures) == (1, {3: "ValueError: boom"})
    assert store.missing_chunks(bid) == [0, 2, 3]
    store.put_chunk(bid, 3, compute_chunk(SPEC, 3))  # a later success clears the failure
    assert store.status(bid).failures == {}
    assert bid in store.recent()


def test_partial_merge_counts_only_stored_chunks(store) -> None:
    bid = store.create(SPEC)
    store.put_chunk(bid, 0, compute_chunk(SPEC, 0))
    _, merged = store.merged(bid)
    assert merged.a == run_games(SPEC.bots, 42, 0, 6)


def test_unknown_batch(store) -> None:
    with pytest.raises(UnknownBatch):
        store.spec("nope")
    with pytest.raises(UnknownBatch):
        store.status("nope")


def test_create_refuses_invalid_spec_and_existing_id(store) -> None:
    with pytest.raises(ValueError):
        store.create(BatchSpec(games=0, bots=("random", "random"), seed=1))
    store.create(SPEC, "fixed")
    with pytest.raises(ValueError, match="exists"):
        store.create(SPEC, "fixed")
    with pytest.raises(ValueError, match="bad batch id"):
        store.create(SPEC, "a{b}")
    store.delete("fixed")
    with pytest.raises(UnknownBatch):
        store.spec("fixed")


def test_hard_time_limit_is_noted_by_on_failure(store, monkeypatch) -> None:
    """A hard limit kills the pool process; the main process's ``on_failure`` notes it."""
    from billiard.exceptions import TimeLimitExceeded
    from rummy_worker import tasks

    monkeypatch.setattr(tasks, "state_client", lambda: store.r)
    bid = store.create(SPEC)
    tasks.run_chunk.on_failure(TimeLimitExceeded(960), "tid", (bid, 2, SPEC.to_dict(),
                                                                store.prefix), {}, None)
    tasks.run_chunk.on_failure(ValueError("noted by the task body"), "tid",
                               (bid, 3, SPEC.to_dict(), store.prefix), {}, None)
    assert store.status(bid).failures == {2: "hard time limit exceeded (960 s)"}


def test_soft_limit_must_be_below_hard_limit(store) -> None:
    from rummy_worker.tasks import submit

    with pytest.raises(ValueError, match="soft time limit"):
        submit(SPEC, store=store, queue="never-used", soft_time_limit=10, time_limit=5)


# -- a chunk task's arguments are checked against the submitted batch (attack finding) --


@pytest.mark.parametrize("make_args, message", [
    (lambda bid: ("bX", 0, {"games": 2, "bots": ["random"] * 6, "seed": 1,
                            "rules": {"target_score": "30"}}),
     "a chunk task for a batch never submitted"),
    (lambda bid: (bid, 4, SPEC.to_dict()), "has chunks 0..3, got 4"),
    (lambda bid: (bid, -1, SPEC.to_dict()), "has chunks 0..3, got -1"),
    (lambda bid: (bid, True, SPEC.to_dict()), "has chunks 0..3, got True"),
])
def test_a_task_for_no_chunk_of_a_batch_plays_and_stores_nothing(
        store, monkeypatch, make_args, message) -> None:
    from rummy_worker import tasks

    monkeypatch.setattr(tasks, "state_client", lambda: store.r)
    bid = store.create(SPEC)
    before = sorted(store.r.scan_iter(match=f"{store.prefix}:*"))
    result = tasks.run_chunk.apply(args=(*make_args(bid), store.prefix))
    with pytest.raises(tasks.BadChunk, match=message):
        result.get(propagate=True)
    assert sorted(store.r.scan_iter(match=f"{store.prefix}:*")) == before
    assert store.status(bid).done == 0 and store.status(bid).failures == {}


@pytest.mark.parametrize("spec, message", [
    ({**SPEC.to_dict(), "rules": {"target_score": "30"}},
     "differs from the batch's submitted spec"),
    ({**SPEC.to_dict(), "games": -1}, "differs from the batch's submitted spec"),
    ({**SPEC.to_dict(), "seed": 42.0}, "differs from the batch's submitted spec"),
    ({**SPEC.to_dict(), "extra": 1}, "differs from the batch's submitted spec"),
    ({**SPEC.to_dict(), "extra": "x" * (8 << 20)}, "more than a batch spec's 65536"),
    ({"games": 2}, "differs from the batch's submitted spec"),
    ("not a spec", "is not a batch spec"),
])
@pytest.mark.parametrize("finished", [False, True])
def test_a_chunk_task_with_a_wrong_spec_plays_and_writes_nothing(
        store, monkeypatch, spec, message, finished) -> None:
    """A task whose spec is not exactly the batch's (an extra key, an 8 MB spec, another
    JSON type) is refused, and writes nothing into the batch, finished or not: a forged
    task noted 'BadChunk' in someone else's failures (attack finding)."""
    from rummy_worker import tasks

    monkeypatch.setattr(tasks, "state_client", lambda: store.r)
    bid = store.create(SPEC)
    if finished:
        for i in range(SPEC.chunks):
            store.put_chunk(bid, i, compute_chunk(SPEC, i))
    before = {k: store.r.dump(k) for k in store.r.scan_iter(match=f"{store.prefix}:*")}
    with pytest.raises(tasks.BadChunk, match=message):
        tasks.run_chunk.apply(args=(bid, 1, spec, store.prefix)).get(propagate=True)
    tasks.run_chunk.on_failure(TimeLimitExceeded(0.002), "tid", (bid, 1, spec, store.prefix),
                               {}, None)
    after = {k: store.r.dump(k) for k in store.r.scan_iter(match=f"{store.prefix}:*")}
    assert after == before
    assert store.status(bid).failures == {}


def test_the_worker_leases_only_chunks_of_submitted_batches(store, monkeypatch) -> None:
    from types import SimpleNamespace

    from rummy_worker import celery_app, tasks

    monkeypatch.setattr(celery_app, "state_client", lambda: store.r)
    monkeypatch.setattr(celery_app, "_reserved", {})
    bid = store.create(SPEC)
    store.mark_queued(bid, [1, 2])
    wrong = {**SPEC.to_dict(), "extra": 1}
    for n, (args, spec) in enumerate(((("nope123", 0), SPEC.to_dict()),
                                      ((bid, 10**6), SPEC.to_dict()),
                                      ((bid, -1), SPEC.to_dict()),
                                      ((bid, 1), wrong), ((bid, 2), SPEC.to_dict()))):
        celery_app._on_received(SimpleNamespace(name=tasks.TASK_NAME, id=f"t{n}",
                                                args=[*args, spec, store.prefix],
                                                kwargs={}))
    assert list(celery_app._reserved) == ["t4"]
    assert store.r.hkeys(f"{store.prefix}:batch:{{{bid}}}:leases") == ["2"]
    assert store.queued_marks(bid).keys() == {1}  # the forged copy left chunk 1's mark
    assert not list(store.r.scan_iter(match=f"{store.prefix}:batch:{{nope123}}*"))
    celery_app._reserved["t4"].received -= 5  # Celery no longer holds request t4
    celery_app._keep_leases()
    assert celery_app._reserved == {}


def test_a_hard_time_limit_of_a_task_for_no_batch_notes_nothing(store, monkeypatch) -> None:
    from billiard.exceptions import TimeLimitExceeded
    from rummy_worker import tasks

    monkeypatch.setattr(tasks, "state_client", lambda: store.r)
    tasks.run_chunk.on_failure(TimeLimitExceeded(0.002), "tid",
                               ("nope456", 0, SPEC.to_dict(), store.prefix), {}, None)
    assert not list(store.r.scan_iter(match=f"{store.prefix}:*"))


def test_a_chunk_of_a_batch_whose_stored_spec_does_not_validate_is_refused(
        store, monkeypatch) -> None:
    import json

    from rummy_worker import tasks

    monkeypatch.setattr(tasks, "state_client", lambda: store.r)
    bid = store.create(SPEC)
    bad = {**SPEC.to_dict(), "bots": ["nope", "random"]}
    store.r.hset(store._meta(bid), "spec", json.dumps(bad))
    with pytest.raises(tasks.BadChunk, match="not playable: unknown bot 'nope'"):
        tasks.run_chunk.apply(args=(bid, 0, bad, store.prefix)).get(propagate=True)


@pytest.mark.parametrize("changes, message", [
    ({"rules": {"target_score": "30"}}, "got the string '30'"),
    ({"rules": {"round_bonus_for_all": "true"}}, "got the string 'true'"),
    ({"compare_rules": {"knock_threshold": "7"}, "compare_bots": ("random", "random")},
     "got the string '7'"),
    ({"chunk_size": True}, "chunk size must be a positive integer"),
    ({"rotate": 1}, "rotate must be true or false"),
])
def test_a_batch_spec_takes_json_types(changes, message) -> None:
    import dataclasses

    with pytest.raises(ValueError, match=message):
        dataclasses.replace(SPEC, **changes).validate()


# -- where a chunk is: queued, leased, stored, failed; sweeps send only lost chunks ------


def test_a_failed_chunk_is_retried_after_its_back_off_and_given_up(store) -> None:
    from rummy_worker.batches import RetryPolicy

    retry = RetryPolicy(max_failures=3, backoff=0.3)
    bid = store.create(SPEC)
    for i in (1, 2, 3):
        store.put_chunk(bid, i, compute_chunk(SPEC, i))
    assert store.claim_unmarked(bid, patience=3600, retry=retry) == []  # never failed
    assert store.record_failure(bid, 0, "ValueError: boom") == 1
    assert store.claim_unmarked(bid, patience=3600, retry=retry) == []  # in its back-off
    time.sleep(0.35)
    assert store.claim_unmarked(bid, patience=3600, retry=retry) == [0]
    assert store.claim_unmarked(bid, patience=3600, retry=retry) == []  # claimed: marked
    store.receive(bid, 0, 60)
    store.drop_lease(bid, 0)
    assert store.record_failure(bid, 0, "ValueError: boom") == 2
    time.sleep(0.35)
    assert store.claim_unmarked(bid, patience=3600, retry=retry) == []  # 0.6 s now
    time.sleep(0.3)
    assert store.claim_unmarked(bid, patience=3600, retry=retry) == [0]
    store.receive(bid, 0, 60)
    store.drop_lease(bid, 0)
    assert store.record_failure(bid, 0, "ValueError: boom") == 3
    st = store.status(bid, 3)
    assert (st.given_up, st.attempts, st.failed, st.complete) == ((0,), {0: 3}, True, False)
    time.sleep(1.3)
    assert store.claim_unmarked(bid, patience=0, retry=retry) == []  # given up for good
    store.take_lease(bid, 0, -1)  # a lapsed lease does not bring it back either
    assert store.claim_stalled(bid, retry) == []
    store.reset_failures(bid, [0])  # `rummy batch resume`
    assert store.status(bid, 3).given_up == ()


def test_a_sweep_resends_queued_chunks_only_when_the_broker_lost_them(
        celery_app, store, monkeypatch) -> None:
    from rummy_worker import config, tasks

    monkeypatch.setattr(tasks, "state_client", lambda: store.r)
    monkeypatch.setattr(config, "sweep_interval", lambda: 0.2)
    bid = store.create(SPEC)
    store.set_queue(bid, f"{store.prefix}-never-consumed")
    store.mark_queued(bid, [0, 1, 2, 3])
    store.r.hset(store._queued(bid), mapping={str(i): repr(time.time() - 60)
                                              for i in range(4)})
    sweeper = tasks.Sweeper()
    sent = []
    for _ in range(3):  # the broker holds all four: waiting, never lost
        sent += sweeper.heal(store, grace=1, queue_size=lambda q: 4)
        time.sleep(0.25)
    store.receive(bid, 3, 60)  # a worker took chunk 3
    for _ in range(3):
        sent += sweeper.heal(store, grace=1, queue_size=lambda q: 3)
        time.sleep(0.25)
    assert sent == []
    # the broker restarted empty: the first sweep suspects, the next one sends
    assert sweeper.heal(store, grace=1, queue_size=lambda q: 0) == []
    store.receive(bid, 2, 60)  # taken meanwhile: no longer a suspect
    time.sleep(0.25)
    assert sorted(sweeper.heal(store, grace=1, queue_size=lambda q: 0)) == [(bid, 0), (bid, 1)]
    assert set(store.queued_marks(bid)) == {0, 1}  # sent again, marked anew
    assert sweeper.heal(store, grace=1, queue_size=lambda q: 0) == []  # marks are young
