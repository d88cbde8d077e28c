"""Chunks are run_games: same seeds, same aggregates, for any chunking (no Redis, no Celery)."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rummy_worker.batches import ABReport, BatchSpec, batch_report, expand_bots, merge_results
from rummy_worker.chunks import compute_chunk, play_indexed, should_record
from rummy_worker.paired import Paired, game_vector

from rummy.balance import BalanceReport
from rummy.simulate import WIN_UNIT, Aggregate, game_seed, lineup_for, play_game, run_games

BOTS2 = ("random", "random")


def test_chunk_equals_run_games() -> None:
    spec = BatchSpec(games=23, bots=("random", "basic"), seed=5, chunk_size=10)
    for i in range(spec.chunks):
        start, stop = spec.chunk_range(i)
        got = compute_chunk(spec, i)
        assert (got["start"], got["stop"]) == (start, stop)
        assert got["a"] == run_games(spec.bots, 5, start, stop).to_dict()
        assert "b" not in got and "paired" not in got


def test_chunk_result_is_json_and_deterministic() -> None:
    spec = BatchSpec(games=6, bots=BOTS2, seed=1, chunk_size=6, compare_rules={"hand_size": 8})
    a = compute_chunk(spec, 0)
    assert json.loads(json.dumps(a)) == a
    assert compute_chunk(spec, 0) == a


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 9), st.integers(0, 2**40))
def test_any_chunk_size_gives_the_local_report(chunk_size: int, seed: int) -> None:
    games = 9
    spec = BatchSpec(games=games, bots=BOTS2, seed=seed, chunk_size=chunk_size)
    results = [compute_chunk(spec, i) for i in range(spec.chunks)]
    random.Random(seed).shuffle(results)  # merge order does not matter
    local = BalanceReport.of(run_games(BOTS2, seed, 0, games))
    assert batch_report(spec, merge_results(2, results)) == local


def test_ab_variants_equal_separate_runs() -> None:
    spec = BatchSpec(games=12, bots=("basic", "random"), seed=3, chunk_size=5,
                     compare_bots=("random", "random"), compare_rules={"knock_threshold": 9})
    spec.validate()
    merged = merge_results(2, [compute_chunk(spec, i) for i in range(spec.chunks)])
    assert merged.a == run_games(spec.bots, 3, 0, 12, spec.ruleset("a"))
    assert merged.b == run_games(("random", "random"), 3, 0, 12, spec.ruleset("b"))
    rep = batch_report(spec, merged)
    assert isinstance(rep, ABReport)
    assert rep.a == BalanceReport.of(merged.a) and rep.b == BalanceReport.of(merged.b)
    assert rep.compare["games"] == 12


def test_ab_paired_stats_match_brute_force() -> None:
    """The paired CI of slot 0's win-rate difference equals a direct computation over the
    per-game differences (mean ± 1.96·sd/√N)."""
    spec = BatchSpec(games=16, bots=("basic", "random"), seed=8, chunk_size=16,
                     compare_bots=("random", "basic")).validate()
    merged = merge_results(2, [compute_chunk(spec, 0)])
    diffs = []
    for i in range(16):
        ra = play_indexed(spec, i, "a")
        rb = play_indexed(spec, i, "b")
        k = i % 2
        seat_a = (0 + k) % 2  # slot 0 sits at seat (0 + k) % n
        wa = (WIN_UNIT // len(ra.winners)) if seat_a in ra.winners else 0
        wb = (WIN_UNIT // len(rb.winners)) if seat_a in rb.winners else 0
        diffs.append((wa - wb) / WIN_UNIT)
    mean = sum(diffs) / 16
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 15)
    rep = batch_report(spec, merged)
    assert isinstance(rep, ABReport)
    e = rep.compare["slot_win_rate"][0]
    assert e["diff"] == pytest.approx(mean)
    assert e["low"] == pytest.approx(mean - 1.959963984540054 * sd / 4)
    assert e["high"] == pytest.approx(mean + 1.959963984540054 * sd / 4)
    assert (e["bot_a"], e["bot_b"]) == ("basic", "random")


def test_identical_variants_have_zero_difference() -> None:
    spec = BatchSpec(games=8, bots=BOTS2, seed=2, chunk_size=3, compare_rules={}).validate()
    rep = batch_report(spec, merge_results(2, [compute_chunk(spec, i)
                                               for i in range(spec.chunks)]))
    assert isinstance(rep, ABReport)
    cmp = rep.compare
    for e in cmp["seat_win_rate"] + cmp["slot_win_rate"]:
        assert (e["diff"], e["low"], e["high"]) == (0.0, 0.0, 0.0)
    assert cmp["turns_per_round"]["diff"] == 0.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(0, 60), min_size=12, max_size=12), min_size=1,
                max_size=8), st.integers(1, 7))
def test_paired_merge_is_exact_for_any_split(rows: list[list[int]], cut: int) -> None:
    whole = Paired.empty(2)
    for r in rows:
        whole = whole.merge(Paired.of_vector(2, r))
    left, right = Paired.empty(2), Paired.empty(2)
    for r in rows[:cut]:
        left = left.merge(Paired.of_vector(2, r))
    for r in rows[cut:]:
        right = right.merge(Paired.of_vector(2, r))
    assert right.merge(left) == whole
    assert Paired.from_dict(json.loads(json.dumps(whole.to_dict()))) == whole


def test_game_vector_layout() -> None:
    r = play_game(("basic", "random"), game_seed(4, 1))
    v = game_vector(r, r, 1)
    assert len(v) == 2 * (2 * 2 + 2)
    assert v[:6] == v[6:]
    assert v[4:6] == [r.rounds, sum(r.turns)]
    assert sum(v[0:2]) == sum(v[2:4]) <= WIN_UNIT


def test_play_indexed_is_the_batch_game() -> None:
    spec = BatchSpec(games=5, bots=("basic", "random"), seed=9, chunk_size=5)
    agg = Aggregate.empty(2)
    for i in range(5):
        r = play_indexed(spec, i, record=True)
        assert r.bots == lineup_for(spec.bots, i) and r.seed == game_seed(9, i)
        assert r.events
        agg = agg.merge(Aggregate.of_game(r))
    assert agg.to_dict() == compute_chunk(spec, 0)["a"]
    with pytest.raises(IndexError):
        play_indexed(spec, 5)


def test_recorder_gets_every_kth_game() -> None:
    spec = BatchSpec(games=7, bots=BOTS2, seed=1, chunk_size=7, record_every=3)
    seen: list[tuple[int, str, int]] = []
    compute_chunk(spec, 0, recorder=lambda i, v, r: seen.append((i, v, len(r.events))))
    assert [(i, v) for i, v, _ in seen] == [(0, "a"), (3, "a"), (6, "a")]
    assert all(n > 0 for _, _, n in seen)
    assert [should_record(spec, i) for i in range(4)] == [True, False, False, True]


def test_on_game_hook_sees_every_game() -> None:
    spec = BatchSpec(games=4, bots=BOTS2, seed=1, chunk_size=4)
    seconds: list[float] = []
    compute_chunk(spec, 0, on_game=lambda r, s: seconds.append(s))
    assert len(seconds) == 4 and all(s > 0 for s in seconds)


@pytest.mark.parametrize(("spec", "message"), [
    (BatchSpec(games=0, bots=BOTS2, seed=1), "games"),
    (BatchSpec(games=5, bots=("random", "nobody"), seed=1), "unknown bot"),
    (BatchSpec(games=5, bots=("random",), seed=1), "2 to 5 players"),
    (BatchSpec(games=5, bots=BOTS2, seed=1, chunk_size=0), "chunk size"),
    (BatchSpec(games=5, bots=BOTS2, seed=1, rules={"no_such_rule": 1}), "no_such_rule"),
    (BatchSpec(games=5, bots=BOTS2, seed=1, compare_bots=("random",) * 3), "same number"),
    (BatchSpec(games=10**9, bots=BOTS2, seed=1, chunk_size=1), "chunks"),
])
def test_invalid_specs_are_refused(spec: BatchSpec, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        spec.validate()


def test_spec_round_trips_through_json() -> None:
    spec = BatchSpec(games=5, bots=BOTS2, seed=-3, rules={"hand_size": 7}, chunk_size=2,
                     rotate=False, record_every=2, compare_bots=("basic", "random"),
                     compare_rules={"knock_threshold": 7})
    assert BatchSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


def test_expand_bots_cycles_like_rummy_simulate() -> None:
    assert expand_bots(["basic", "random"], 4) == ("basic", "random", "basic", "random")
    assert expand_bots(["random"], 3) == ("random",) * 3
    with pytest.raises(ValueError):
        expand_bots(["a", "b", "c"], 2)


def test_a_failing_bot_is_a_failed_game_not_a_lost_chunk(monkeypatch) -> None:
    # on Celery, a game whose bot raises is recorded as failed (index and error)
    from rummy.bots import BOTS
    from tests.unit.test_failed_games import CrashyBot

    monkeypatch.setitem(BOTS, "crashy", CrashyBot)
    spec = BatchSpec(games=12, bots=("crashy", "random"), seed=11, chunk_size=12)
    got = compute_chunk(spec, 0)
    local = run_games(spec.bots, 11, 0, 12)
    assert local.failed and got["a"] == local.to_dict()
    assert got["a"]["failed"] == {str(i): "RuntimeError: no room to park a wildcard"
                                  for i in sorted(local.failed)}
    ab = BatchSpec(games=12, bots=("crashy", "random"), seed=11, chunk_size=12,
                   compare_bots=("random", "random"))
    got = compute_chunk(ab, 0)
    assert got["a"]["failed"] and not got["b"]["failed"]
    assert got["paired"]["games"] == 12 - len(got["a"]["failed"])
    rep = batch_report(ab, merge_results(2, [got]))
    assert isinstance(rep, ABReport)
    assert [i for i, _ in rep.a.failed_games] == sorted(local.failed)
