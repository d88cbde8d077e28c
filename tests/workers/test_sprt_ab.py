"""``rummy batch ab --sprt``: the paired scores the SPRT reads, and the command on a real
worker with a tester's own bot (``examples.my_bot:MyBot``, imported by the worker)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from rummy_worker.paired import Paired, slot_scores, width

from tests.workers.test_cli import _rummy, cli_worker  # noqa: F401 - the fixture


def test_stop_marks_a_batch(store: Any) -> None:
    from rummy_worker.batches import BatchSpec, UnknownBatch

    batch_id = store.create(BatchSpec(games=4, bots=("basic", "random"), seed=1))
    assert store.status(batch_id).stopped == "" and store.stopped(batch_id) == ""
    store.stop(batch_id, "SPRT accepted H0 after 40 games")
    assert store.status(batch_id).stopped == "SPRT accepted H0 after 40 games"
    with pytest.raises(UnknownBatch):
        store.stop("no-such-batch", "x")
    with pytest.raises(ValueError, match="reason"):
        store.stop(batch_id, "")
    from rummy_worker.tasks import heal

    # no chunk was ever sent: a sweep would send them all, but not for a stopped batch
    assert heal(store, grace=0.0) == []
    assert store.missing_chunks(batch_id) == [0]


def test_slot_scores_from_the_exact_sums() -> None:
    n = 2
    # vector per variant: seat wins, slot wins, rounds, turns (rotate=False: slot = seat)
    games = [([60, 0], [0, 60]),   # A's slot 0 won, B's lost: x = 0
             ([0, 60], [60, 0]),   # x = 1
             ([60, 0], [60, 0]),   # both won: x = 1/2
             ([30, 30], [60, 0])]  # shared under A: x = (1 + 30/60) / 2 = 3/4
    p = Paired.empty(n)
    for a, b in games:
        v = a + a + [1, 5] + b + b + [1, 5]
        assert len(v) == 2 * width(n)
        p = p.merge(Paired.of_vector(n, v))
    xs = [0.0, 1.0, 0.5, 0.75]
    g, total, total_sq = slot_scores(p, 0)
    assert g == 4
    assert total == pytest.approx(sum(xs))
    assert total_sq == pytest.approx(sum(x * x for x in xs))
    g, total, _ = slot_scores(p, 1)  # slot 1: 1, 0, 1/2, 1/4
    assert total == pytest.approx(1.75)
    with pytest.raises(ValueError, match="slot 2"):
        slot_scores(p, 2)


@pytest.mark.redis
@pytest.mark.slow
def test_batch_ab_sprt_stops_early_with_an_external_bot(cli_worker, store: Any,  # noqa: F811
                                                        tmp_path: Path) -> None:
    """Slot 0 is ``random`` under A and the example bot under B: the SPRT accepts H1
    (B at least 20 Elo stronger) well before the 600 games, says how many it used, and
    stops the batch: the worker skips the chunks it had not started."""
    env, _, log = cli_worker
    out = tmp_path / "ab.json"
    sub = _rummy("batch", "ab", "--games", "600", "--players", "2", "--bots", "random,random",
                 "--compare-bots", "examples.my_bot:MyBot,random", "--seed", "5",
                 "--chunk-size", "10", "--sprt", "0,20", "--json", str(out), env=env, check=False)
    assert sub.returncode == 0, sub.stdout[-3000:] + sub.stderr[-3000:]
    line = next(x for x in sub.stdout.splitlines() if x.startswith("SPRT"))
    assert "H1 accepted" in line, sub.stdout + sub.stderr
    doc = json.loads(out.read_text())
    sprt = doc["sprt"]
    assert sprt["decision"] == "H1" and sprt["llr"] >= sprt["upper"]
    assert sprt["upper"] == pytest.approx(2.944438979166)
    assert 0 < sprt["games"] < 600 and sprt["games"] % 10 == 0
    assert doc["report"]["compare"]["games"] >= sprt["games"]  # + chunks still running
    # the batch is stopped: the worker skips the chunks not started
    batch_id = sub.stdout.splitlines()[0].strip()
    assert store.status(batch_id).stopped == f"SPRT accepted H1 after {sprt['games']} games"
    done, still = -1, 0
    for _ in range(600):  # hang guard: until nothing ran for 3 s and no chunk is leased
        now = store.status(batch_id).done
        still = still + 1 if now == done and not store.live_leases(batch_id) else 0
        done = now
        if still >= 30:
            break
        time.sleep(0.1)
    assert done < 60
    assert "'outcome': 'skipped'" in log.read_text()
    status = _rummy("batch", "status", batch_id, "--wait", "--timeout", "60", env=env)
    assert f"{done}/60 chunks (stopped: SPRT accepted H1" in status.stdout
    bad = _rummy("batch", "ab", "--games", "8", "--players", "2", "--compare-bots",
                 "nopkg.bots:Bot", "--sprt", "0,20", env=env, check=False)
    assert bad.returncode == 2 and "package 'nopkg'" in bad.stderr
    bad = _rummy("batch", "ab", "--games", "8", "--players", "2", "--compare-bots",
                 "random,random", "--sprt", "20,0", env=env, check=False)
    assert bad.returncode == 2 and "ELO0 < ELO1" in bad.stderr
