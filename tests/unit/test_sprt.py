"""The sequential A/B test (rummy.sprt): Wald's bounds, the GSPRT LLR, and its error rates
checked on simulated paired games."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rummy.sprt import bounds, elo_score, llr, parse_elos, sprt


def test_bounds_and_scores() -> None:
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert upper == pytest.approx(math.log(0.95 / 0.05))
    assert elo_score(0) == 0.5
    assert elo_score(400) == pytest.approx(10 / 11)
    with pytest.raises(ValueError, match="alpha and beta"):
        bounds(0.6, 0.5)
    with pytest.raises(ValueError, match="ELO0 < ELO1"):
        sprt(10, 5, 3, 10, 0)
    assert parse_elos("0, 20") == (0.0, 20.0)
    with pytest.raises(ValueError, match="ELO0,ELO1"):
        parse_elos("0")


def test_llr_examples() -> None:
    # no information yet: fewer than 2 games, or no variance
    assert llr(1, 1.0, 1.0, 0, 20) == 0.0
    assert llr(10, 5.0, 2.5, 0, 20) == 0.0  # ten draws
    # 100 games: 60 wins, 40 losses -> mean .6, variance .24
    s1 = elo_score(20)
    expected = 100 * ((0.6 - 0.5) ** 2 - (0.6 - s1) ** 2) / (2 * 0.24)
    assert llr(100, 60.0, 60.0, 0, 20) == pytest.approx(expected)
    r = sprt(100, 60.0, 60.0, 0, 20)
    assert r.llr == pytest.approx(expected) and r.decision == "" and r.games == 100
    # a strong enough lead decides for H1, a deficit for H0
    assert sprt(1000, 600.0, 600.0, 0, 20).decision == "H1"
    assert sprt(1000, 450.0, 450.0, 0, 20).decision == "H0"


def _runs(elo: float, elo0: float, elo1: float, alpha: float, beta: float, runs: int,
          draw: float, seed: int, cap: int = 40_000) -> tuple[float, float]:
    """Share of ``runs`` simulated SPRTs that accept H1, and the mean games used; each game
    scores 1, 1/2 or 0 with draw probability ``draw`` and expected score elo_score(elo)."""
    rng = np.random.default_rng(seed)
    s = elo_score(elo)
    p = [s - draw / 2, draw, 1 - s - draw / 2]  # win, draw, loss
    lower, upper = bounds(alpha, beta)
    s0, s1 = elo_score(elo0), elo_score(elo1)
    total = np.zeros(runs)
    total_sq = np.zeros(runs)
    n = 0
    decided = np.zeros(runs, dtype=np.int8)  # 1: H1, -1: H0
    used = np.zeros(runs)
    active = np.ones(runs, dtype=bool)
    while active.any() and n < cap:
        x = rng.choice([1.0, 0.5, 0.0], size=runs, p=p)
        total += x
        total_sq += x * x
        n += 1
        if n < 2:
            continue
        mean = total / n
        var = np.maximum(total_sq / n - mean * mean, 1e-12)
        value = n * ((mean - s0) ** 2 - (mean - s1) ** 2) / (2 * var)
        value[var <= 1e-12] = 0.0
        up = active & (value >= upper)
        down = active & (value <= lower)
        decided[up], decided[down] = 1, -1
        used[up | down] = n
        active &= ~(up | down)
    assert not active.any(), "some runs did not stop"
    # the pure function agrees with the vectorized one on the last state
    assert sprt(n, float(total[0]), float(total_sq[0]), elo0, elo1, alpha,
                beta).llr == pytest.approx(
        n * ((total[0] / n - s0) ** 2 - (total[0] / n - s1) ** 2)
        / (2 * (total_sq[0] / n - (total[0] / n) ** 2)))
    return float((decided == 1).mean()), float(used.mean())


@pytest.mark.parametrize("draw", [0.0, 0.5])
def test_error_rates_on_simulated_games(draw: float) -> None:
    """2,000 simulated SPRT runs at ELO0 accept H1 about alpha of the time, and 2,000 at
    ELO1 about 1 - beta (binomial sd ~0.005; tolerance 0.025, the overshoot of the bounds
    makes both errors a little smaller than nominal)."""
    alpha = beta = 0.05
    at0, games0 = _runs(0, 0, 40, alpha, beta, 2000, draw, seed=1)
    at1, games1 = _runs(40, 0, 40, alpha, beta, 2000, draw, seed=2)
    assert abs(at0 - alpha) < 0.025, at0
    assert abs(at1 - (1 - beta)) < 0.025, at1
    assert 20 < games0 < 2000 and 20 < games1 < 2000
    # other error rates: alpha 0.1, beta 0.2
    at0, _ = _runs(0, 0, 40, 0.1, 0.2, 2000, draw, seed=3)
    at1, _ = _runs(40, 0, 40, 0.1, 0.2, 2000, draw, seed=4)
    assert abs(at0 - 0.1) < 0.03, at0
    assert abs(at1 - 0.8) < 0.03, at1


def test_sprt_slot_out_of_the_line_up_is_refused_before_any_batch(
        capsys: pytest.CaptureFixture[str]) -> None:
    from rummy_cli.main import main
    try:
        code = main(["batch", "ab", "--games", "8", "--players", "2", "--bots", "basic,random",
                     "--compare-bots", "greedy,random", "--sprt", "0,20", "--sprt-slot", "2"])
    except SystemExit as e:
        code = int(e.code or 0)
    assert code == 2
    assert "--sprt-slot 2: the line-up has slots 0..1" in capsys.readouterr().err
