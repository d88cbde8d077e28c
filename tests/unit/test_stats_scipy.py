"""The core's statistics (``rummy.stats``, standard library only) against SciPy's
distributions: the 95% quantile, the chi-square survival function of the seat-fairness
test, and Wilson intervals. SciPy comes with the ``report`` extra; without it
these tests are skipped with the reason."""

from __future__ import annotations

import pytest

from rummy.stats import Z95, chi2_sf, seat_fairness, wilson

scipy_stats = pytest.importorskip("scipy.stats", reason="SciPy (the 'report' extra) is missing")


def test_the_95_quantile_is_scipys() -> None:
    assert Z95 == pytest.approx(scipy_stats.norm.ppf(0.975), rel=1e-15)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 7, 10, 15])
def test_chi2_sf_matches_scipy(df: int) -> None:
    for x in (0.01, 0.5, 1.0, 2.5, df, 7.8, 12.0, 30.0, 80.0):
        assert chi2_sf(x, df) == pytest.approx(scipy_stats.chi2.sf(x, df), rel=1e-10,
                                               abs=1e-300), (x, df)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (1, 10), (5, 10), (10, 10), (37, 200),
                                      (1302, 1984), (3, 1000)])
def test_wilson_matches_scipy(k: int, n: int) -> None:
    ci = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = wilson(k, n)
    assert low == pytest.approx(ci.low, abs=1e-12)
    assert high == pytest.approx(ci.high, abs=1e-12)


def test_seat_fairness_p_value_is_scipys_chisquare() -> None:
    wins = [270.0, 240.0, 250.5, 239.5]
    games = int(sum(wins))
    got = seat_fairness(wins, games)
    ref = scipy_stats.chisquare(wins, [games / 4] * 4)
    assert got.chi2 == pytest.approx(ref.statistic, rel=1e-12)
    assert got.p_value == pytest.approx(ref.pvalue, rel=1e-10)
