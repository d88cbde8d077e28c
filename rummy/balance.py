"""The balance report: one typed, immutable value built once from a merged aggregate.

:meth:`BalanceReport.of` computes every figure and interval (:mod:`rummy.stats`); every
renderer (the terminal tables of ``rummy simulate`` and ``rummy batch report``, JSON, CSV,
HTML) reads this object, and :meth:`BalanceReport.to_dict` is the one JSON form.

JSON (``report_version`` 2) keeps every key of version 1 with the same meaning, except that
``bot_win_rate[bot].low/high`` are now clustered by game (version 1 treated a bot's seats of
one game as independent; the naive Wilson bounds are still there as ``naive_low`` /
``naive_high``), and adds ``report_version``, ``interval``, ``seat_fairness``,
``bot_mean_score_ci`` and ``warnings``. Keys added later within version 2 (new keys only):
``bot_mean_points_left_ci`` (clustered by game), ``rounds_per_game_ci`` (games
are independent), ``round_end_ci`` (Wilson over rounds) and ``quality`` (the game-quality
metrics of :mod:`rummy.quality`, docs/metrics.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from rummy.quality import QualityReport
from rummy.simulate import WIN_UNIT, Aggregate
from rummy.stats import (
    Z95,
    ClusterSums,
    MeanCI,
    ProportionCI,
    SeatFairness,
    clustered_mean,
    clustered_proportion,
    seat_fairness,
    wilson,
)

REPORT_VERSION = 2
#: round-end reasons, in report order: a knock that won, a knock that lost (undercut),
#: going out, the stock ran out
REASONS = ("knock", "undercut", "going_out", "stock")
#: share of rounds ending with an exhausted stock above which the report warns
STOCK_WARNING_SHARE = 0.5
STOCK_WARNING = ("most rounds end because the stock ran out: the bots rarely knock; "
                 "this says more about the bots than the rules")
INTERVAL_METHOD = ("seat win rates: Wilson over games; bot win rates: Wilson at the effective "
                   "size n/deff, deff from a cluster-robust (CR1) variance with games as "
                   "clusters; bot mean scores: mean ± z·se, se clustered by game")


@dataclass(frozen=True, slots=True)
class BotStats:
    """Figures of one bot (strategy) over all its seats.

    Attributes:
        bot: the strategy name.
        win: win rate per seat-game (fraction; a shared win counts 1/k) with naive and
            clustered 95% intervals.
        score: mean final score per seat-game (points) with its clustered 95% interval.
        points_left: mean hand points left at a round's end, per seat-round (points).
        score_hist: final-score histogram, bin low edge (points, bins of 25) -> seat-games.
        points_left_ci: :attr:`points_left` with its 95% interval clustered by game
            (points; seat-rounds of one game are one cluster).
    """

    bot: str
    win: ProportionCI
    score: MeanCI
    points_left: float
    score_hist: Mapping[int, int]
    points_left_ci: MeanCI


@dataclass(frozen=True)
class BalanceReport:
    """The balance report of a set of games (see the module docstring).

    Attributes:
        games, players, rounds, turns, steps: counts over the games that finished.
        seats: win rate of each seat (fraction; Wilson over games: one seat per game).
        bots: per-bot figures, by bot name.
        fairness: chi-square test of seat wins against ``1/players``.
        round_end_share: share of rounds (fraction) ending by each of :data:`REASONS`.
        rounds_hist: rounds per game -> games. turns_hist: turns per round -> rounds.
        failed_games: ``(index, error)`` of games in which a bot failed (in no figure).
        warnings: plain-words caveats about what the figures mean.
        seed, lineup, rules: the run's master seed, bot line-up and changed rule variants,
            when known (see :meth:`with_run`).
        quality: the game-quality metrics (:mod:`rummy.quality`, docs/metrics.md).
    """

    games: int
    players: int
    rounds: int
    turns: int
    steps: int
    seats: tuple[ProportionCI, ...]
    bots: Mapping[str, BotStats]
    fairness: SeatFairness
    round_end_share: Mapping[str, float]
    rounds_hist: Mapping[int, int]
    turns_hist: Mapping[int, int]
    failed_games: tuple[tuple[int, str], ...]
    warnings: tuple[str, ...]
    seed: int | None = None
    lineup: tuple[str, ...] = ()
    rules: Mapping[str, Any] = field(default_factory=dict)
    quality: QualityReport | None = None

    @property
    def rounds_per_game(self) -> float:
        """Mean rounds per game (0 with no games)."""
        return self.rounds / self.games if self.games else 0.0

    @property
    def turns_per_round(self) -> float:
        """Mean turns per round (0 with no rounds)."""
        return self.turns / self.rounds if self.rounds else 0.0

    @classmethod
    def of(cls, agg: Aggregate) -> BalanceReport:
        """Compute the report of a merged aggregate (pure; the same aggregate gives an equal
        report)."""
        g = agg.games
        seats = []
        for w in agg.seat_wins:
            lo, hi = wilson(w / WIN_UNIT, g)
            rate = w / WIN_UNIT / g if g else 0.0
            seats.append(ProportionCI(rate, lo, hi, lo, hi, g, g, None))
        bots: dict[str, BotStats] = {}
        for b in sorted(agg.bot_seats):
            clusters = agg.bot_games.get(b, 0)
            wins = ClusterSums(clusters, agg.bot_wins.get(b, 0), agg.bot_seats[b],
                               agg.bot_wins_sq.get(b, 0), agg.bot_wins_seats.get(b, 0),
                               agg.bot_seats_sq.get(b, 0))
            score = ClusterSums(clusters, agg.bot_score_sum.get(b, 0), agg.bot_seats[b],
                                agg.bot_score_sq.get(b, 0), agg.bot_score_seats.get(b, 0),
                                agg.bot_seats_sq.get(b, 0))
            left = (agg.bot_points_left.get(b, 0) / agg.bot_rounds[b]
                    if agg.bot_rounds.get(b) else 0.0)
            lefts = ClusterSums(clusters, agg.bot_points_left.get(b, 0),
                                agg.bot_rounds.get(b, 0), agg.bot_left_sq.get(b, 0),
                                agg.bot_left_rounds.get(b, 0), agg.bot_rounds_sq.get(b, 0))
            bots[b] = BotStats(b, clustered_proportion(wins, WIN_UNIT), clustered_mean(score),
                               left, dict(sorted(agg.bot_score_hist.get(b, {}).items())),
                               clustered_mean(lefts))
        rounds = agg.rounds
        shares = {k: agg.reasons.get(k, 0) / rounds if rounds else 0.0 for k in REASONS}
        warnings = []
        if shares["stock"] > STOCK_WARNING_SHARE:
            warnings.append(f"{STOCK_WARNING} ({shares['stock']:.0%} of rounds)")
        fairness = seat_fairness([w / WIN_UNIT for w in agg.seat_wins], g)
        return cls(g, agg.players, rounds, agg.turns, agg.steps, tuple(seats), bots, fairness,
                   shares, dict(sorted(agg.rounds_hist.items())),
                   dict(sorted(agg.turns_hist.items())), tuple(sorted(agg.failed.items())),
                   tuple(warnings), quality=QualityReport.of(agg.quality))

    def rounds_per_game_ci(self) -> MeanCI:
        """Mean rounds per game with its 95% normal interval (rounds; games are independent,
        so the sample variance of :attr:`rounds_hist` gives the standard error); no interval
        with fewer than 2 games."""
        g = self.games
        mean = self.rounds_per_game
        if g < 2:
            return MeanCI(mean, None, None, None, g, g)
        ss = sum(n * (k - mean) ** 2 for k, n in self.rounds_hist.items())
        se = math.sqrt(ss / (g - 1) / g)
        return MeanCI(mean, mean - Z95 * se, mean + Z95 * se, se, g, g)

    def round_end_ci(self) -> dict[str, ProportionCI]:
        """Share of rounds (fraction) ending by each of :data:`REASONS`, with a 95% Wilson
        interval over rounds. Rounds of one game are treated as independent (the aggregate
        keeps no per-game counts of round ends); games average under 2 rounds in the
        default line-up, so the interval is close to a clustered one."""
        out = {}
        n = self.rounds
        for k in REASONS:
            share = self.round_end_share.get(k, 0.0)
            lo, hi = wilson(share * n, n)
            out[k] = ProportionCI(share, lo, hi, lo, hi, n, self.games, None)
        return out

    def with_run(self, seed: int | None, lineup: tuple[str, ...] | list[str],
                 rules: Mapping[str, Any]) -> BalanceReport:
        """This report with the run's seed, line-up and changed rule variants attached."""
        return replace(self, seed=seed, lineup=tuple(lineup), rules=dict(rules))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``report_version`` 2; histogram keys stay ints until dumped)."""
        rpg = self.rounds_per_game_ci()
        out: dict[str, Any] = {
            "report_version": REPORT_VERSION,
            "interval": {"level": 0.95, "z": Z95, "method": INTERVAL_METHOD},
            "games": self.games, "players": self.players, "rounds": self.rounds,
            "turns": self.turns, "steps": self.steps,
            "rounds_per_game": self.rounds_per_game, "turns_per_round": self.turns_per_round,
            "seat_win_rate": [{"rate": s.rate, "low": s.low, "high": s.high, "n": s.n}
                              for s in self.seats],
            "seat_fairness": {"chi2": self.fairness.chi2, "df": self.fairness.df,
                              "p_value": self.fairness.p_value, "seat": self.fairness.seat,
                              "verdict": self.fairness.verdict,
                              "small_sample": self.fairness.small_sample},
            "bot_win_rate": {b: {"rate": s.win.rate, "low": s.win.low, "high": s.win.high,
                                 "n": s.win.n, "games": s.win.clusters,
                                 "naive_low": s.win.naive_low, "naive_high": s.win.naive_high,
                                 "design_effect": s.win.design_effect}
                             for b, s in self.bots.items()},
            "bot_mean_score": {b: s.score.mean for b, s in self.bots.items()},
            "bot_mean_score_ci": {b: {"mean": s.score.mean, "low": s.score.low,
                                      "high": s.score.high, "se": s.score.se}
                                  for b, s in self.bots.items()},
            "bot_score_hist": {b: dict(s.score_hist) for b, s in self.bots.items()},
            "bot_mean_points_left": {b: s.points_left for b, s in self.bots.items()},
            "bot_mean_points_left_ci": {b: {"mean": s.points_left_ci.mean,
                                            "low": s.points_left_ci.low,
                                            "high": s.points_left_ci.high,
                                            "se": s.points_left_ci.se}
                                        for b, s in self.bots.items()},
            "rounds_per_game_ci": {"mean": rpg.mean, "low": rpg.low, "high": rpg.high,
                                   "se": rpg.se},
            "round_end_ci": {k: {"share": e.rate, "low": e.low, "high": e.high, "n": e.n}
                             for k, e in self.round_end_ci().items()},
            "round_end_share": dict(self.round_end_share),
            "rounds_hist": dict(self.rounds_hist),
            "turns_hist": dict(self.turns_hist),
            "failed_games": [{"index": i, "error": e} for i, e in self.failed_games],
            "warnings": list(self.warnings),
        }
        if self.quality is not None:
            out["quality"] = self.quality.to_dict()
        if self.seed is not None:
            out["seed"] = self.seed
        if self.lineup:
            out["bots"] = list(self.lineup)
            out["rules"] = dict(self.rules)
        return out
