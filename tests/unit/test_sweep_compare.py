"""The sweep's comparison of values: unpaired differences with verdicts, and the
`rummy batch ab` command that measures them paired."""

from __future__ import annotations

import math

import pytest

from rummy.balance import BalanceReport
from rummy.rules import RuleSet
from rummy.simulate import play_range
from rummy.stats import Z95
from rummy_cli.sweep import ab_command, parse_sweep, sweep_document, unpaired_diff


def test_unpaired_difference_adds_the_variances_read_off_each_interval() -> None:
    a = {"value": 0.5, "low": 0.4, "high": 0.6}
    b = {"value": 0.6, "low": 0.5, "high": 0.7}
    e = unpaired_diff(a, b)
    assert e is not None
    half = Z95 * math.sqrt(0.2 ** 2 + 0.2 ** 2) / (2 * Z95)  # = 0.1414
    assert (e["diff"], e["low"], e["high"]) == pytest.approx((0.1, 0.1 - half, 0.1 + half))
    assert unpaired_diff(a, None) is None
    assert unpaired_diff(a, {"value": 0.7, "low": None, "high": None}) == pytest.approx(
        {"diff": 0.2, "low": None, "high": None})


def test_each_value_is_compared_with_the_first_and_names_the_ab_command() -> None:
    combos = parse_sweep(["knock_threshold=0,5,10"])
    bots = ["greedy", "random"]
    reports = [BalanceReport.of(play_range(bots, 3, 0, 4, RuleSet.from_dict(c)))
               for c in combos]
    doc = sweep_document(combos, reports, games=4, players=2, seed=3, bots=bots, seconds=0)
    assert [(c["a"], c["b"]) for c in doc["compare"]] == [
        ("knock_threshold=0", "knock_threshold=5"), ("knock_threshold=0", "knock_threshold=10")]
    assert doc["compare"][1]["command"] == ab_command(doc, 0, 2) == (
        "rummy batch ab --games 4 --players 2 --bots greedy,random --seed 3 "
        "--rules knock_threshold=0 --compare-rules knock_threshold=10 --wait --html ab.html")
    turns = next(e for e in doc["compare"][0]["diffs"] if e["metric"] == "turns per game")
    qa, qb = doc["sweep"][0]["quality"]["turns"], doc["sweep"][1]["quality"]["turns"]
    assert turns["diff"] == pytest.approx(qb["value"] - qa["value"])
    assert turns["verdict"].startswith("turns per game: ")
    assert "knock_threshold=5" in turns["verdict"] or "no detectable change" in turns["verdict"]


def test_paired_compare_takes_differences_game_by_game() -> None:
    from rummy_cli.sweep import paired_compare

    # rows: [x win, y win, seat 0, seat 1, rounds, turns, lead changes]; game 2 failed in
    # the second value, so only games 0 and 1 pair
    base = {0: [1.0, 0.0, 1.0, 0.0, 2.0, 30.0, 1.0], 1: [0.0, 1.0, 0.0, 1.0, 3.0, 40.0, 0.0],
            2: [1.0, 0.0, 1.0, 0.0, 1.0, 10.0, 0.0]}
    other = {0: [1.0, 0.0, 1.0, 0.0, 3.0, 36.0, 2.0], 1: [1.0, 0.0, 1.0, 0.0, 3.0, 44.0, 0.0]}
    out = {e["metric"]: e for e in paired_compare(base, other, ["x", "y"], 2)}
    assert list(out) == ["x win rate", "y win rate", "seat 0 win rate", "seat 1 win rate",
                         "rounds per game", "turns per game", "lead changes per game"]
    turns = out["turns per game"]  # differences 6 and 4: mean 5, sd sqrt(2)
    half = Z95 * math.sqrt(2) / math.sqrt(2)
    assert (turns["diff"], turns["games"], turns["unit"]) == (5.0, 2, "turns")
    assert (turns["low"], turns["high"]) == pytest.approx((5 - half, 5 + half))
    x = out["x win rate"]  # differences 0 and 1
    assert x["diff"] == 0.5 and x["unit"] == "pp"


def test_game_row_reads_a_real_game() -> None:
    from rummy.simulate import game_seed, lineup_for, play_game
    from rummy_cli.sweep import game_row

    bots = lineup_for(("strategic", "greedy", "strategic", "greedy"), 0)
    r = play_game(bots, game_seed(1, 0))
    assert r.winners == (1,) and r.rounds == 2  # seat 1 (greedy) won alone
    row = game_row(r, ["greedy", "strategic"])
    assert row[:2] == [0.5, 0.0]  # greedy: 1 win over its 2 seats
    assert row[2:6] == [0.0, 1.0, 0.0, 0.0]
    assert row[6:] == [2.0, float(sum(r.turns)), 0.0]  # seat 1 led throughout
