"""Sequential A/B test of strength (SPRT): stop an A/B run as soon as the data decide
between "B is ``elo0`` Elo stronger than A" (H0) and "B is ``elo1`` Elo stronger" (H1).

Which test: the generalized SPRT (GSPRT) of fishtest, the Stockfish testing framework, in
its normal approximation (M. Van den Bergh, "A simple derivation of the GSPRT",
https://www.cantate.be/Fishtest/GSPRT_approximation.pdf): the log-likelihood ratio of the
mean per-game score under a normal model with the variance estimated from the games,

    LLR = N · ((x̄ − s0)² − (x̄ − s1)²) / (2 σ̂²),   s = 1 / (1 + 10^(−elo/400)),

with Wald's bounds: accept H0 when ``LLR <= ln(β / (1 − α))``, accept H1 when
``LLR >= ln((1 − β) / α)``; so the error rates are at most about α (H1 accepted when H0
holds) and β (H0 accepted when H1 holds), a little less because the LLR overshoots a bound.

Why not Wald's SPRT on wins and losses: a paired A/B game scores 1 (B's slot won and A's did
not), 0 (the reverse), or in between (both or neither won, shared wins: a draw); Wald's
binomial SPRT must drop the draws and then needs the draw rate to map Elo to the win
probability of a decisive game, which is unknown. The GSPRT uses every game's score and its
observed variance, draws included, which is what fishtest settled on for the same reason.

Score of paired game ``i``: ``x = (1 + (b − a) / WIN_UNIT) / 2`` in [0, 1], with ``a`` and
``b`` the win credit (1/60ths of a win) of line-up slot 0 under variant A and under B
(:mod:`rummy_worker.paired` keeps their sums and sums of squares, enough for x̄ and σ̂²).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_ALPHA = 0.05  #: default probability of accepting H1 when H0 holds
DEFAULT_BETA = 0.05  #: default probability of accepting H0 when H1 holds


def elo_score(elo: float) -> float:
    """Expected score of a player ``elo`` Elo points stronger: ``1 / (1 + 10^(−elo/400))``."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def bounds(alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA) -> tuple[float, float]:
    """Wald's bounds ``(ln(β/(1−α)), ln((1−β)/α))`` on the LLR.

    Raises:
        ValueError: α or β outside (0, 1), or α + β >= 1.
    """
    if not (0 < alpha < 1 and 0 < beta < 1) or alpha + beta >= 1:
        raise ValueError(f"alpha and beta must be in (0, 1) with alpha + beta < 1, got "
                         f"{alpha}, {beta}")
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def llr(games: int, total: float, total_sq: float, elo0: float, elo1: float) -> float:
    """The GSPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``).

    Args:
        games: N, the paired games.
        total: Σx, the sum of the per-game scores (each in [0, 1]).
        total_sq: Σx².
        elo0, elo1: the Elo differences of H0 and H1 (``elo0 < elo1``).

    Returns:
        The LLR; 0.0 with fewer than 2 games or no variance yet (no information).
    """
    if games < 2:
        return 0.0
    mean = total / games
    var = total_sq / games - mean * mean
    if var <= 1e-12:
        return 0.0
    s0, s1 = elo_score(elo0), elo_score(elo1)
    return games * ((mean - s0) ** 2 - (mean - s1) ** 2) / (2 * var)


@dataclass(frozen=True)
class SprtResult:
    """The state of a sequential test.

    Attributes:
        elo0, elo1, alpha, beta: the test.
        games: paired games used.
        llr: the log-likelihood ratio.
        lower, upper: Wald's bounds.
        decision: ``"H0"`` (accept elo0: B is not ``elo1`` stronger), ``"H1"`` (accept
            elo1), or ``""`` (continue).
    """

    elo0: float
    elo1: float
    alpha: float
    beta: float
    games: int
    llr: float
    lower: float
    upper: float
    decision: str

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict of the fields."""
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha,
                "beta": self.beta, "games": self.games, "llr": self.llr,
                "lower": self.lower, "upper": self.upper, "decision": self.decision}


def sprt(games: int, total: float, total_sq: float, elo0: float, elo1: float,
         alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA) -> SprtResult:
    """The test after ``games`` paired games with score sums ``total`` (Σx) and
    ``total_sq`` (Σx²): its LLR and decision.

    Raises:
        ValueError: ``elo0 >= elo1``, or bad α, β (:func:`bounds`).
    """
    if not elo0 < elo1:
        raise ValueError(f"the SPRT needs ELO0 < ELO1, got {elo0}, {elo1}")
    lower, upper = bounds(alpha, beta)
    value = llr(games, total, total_sq, elo0, elo1)
    decision = "H1" if value >= upper else "H0" if value <= lower else ""
    return SprtResult(elo0, elo1, alpha, beta, games, value, lower, upper, decision)


def parse_elos(text: str) -> tuple[float, float]:
    """``"0,10"`` as ``(0.0, 10.0)``.

    Raises:
        ValueError: not two numbers, or ``ELO0 >= ELO1``.
    """
    parts = [p.strip() for p in text.split(",")]
    try:
        elo0, elo1 = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"--sprt takes ELO0,ELO1 (two numbers, e.g. 0,20), got {text!r}") \
            from None
    if not elo0 < elo1:
        raise ValueError(f"--sprt needs ELO0 < ELO1, got {text!r}")
    return elo0, elo1


__all__ = ["DEFAULT_ALPHA", "DEFAULT_BETA", "SprtResult", "bounds", "elo_score", "llr",
           "parse_elos", "sprt"]
