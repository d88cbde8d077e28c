"""Statistics of balance reports: the one 95% quantile, Wilson intervals, cluster-robust
(by game) variances of ratio estimators, and the chi-square test of seat fairness.

Pure standard library (``math``, ``statistics.NormalDist``): the core may not import SciPy.

Why clustering: in a 4-player game with the line-up ``strategic,greedy`` each bot holds two
seats of the same game, and those two seats are not independent observations (at most one
of them wins, and both see the same deal). Games are independent (each has its own seed),
so every interval of a per-bot figure is computed with games as the sampling units
(clusters). A bot's win rate is the ratio estimator ``R = Σ_g y_g / Σ_g m_g`` (``y_g``: the
bot's win credit in game ``g``, ``m_g``: its seats in game ``g``); its variance is the
linearisation (sandwich) estimator with the CR1 small-sample factor ``G/(G-1)``::

    Var(R) = G/(G-1) · Σ_g (y_g − R·m_g)² / (Σ_g m_g)²

(Cochran, *Sampling Techniques*, 3rd ed., 1977, §6.11 ratio estimators in cluster sampling;
Cameron & Miller, "A Practitioner's Guide to Cluster-Robust Inference", J. Human Resources
50(2), 2015, §2 and §3.1 for CR1). Only ``Σy, Σm, Σy², Σym, Σm²`` and ``G`` are needed,
which is why aggregates keep exact integer sums of per-game squares and products.

For proportions the clustered variance is turned into an interval with Wilson's formula at
the *effective* sample size ``n / deff`` (Kish's design effect ``deff = Var_clustered /
Var_binomial``), as Korn & Graubard do for survey proportions ("Confidence intervals for
proportions with small expected number of positive counts estimated from survey data",
Survey Methodology 24, 1998): it stays inside [0, 1] and is not degenerate at 0 wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

#: two-sided 95% standard normal quantile, 1.959963984540054 (the only place it is defined)
Z95: float = NormalDist().inv_cdf(0.975)
#: significance level of the seat-fairness verdict
ALPHA = 0.05


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval ``(low, high)`` of a proportion ``successes / n`` (fractions).

    Wilson, "Probable inference, the law of succession, and statistical inference",
    JASA 22, 1927. ``(0, 0)`` when ``n <= 0``; ``(p, p)`` when ``n`` is infinite.
    """
    if n <= 0:
        return (0.0, 0.0)
    p = successes / n
    if math.isinf(n):
        return (p, p)
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True, slots=True)
class ClusterSums:
    """Exact sums over ``clusters`` independent games of one figure ``y`` and its weight
    ``m`` (seats), per game: ``sy = Σy``, ``sm = Σm``, ``syy = Σy²``, ``sym = Σy·m``,
    ``smm = Σm²``. Units are those of ``y`` (e.g. win credit, points)."""

    clusters: int
    sy: float
    sm: float
    syy: float
    sym: float
    smm: float

    @property
    def ratio(self) -> float:
        """``Σy / Σm`` (0 when there is no weight)."""
        return self.sy / self.sm if self.sm else 0.0

    def variance(self) -> float | None:
        """Cluster-robust (CR1) variance of :attr:`ratio`, in units of ``y`` squared per
        ``m`` squared; ``None`` with fewer than 2 clusters (see the module docstring)."""
        g = self.clusters
        if g < 2 or not self.sm:
            return None
        r = self.ratio
        ss = self.syy - 2 * r * self.sym + r * r * self.smm  # Σ (y_g − R m_g)²
        return max(0.0, ss) * g / (g - 1) / (self.sm * self.sm)


@dataclass(frozen=True, slots=True)
class ProportionCI:
    """A proportion (fraction) with its naive and clustered 95% intervals.

    Attributes:
        rate: the point estimate, a fraction.
        low, high: the clustered interval (Wilson at the effective size ``n / deff``).
        naive_low, naive_high: Wilson over ``n`` units as if independent.
        n: units (seat-games).
        clusters: games.
        design_effect: clustered variance / binomial variance (``None``: not estimable,
            fewer than 2 games or a rate of 0 or 1; the naive interval is used then).
    """

    rate: float
    low: float
    high: float
    naive_low: float
    naive_high: float
    n: int
    clusters: int
    design_effect: float | None


def clustered_proportion(sums: ClusterSums, scale: float = 1.0,
                         z: float = Z95) -> ProportionCI:
    """The proportion ``Σy / (scale·Σm)`` with naive and clustered (by game) intervals.

    ``scale`` converts ``y`` to successes (``WIN_UNIT`` for win credit in 1/60ths).
    When the design effect is 0 (every game gives the same ``y/m``) the clustered interval
    is the point itself: the rate is then known exactly from the games played.
    """
    n = int(sums.sm)
    p = sums.ratio / scale
    naive = wilson(p * n, n, z)
    var = sums.variance()
    binom = p * (1 - p) / n if n else 0.0
    if var is None or binom <= 0:
        return ProportionCI(p, naive[0], naive[1], naive[0], naive[1], n, sums.clusters, None)
    deff = var / (scale * scale) / binom
    low, high = wilson(p * n / deff, n / deff, z) if deff > 0 else (p, p)
    return ProportionCI(p, low, high, naive[0], naive[1], n, sums.clusters, deff)


@dataclass(frozen=True, slots=True)
class MeanCI:
    """A mean (in the figure's units, e.g. points) with its clustered 95% interval
    ``mean ± z·se``; ``low``/``high``/``se`` are ``None`` with fewer than 2 games."""

    mean: float
    low: float | None
    high: float | None
    se: float | None
    n: int
    clusters: int


def clustered_mean(sums: ClusterSums, z: float = Z95) -> MeanCI:
    """The mean ``Σy / Σm`` with its cluster-robust (by game) normal interval."""
    var = sums.variance()
    m = sums.ratio
    if var is None:
        return MeanCI(m, None, None, None, int(sums.sm), sums.clusters)
    se = math.sqrt(var)
    return MeanCI(m, m - z * se, m + z * se, se, int(sums.sm), sums.clusters)


# ----------------------------------------------------------------------------- chi-square

def chi2_sf(x: float, df: int) -> float:
    """Survival function ``P(X ≥ x)`` of the chi-square distribution with integer ``df``.

    Exact closed forms of the regularized upper incomplete gamma ``Q(df/2, x/2)``
    (Abramowitz & Stegun 26.4.4–26.4.5): for even ``df``,
    ``Q = e^{-x/2} Σ_{i<df/2} (x/2)^i / i!``; for odd ``df``,
    ``Q = erfc(√(x/2)) + e^{-x/2} Σ_{i=1}^{(df-1)/2} (x/2)^{i-1/2} / Γ(i+1/2)``.

    Raises:
        ValueError: ``df < 1``.
    """
    if df < 1:
        raise ValueError(f"chi-square degrees of freedom must be >= 1, got {df}")
    if x <= 0:
        return 1.0
    h = x / 2
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, df // 2):
            term *= h / i
            total += term
        return min(1.0, math.exp(-h) * total)
    total = 0.0
    term = math.sqrt(h) / math.gamma(1.5)  # i = 1
    for i in range(1, (df - 1) // 2 + 1):
        total += term
        term *= h / (i + 0.5)
    return min(1.0, math.erfc(math.sqrt(h)) + math.exp(-h) * total)


@dataclass(frozen=True, slots=True)
class SeatFairness:
    """Pearson's chi-square goodness-of-fit test of seat wins against ``1/players`` each.

    Attributes:
        chi2: the statistic ``Σ (O_s − E)² / E`` (``O_s``: wins of seat ``s``, a shared win
            counting as a fraction; ``E = games / players``).
        df: degrees of freedom, ``players − 1``.
        p_value: ``P(χ²_df ≥ chi2)``; ``None`` with no games.
        seat: the seat farthest from its fair share (largest ``|O − E|``), or ``None``.
        verdict: a plain-words conclusion at the 5% level.
        small_sample: fewer than 5 expected wins per seat: the chi-square approximation
            is rough (Cochran's rule) and the verdict says so.
    """

    chi2: float
    df: int
    p_value: float | None
    seat: int | None
    verdict: str
    small_sample: bool


def seat_fairness(wins: list[float], games: int, alpha: float = ALPHA) -> SeatFairness:
    """Test seat wins (in wins, fractions allowed) of ``games`` games against ``1/n`` each.

    Raises:
        ValueError: fewer than 2 seats.
    """
    n = len(wins)
    if n < 2:
        raise ValueError("seat fairness needs at least 2 seats")
    if games <= 0:
        return SeatFairness(0.0, n - 1, None, None, "no games: no test", True)
    expected = games / n
    chi2 = sum((o - expected) ** 2 for o in wins) / expected
    p = chi2_sf(chi2, n - 1)
    seat = max(range(n), key=lambda s: abs(wins[s] - expected))
    small = expected < 5
    if p < alpha:
        more = "more" if wins[seat] > expected else "less"
        verdict = (f"seat {seat} wins {more} than 1/{n} of games "
                   f"({wins[seat] / games:.1%} against {1 / n:.1%}): p={p:.3g}")
    else:
        verdict = (f"no evidence of a seat advantage at the {alpha:.0%} level "
                   f"(chi-square {chi2:.2f}, {n - 1} df, p={p:.3g})")
    if small:
        verdict += f"; only {expected:.1f} expected wins per seat, too few for a reliable test"
    return SeatFairness(chi2, n - 1, p, seat, verdict, small)
