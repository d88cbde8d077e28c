"""``rummy batch ab --sprt``: the paired scores the SPRT reads, and the command on a real
worker with a tester's own bot (``examples.my_bot:MyBot``, imported by the worker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rummy_worker.paired import Paired, slot_scores, width

from tests.workers.test_cli import _rummy, cli_worker  # noqa: F401 - the fixture


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
def test_batch_ab_sprt_stops_early_with_an_external_bot(cli_worker, tmp_path: Path) -> None:  # noqa: F811
    """Slot 0 is ``random`` under A and the example bot under B: the SPRT accepts H1
    (B at least 20 Elo stronger) well before the 600 games, and says how many it used."""
    env, _, _ = cli_worker
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
    assert doc["report"]["compare"]["games"] == sprt["games"]
    bad = _rummy("batch", "ab", "--games", "8", "--players", "2", "--compare-bots",
                 "nopkg.bots:Bot", "--sprt", "0,20", env=env, check=False)
    assert bad.returncode == 2 and "package 'nopkg'" in bad.stderr
    bad = _rummy("batch", "ab", "--games", "8", "--players", "2", "--compare-bots",
                 "random,random", "--sprt", "20,0", env=env, check=False)
    assert bad.returncode == 2 and "ELO0 < ELO1" in bad.stderr
