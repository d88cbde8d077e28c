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
