"""Statistics of the balance report: known values, hand-computed clustered variances,
published chi-square table values, and the report built on them."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy.balance import STOCK_WARNING, BalanceReport
from rummy.simulate import WIN_UNIT, Aggregate, GameResult, run_games
from rummy.stats import (
    Z95,
    ClusterSums,
    chi2_sf,
    clustered_mean,
    clustered_proportion,
    seat_fairness,
    wilson,
)


def test_z95_is_the_normal_quantile() -> None:
    assert Z95 == NormalDist().inv_cdf(0.975)
    assert Z95 == pytest.approx(1.959963984540054, abs=1e-15)


def test_wilson_known_value() -> None:
    # 8 successes of 10: Wilson 95% interval (0.4902, 0.9433), e.g. Newcombe 1998, table II
    lo, hi = wilson(8, 10)
    assert (lo, hi) == (pytest.approx(0.4902, abs=1e-4), pytest.approx(0.9433, abs=1e-4))


# Upper-tail critical values of the chi-square distribution (any published table, e.g.
# NIST/SEMATECH e-Handbook §1.3.6.7.4): P(X >= x) = p for df degrees of freedom.
TABLE = [(1, 3.841, 0.05), (2, 5.991, 0.05), (3, 7.815, 0.05), (4, 9.488, 0.05),
         (1, 6.635, 0.01), (2, 9.210, 0.01), (3, 11.345, 0.01), (4, 13.277, 0.01),
         (3, 6.251, 0.10), (4, 1.064, 0.90), (5, 11.070, 0.05), (6, 12.592, 0.05)]


@pytest.mark.parametrize(("df", "x", "p"), TABLE)
def test_chi2_sf_matches_table(df: int, x: float, p: float) -> None:
    assert chi2_sf(x, df) == pytest.approx(p, abs=5e-4)


def test_chi2_sf_edges() -> None:
    assert chi2_sf(0.0, 3) == 1.0
    assert chi2_sf(1e4, 4) == pytest.approx(0.0, abs=1e-300)
    with pytest.raises(ValueError, match="degrees of freedom"):
        chi2_sf(1.0, 0)


def test_seat_fairness_verdicts() -> None:
    fair = seat_fairness([50, 50, 50, 50], 200)
    assert fair.chi2 == 0 and fair.p_value == 1.0
    assert fair.verdict.startswith("no evidence of a seat advantage at the 5% level")
    # 80 of 200 wins for seat 0: chi2 = (30² + 3·10²)/50 = 24, 3 df, p = 2.5e-5
    biased = seat_fairness([80, 40, 40, 40], 200)
    assert biased.chi2 == pytest.approx(24.0)
    assert biased.p_value == pytest.approx(2.5e-5, rel=0.05)
    assert biased.seat == 0 and biased.verdict.startswith("seat 0 wins more than 1/4")
    assert "p=2.5e-05" in biased.verdict
    assert seat_fairness([3, 2, 3], 8).small_sample


def test_clustered_variance_by_hand() -> None:
    """Three games; the bot holds m = (2, 2, 1) seats and wins y = (1, 0, 1)."""
    ys, ms = [1, 0, 1], [2, 2, 1]
    sums = ClusterSums(3, sum(ys), sum(ms), sum(y * y for y in ys),
                       sum(y * m for y, m in zip(ys, ms, strict=True)), sum(m * m for m in ms))
    r = 2 / 5
    resid = [1 - r * 2, 0 - r * 2, 1 - r * 1]  # 0.2, -0.8, 0.6 ; squares sum to 1.04
    expected = 3 / 2 * sum(e * e for e in resid) / 25
    assert sums.ratio == r
    assert sums.variance() == pytest.approx(expected) == pytest.approx(0.0624)
    mean = clustered_mean(sums)
    assert mean.se == pytest.approx(math.sqrt(0.0624))
    assert mean.low == pytest.approx(0.4 - Z95 * math.sqrt(0.0624))
    assert ClusterSums(1, 1, 2, 1, 2, 4).variance() is None


def test_one_winner_per_game_is_known_exactly() -> None:
    """Four seats of the same bot: it wins every game, so its rate is exactly 1/4 and the
    clustered interval is the point, where the naive one pretends 4·G independent seats."""
    g = 50
    sums = ClusterSums(g, g * WIN_UNIT, 4 * g, g * WIN_UNIT ** 2, g * 4 * WIN_UNIT, 16 * g)
    ci = clustered_proportion(sums, WIN_UNIT)
    assert (ci.rate, ci.low, ci.high, ci.design_effect) == (0.25, 0.25, 0.25, 0.0)
    assert ci.naive_high - ci.naive_low > 0.1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 1)), min_size=2, max_size=60))
def test_positively_correlated_seats_widen_the_interval(games: list[tuple[int, int]]) -> None:
    """When a bot's seats in one game all win or all lose together (perfect positive
    correlation), the clustered interval is never narrower than the naive one."""
    ys = [m * w for m, w in games]
    ms = [m for m, _ in games]
    sums = ClusterSums(len(games), sum(ys), sum(ms), sum(y * y for y in ys),
                       sum(y * m for y, m in zip(ys, ms, strict=True)), sum(m * m for m in ms))
    ci = clustered_proportion(sums)
    if ci.design_effect is not None:
        assert ci.high - ci.low >= (ci.naive_high - ci.naive_low) * (1 - 1e-9)


def _game(bots: tuple[str, ...], winners: tuple[int, ...], final: tuple[int, ...]) -> Aggregate:
    return Aggregate.of_game(GameResult(0, bots, final, winners, 1, (10,), ("knock",),
                                        (0,) * len(bots), 10))


def test_aggregate_keeps_per_game_sums() -> None:
    a = _game(("x", "y", "x"), (0,), (150, 20, 30))
    b = _game(("x", "y", "x"), (1,), (40, 160, 10))
    m = a.merge(b)
    assert m.bot_games == {"x": 2, "y": 2}
    assert m.bot_wins_sq["x"] == WIN_UNIT ** 2  # (60 + 0)² + (0 + 0)²: per game, not per seat
    assert m.bot_seats_sq == {"x": 8, "y": 2}
    assert m.bot_wins_seats == {"x": 2 * WIN_UNIT, "y": WIN_UNIT}
    assert m.bot_score_sq["x"] == 180 ** 2 + 50 ** 2
    assert m.bot_score_seats["x"] == 2 * 180 + 2 * 50
    assert Aggregate.from_dict(m.to_dict()) == m
    old = m.to_dict()
    del old["v"]
    with pytest.raises(ValueError, match="re-play"):
        Aggregate.from_dict(old)


def test_report_clusters_bot_rates_by_game() -> None:
    agg = run_games(["basic", "random"] * 2, 3, 0, 30)
    rep = BalanceReport.of(agg)
    basic = rep.bots["basic"].win
    assert (basic.n, basic.clusters) == (60, 30)
    # the two basic seats of a game rarely both win: negative correlation, deff < 1
    assert basic.design_effect is not None and basic.design_effect < 1
    assert basic.low <= basic.rate <= basic.high
    d = rep.to_dict()
    assert d["report_version"] == 2 and d["interval"]["z"] == Z95
    assert d["bot_win_rate"]["basic"]["naive_low"] == basic.naive_low
    assert d["seat_fairness"]["df"] == 3
    assert any(w.startswith(STOCK_WARNING) for w in rep.warnings)  # basic/random: stock


def test_points_left_rounds_and_round_ends_have_intervals() -> None:
    """The figures a sweep plots all carry a 95% interval. Points left are
    clustered by game (one bot's seat-rounds of a game are one cluster), computed by hand
    here for two games; rounds per game is normal over games; round ends Wilson."""
    a = Aggregate.of_game(GameResult(0, ("x", "y", "x"), (150, 20, 30), (0,), 2, (10, 9),
                                     ("knock", "going_out"), (4, 30, 12), 10))
    b = Aggregate.of_game(GameResult(1, ("x", "y", "x"), (40, 160, 10), (1,), 1, (7,),
                                     ("knock",), (20, 0, 6), 10))
    m = a.merge(b)
    # x: game a has 2 seats x 2 rounds, 16 points; game b 2 seat-rounds, 26 points
    assert (m.bot_rounds["x"], m.bot_points_left["x"]) == (6, 42)
    assert (m.bot_left_sq["x"], m.bot_left_rounds["x"], m.bot_rounds_sq["x"]) == (
        16 ** 2 + 26 ** 2, 16 * 4 + 26 * 2, 4 ** 2 + 2 ** 2)
    rep = BalanceReport.of(m)
    ci = rep.bots["x"].points_left_ci
    r = 42 / 6
    var = 2 / 1 * ((16 - r * 4) ** 2 + (26 - r * 2) ** 2) / 6 ** 2
    assert ci.mean == pytest.approx(r) == rep.bots["x"].points_left
    assert ci.se == pytest.approx(var ** 0.5)
    assert ci.low == pytest.approx(r - Z95 * var ** 0.5)
    rpg = rep.rounds_per_game_ci()
    assert rpg.mean == 1.5 and rpg.se == pytest.approx((0.5 / 2) ** 0.5)  # s² = 0.5, n = 2
    ends = rep.round_end_ci()
    assert ends["knock"].rate == pytest.approx(2 / 3) and ends["knock"].n == 3
    assert ends["knock"].low < 2 / 3 < ends["knock"].high
    d = rep.to_dict()
    assert d["bot_mean_points_left_ci"]["x"]["se"] == ci.se
    assert d["rounds_per_game_ci"]["mean"] == 1.5 and d["round_end_ci"]["stock"]["share"] == 0


def test_parse_lineup_is_the_one_line_up_parser() -> None:
    from rummy.simulate import DEFAULT_LINEUP, parse_lineup

    assert parse_lineup("basic, random", 4) == ("basic", "random", "basic", "random")
    assert parse_lineup(["random"], 3) == ("random",) * 3
    assert parse_lineup("", 4) == parse_lineup(None, 4) == DEFAULT_LINEUP * 2
    for bad, msg in ((",", "at least one"), ("nobody", "unknown bot"),
                     ("basic,random,basic", "3 bots for 2 players")):
        with pytest.raises(ValueError, match=msg):
            parse_lineup(bad, 2)


def test_play_range_hooks_see_every_finished_game() -> None:
    from rummy.simulate import play_range

    seen: list[tuple[int, bool]] = []
    agg = play_range(["basic", "random"], 4, 2, 6, record=lambda i: i == 3,
                     on_game=lambda i, r, _s: seen.append((i, bool(r.events))))
    assert seen == [(2, False), (3, True), (4, False), (5, False)]
    assert agg == run_games(["basic", "random"], 4, 2, 6)
