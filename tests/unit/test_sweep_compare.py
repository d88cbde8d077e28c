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


def _figs(**kw: int) -> dict[str, int]:
    """One play's figures (rummy.paired_quality.game_figures keys), zero by default."""
    base = {"win:x": 0, "win:y": 0, "seat:0": 0, "seat:1": 0, "rounds": 1, "turns": 10,
            "lead_changes": 0, "comeback": 0, "from_behind": 0, "decided": 1, "capped": 0,
            "sampled": 0, "multi": 0, "plays": 0}
    return {**base, **{k.replace("_x", ":x").replace("_y", ":y").replace("seat", "seat:"):
                       v for k, v in kw.items()}}


def test_paired_compare_takes_differences_game_by_game() -> None:
    from rummy.quality import MARGIN_UNIT
    from rummy_cli.sweep import paired_compare

    win = MARGIN_UNIT
    # game 2 failed under the second value, so only games 0 and 1 pair
    base = {0: _figs(win_x=win, seat0=win, rounds=2, turns=30, lead_changes=1, decided=1),
            1: _figs(win_y=win, seat1=win, rounds=4, turns=40, decided=3),
            2: _figs(win_x=win, seat0=win, turns=10)}
    other = {0: _figs(win_x=win, seat0=win, rounds=2, turns=36, lead_changes=2, decided=2),
             1: _figs(win_x=win, seat0=win, rounds=3, turns=44, decided=3)}
    out = {e["metric"]: e for e in paired_compare(base, other, "v=1", "v=2")}
    assert list(out)[:5] == ["x win rate", "y win rate", "seat 0 win rate", "seat 1 win rate",
                             "skill trace (x over y)"]
    turns = out["turns per game"]  # differences 6 and 4: mean 5, sd sqrt(2)
    half = Z95 * math.sqrt(2) / math.sqrt(2)
    assert (turns["diff"], turns["games"], turns["unit"]) == (5.0, 2, "turns")
    assert (turns["low"], turns["high"]) == pytest.approx((5 - half, 5 + half))
    assert turns["verdict"] == ("turns per game: 5.00 turns higher under v=2 than under v=1 "
                                "(95% CI 3.04 to 6.96 turns)")
    x = out["x win rate"]  # differences 0 and 1
    assert x["diff"] == 0.5 and x["unit"] == "pp" and x["kind"] == "bot"
    # the margin x − y: +1 then −1 under v=1, +1 then +1 under v=2: differences 0 and 2
    skill = out["skill trace (x over y)"]
    assert skill["diff"] == pytest.approx(1.0) and skill["unit"] == "pp"
    # a ratio over the games by the delta method: decided / rounds is 4/6 then 5/5
    share = out["decided after (share of the game's rounds)"]
    assert share["diff"] == pytest.approx(1 - 4 / 6) and share["unit"] == "%"
    # per-game linearised differences +1/9 and −1/9: sd sqrt(2)/9, interval ±z/9
    assert (share["low"], share["high"]) == pytest.approx((1 / 3 - Z95 / 9, 1 / 3 + Z95 / 9))
    assert out["lead changes per game"]["diff"] == 0.5
    # no meld phase was sampled: the decision figures are left out, not shown as 0
    assert "meld phases with more than one play" not in out


def test_result_figures_read_a_real_game() -> None:
    from rummy.paired_quality import result_figures
    from rummy.quality import MARGIN_UNIT
    from rummy.simulate import game_seed, lineup_for, play_game

    bots = lineup_for(("strategic", "greedy", "strategic", "greedy"), 0)
    r = play_game(bots, game_seed(1, 0))
    assert r.winners == (1,) and r.rounds == 2  # seat 1 (greedy) won alone
    f = result_figures(r)
    assert f["win:greedy"] == MARGIN_UNIT // 2  # 1 win over its 2 seats
    assert f["win:strategic"] == 0
    assert [f[f"seat:{s}"] for s in range(4)] == [0, MARGIN_UNIT, 0, 0]
    assert (f["rounds"], f["turns"], f["lead_changes"]) == (2, sum(r.turns), 0)
    assert f["decided"] == 1 and f["from_behind"] == 0  # seat 1 led throughout
    counted = [p for p in r.plays if p >= 0]
    assert (f["sampled"], f["plays"]) == (len(counted), sum(counted))
