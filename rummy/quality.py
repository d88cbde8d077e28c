"""Game-quality metrics of balance reports: skill trace, drama, decisiveness, decision
moves and duration, each with a 95% interval clustered by game (docs/metrics.md).

The metrics follow the evaluation metrics of the Ludii general game system (Piette,
Soemers, Stephenson et al., "Ludii – The Ludemic General Game System", ECAI 2020, and
Ludii's ``metrics`` package: Balance, AdvantageP1, Completion, Drawishness, DurationTurns,
DecisionMoves, BranchingFactor, Drama, ScoreDifference, SkillTrace) and the seat-fairness
reading of Jaffe et al., "Evaluating Competitive Game Balance with Restricted Play"
(AIIDE 2012), adapted to a scored multi-round card game:

- a *position* is the running totals after a round (R7), and the final totals after the
  bonuses (R9.2–R9.3) are the last position; the *leader* of a position is the seat with
  the unique highest total (a tie has no leader);
- **lead changes**: how often the leader changes from one position to a later one (a tie
  in between does not count as a change);
- **comeback**: the largest deficit, in points, between a final winner's running total
  and the highest running total at any round's end (0 when a winner always led);
- **decided round**: the first round after which a final winner always held the highest
  running total (shared or not); the number of rounds when only the bonuses decided;
- **decision moves**: at sampled meld phases (R3.2, R5), the distinct legal plays the
  solver finds (distinct sets of hand cards added: the best play, then the best play that
  keeps each of its cards in hand; a lower bound of the true count, pass not counted),
  and whether there was more than one;
- **skill trace**: the win-rate margin (per seat-game) of one bot over another in the same
  line-up, paired within each game;
- **duration**: rounds and turns per game with their spread, and the share of games in
  which a round ran the stock out (R8.3, the rules' only length cap; a game that exceeds
  ``rummy.simulate.MAX_STEPS`` commands is a failed game, counted apart).

Per-game values are turned into exact integer sums (:func:`game_sums`), so aggregates
merge by addition in any order; :class:`QualityReport` turns the sums into figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rummy.stats import (
    Z95,
    ClusterSums,
    MeanCI,
    ProportionCI,
    clustered_mean,
    clustered_proportion,
    wilson,
)

#: a meld phase is sampled for decision moves once every this many (per game, from an
#: offset set by the game's seed) when every seat's bot runs the solver itself; the solver
#: runs again there, so sampling keeps the metrics' cost under a tenth of a batch's CPU
#: (measured: docs/metrics.md). With fewer solver seats the interval grows in proportion
#: (:func:`sample_every`), as the games are cheaper.
SAMPLE_EVERY = 32
#: the interval when no seat's bot runs the solver (``basic``, ``random``): those games
#: cost a fraction of a solver bot's, so a sample is rare there
SAMPLE_EVERY_NO_SOLVER = 1280
#: the bots that run the exact solver at every meld phase (rummy.bots: ``greedy`` and its
#: subclasses ``strategic`` and ``human``, and ``search``)
SOLVER_BOTS = frozenset({"greedy", "strategic", "human", "search"})
#: at most this many of the best play's cards are each kept back to look for another play
MAX_ALTERNATIVES = 3
#: skill-trace margins are counted in 1/MARGIN_UNIT of a win per seat-game: 60 × 60, so a
#: credit in 1/60ths divided by 1..5 seats stays an integer
MARGIN_UNIT = 3600
#: power of the "games needed" figures (two-sided 5% test)
POWER = 0.8
_Z_POWER = 0.8416212335729143  # standard normal quantile of POWER

#: one-line definitions, shown in every report and in docs/metrics.md
DEFINITIONS: dict[str, str] = {
    "skill_trace": "win-rate margin (per seat-game) of the stronger bot over the weaker "
                   "in the same line-up, paired within each game",
    "lead_changes": "times per game the sole leader of the running totals changes, from "
                    "round to round and to the final totals after bonuses",
    "comeback": "largest deficit (points) a final winner trailed the leader by at a "
                "round's end; averaged over all games",
    "won_from_behind": "share of games whose winner trailed at some round's end",
    "decided_round": "first round after which a final winner always held the highest "
                     "running total",
    "decided_share": "decided round as a share of the game's rounds (1 = only the last "
                     "round or the bonuses decided)",
    "decision_share": "share of sampled meld phases with more than one legal play (distinct "
                      "sets of hand cards added; pass not counted)",
    "branching": "distinct legal plays the solver finds at a sampled meld phase (a lower "
                 "bound; pass not counted)",
    "rounds": "rounds per game (mean, standard deviation)",
    "turns": "turns per game (mean, standard deviation)",
    "capped": "share of games in which a round ran the stock out (R8.3), the rules' only "
              "length cap",
}


def sample_every(bots: Sequence[str]) -> int:
    """The sampling interval of decision moves for a game with seats ``bots``:
    :data:`SAMPLE_EVERY` when every seat's bot is one of :data:`SOLVER_BOTS`,
    2 × :data:`SAMPLE_EVERY` × ⌈seats / solver seats⌉ with some, and
    :data:`SAMPLE_EVERY_NO_SOLVER` with none; deterministic, so a batch's report does not
    depend on timing (measured costs: docs/metrics.md)."""
    solver = sum(1 for b in bots if b.split("!")[0] in SOLVER_BOTS)  # restricted too
    if not solver:
        return SAMPLE_EVERY_NO_SOLVER
    if solver == len(bots):
        return SAMPLE_EVERY
    # cheap seats make the game cheaper and, melding less, longer: twice the proportion
    return 2 * SAMPLE_EVERY * -(-len(bots) // solver)


def is_sampled(seed: int, meld_phase: int, every: int = SAMPLE_EVERY) -> bool:
    """Whether meld phase number ``meld_phase`` (0-based, counted over the whole game) of
    the game with ``seed`` is sampled for decision moves (one in ``every``,
    :func:`sample_every`)."""
    return (meld_phase + seed) % every == 0


def count_plays(view: Any) -> int:
    """Distinct legal plays (sets of hand cards added) the solver finds for the seat to
    act in a meld phase ``view`` (a :class:`rummy.views.PlayerView`): 0 when no meld is
    legal; else the best play plus, for each of up to :data:`MAX_ALTERNATIVES` distinct
    cards of it, the best play that keeps that card in hand, counted once per card set.
    Opening rules (R5.5) apply as for the bots (:func:`rummy.bots.greedy.plan_play`)."""
    from rummy.bots.greedy import plan_play

    best = plan_play(view)
    if best is None:
        return 0
    found = {best[1].cards}
    for card in sorted(set(best[1].cards))[:MAX_ALTERNATIVES]:
        alt = plan_play(view, keep=(card,))
        if alt is not None:
            found.add(alt[1].cards)
    return len(found)


def _leader(totals: Sequence[int]) -> int | None:
    top = max(totals)
    seats = [s for s, t in enumerate(totals) if t == top]
    return seats[0] if len(seats) == 1 else None


def drama(positions: Sequence[Sequence[int]], final: Sequence[int],
          winners: Sequence[int]) -> tuple[int, int, int]:
    """``(lead_changes, comeback, decided_round)`` of one game (see the module docstring).

    Args:
        positions: running totals after each round (points), round 1 first.
        final: final totals after bonuses (R9.2–R9.3).
        winners: the final winners (R9.4).
    """
    changes = 0
    last: int | None = None
    for pos in [*positions, final]:
        lead = _leader(pos)
        if lead is not None:
            if last is not None and lead != last:
                changes += 1
            last = lead
    comeback = max((max(max(pos) - pos[w] for pos in positions) for w in winners),
                   default=0) if positions else 0
    rounds = len(positions)
    decided = 1
    for r, pos in enumerate(positions, start=1):
        if not any(pos[w] == max(pos) for w in winners):
            decided = r + 1
    return changes, comeback, min(decided, max(rounds, 1))


def game_sums(*, bots: Sequence[str], winners: Sequence[int], final: Sequence[int],
              positions: Sequence[Sequence[int]], turns: int, reasons: Sequence[str],
              plays: Sequence[int], meld_phases: int, win_unit: int) -> dict[str, int]:
    """The integer sums one game adds to an aggregate's ``quality`` (keys: see the code;
    ``margin:A|B:*`` for each pair of bots ``A < B`` in the line-up). A negative entry of
    ``plays`` (the count failed) is counted in ``sample_errors`` and in no figure."""
    rounds = len(positions)
    changes, comeback, decided = drama(positions, final, winners)
    errors = sum(1 for p in plays if p < 0)
    plays = [p for p in plays if p >= 0]
    sampled = len(plays)
    multi = sum(1 for p in plays if p > 1)
    total_plays = sum(plays)
    out = {
        "games": 1, "rounds": rounds, "turns": turns, "rounds_sq": rounds * rounds,
        "turns_sq": turns * turns,
        "lead_changes": changes, "lead_changes_sq": changes * changes,
        "comeback": comeback, "comeback_sq": comeback * comeback,
        "from_behind": int(comeback > 0),
        "decided": decided, "decided_sq": decided * decided, "decided_rounds": decided * rounds,
        "capped": int("stock" in reasons),
        "meld_phases": meld_phases, "sampled": sampled, "sampled_sq": sampled * sampled,
        "multi": multi, "multi_sq": multi * multi, "multi_sampled": multi * sampled,
        "plays": total_plays, "plays_sq": total_plays * total_plays,
        "plays_sampled": total_plays * sampled, "sample_errors": errors,
    }
    credit = win_unit // len(winners)
    seats: dict[str, int] = {}
    wins: dict[str, int] = {}
    for s, b in enumerate(bots):
        seats[b] = seats.get(b, 0) + 1
        wins[b] = wins.get(b, 0) + (credit if s in winners else 0)
    names = sorted(seats)
    per = MARGIN_UNIT // win_unit
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            d = wins[a] * per // seats[a] - wins[b] * per // seats[b]  # exact: 60 % m == 0
            out[f"margin:{a}|{b}:n"] = 1
            out[f"margin:{a}|{b}:sum"] = d
            out[f"margin:{a}|{b}:sq"] = d * d
    return out


# ----------------------------------------------------------------------------- report

@dataclass(frozen=True, slots=True)
class SkillTrace:
    """The win-rate margin of ``stronger`` over ``weaker`` (fraction of a win per
    seat-game; ``margin`` ≥ 0), paired within each game, with its 95% interval.

    Attributes:
        games: games in which both bots played.
        games_needed: games for a two-sided 5% test to detect this margin with
            probability :data:`POWER` (``None``: margin 0 or fewer than 2 games).
        verdict: the finding in words.
    """

    stronger: str
    weaker: str
    margin: MeanCI
    games: int
    games_needed: int | None
    verdict: str


@dataclass(frozen=True, slots=True)
class Spread:
    """Mean (with its 95% interval) and standard deviation of a per-game count."""

    mean: MeanCI
    sd: float | None


def _per_game(n: int, s: float, sq: float) -> MeanCI:
    """Mean of a non-negative per-game value over ``n`` independent games with a normal
    interval, its lower bound clipped at 0 (the value cannot be negative)."""
    return _clip(clustered_mean(ClusterSums(n, s, n, sq, s, n)), 0.0, None)


def _clip(m: MeanCI, low: float | None, high: float | None) -> MeanCI:
    """``m`` with its interval clipped to the range the figure can take."""
    lo, hi = m.low, m.high
    if lo is not None and low is not None:
        lo = max(lo, low)
    if hi is not None and high is not None:
        hi = min(hi, high)
    return MeanCI(m.mean, lo, hi, m.se, m.n, m.clusters)


def _sd(n: int, s: float, sq: float) -> float | None:
    if n < 2:
        return None
    return math.sqrt(max(0.0, (sq - s * s / n) / (n - 1)))


def games_needed(sd_per_game: float | None, effect: float) -> int | None:
    """Games for a paired two-sided 5% test with power :data:`POWER` to detect ``effect``
    (same unit as ``sd_per_game``, the standard deviation of one game's value):
    ``⌈((z₀.₉₇₅ + z_power)·sd/effect)²⌉``; ``None`` when either is unknown or 0."""
    if sd_per_game is None or not effect or not sd_per_game:
        return None
    return math.ceil(((Z95 + _Z_POWER) * sd_per_game / abs(effect)) ** 2)


@dataclass(frozen=True)
class QualityReport:
    """The game-quality figures of a set of games (see the module docstring; units:
    rounds, turns, points, fractions). ``games`` counts the games with quality sums
    (aggregates written before these metrics existed carry none)."""

    games: int
    skill: tuple[SkillTrace, ...]
    lead_changes: MeanCI
    comeback: MeanCI
    won_from_behind: ProportionCI
    decided_round: MeanCI
    decided_share: MeanCI
    decision_share: ProportionCI
    branching: MeanCI
    meld_phases: int
    sampled: int
    rounds: Spread
    turns: Spread
    capped: ProportionCI
    sample_errors: int = 0

    @classmethod
    def of(cls, q: Mapping[str, int]) -> QualityReport:
        """Figures from an aggregate's ``quality`` sums (:func:`game_sums`, merged)."""
        g = q.get("games", 0)
        rounds, turns = q.get("rounds", 0), q.get("turns", 0)
        skill = []
        # margin:A|B:n, :sum, :sq (a bot named package.module:Class has a colon itself)
        pairs = sorted({k[len("margin:"):].rsplit(":", 1)[0] for k in q
                        if k.startswith("margin:")})
        for pair in pairs:
            a, b = pair.split("|")
            n = q.get(f"margin:{pair}:n", 0)
            s = q.get(f"margin:{pair}:sum", 0) / MARGIN_UNIT
            sq = q.get(f"margin:{pair}:sq", 0) / MARGIN_UNIT ** 2
            m = _clip(clustered_mean(ClusterSums(n, s, n, sq, s, n)), -1.0, 1.0)
            if m.mean < 0:
                a, b = b, a
                m = MeanCI(-m.mean, None if m.high is None else -m.high,
                           None if m.low is None else -m.low, m.se, m.n, m.clusters)
            need = games_needed(_sd(n, s, sq), m.mean)
            if m.low is None or m.high is None:
                verdict = "too few games for an interval"
            elif m.low == m.high:
                verdict = (f"{a} beat {b} by {100 * m.mean:.1f} points in every one of the "
                           f"{n} games (no spread: more games would tell more)")
            elif m.low > 0:
                verdict = (f"{a} beats {b} by {100 * m.mean:.1f} points of win rate "
                           f"(95% CI {100 * m.low:.1f} to {100 * m.high:.1f}): skill shows")
            else:
                verdict = (f"no detectable skill gap between {a} and {b} at {n} games"
                           + (f"; about {need} games would detect {100 * m.mean:.1f} points"
                              if need else ""))
            skill.append(SkillTrace(a, b, m, n, need, verdict))
        skill.sort(key=lambda t: -t.margin.mean)
        decided_share = _clip(clustered_mean(ClusterSums(g, q.get("decided", 0), rounds,
                                                   q.get("decided_sq", 0),
                                                   q.get("decided_rounds", 0),
                                                   q.get("rounds_sq", 0))), 0.0, 1.0)
        decision = clustered_proportion(ClusterSums(g, q.get("multi", 0), q.get("sampled", 0),
                                                    q.get("multi_sq", 0),
                                                    q.get("multi_sampled", 0),
                                                    q.get("sampled_sq", 0)))
        branching = _clip(clustered_mean(ClusterSums(g, q.get("plays", 0), q.get("sampled", 0),
                                                     q.get("plays_sq", 0),
                                                     q.get("plays_sampled", 0),
                                                     q.get("sampled_sq", 0))), 0.0, None)
        behind = q.get("from_behind", 0)
        lo, hi = wilson(behind, g)
        cap = q.get("capped", 0)
        clo, chi = wilson(cap, g)
        return cls(
            g, tuple(skill),
            _per_game(g, q.get("lead_changes", 0), q.get("lead_changes_sq", 0)),
            _per_game(g, q.get("comeback", 0), q.get("comeback_sq", 0)),
            ProportionCI(behind / g if g else 0.0, lo, hi, lo, hi, g, g, None),
            _per_game(g, q.get("decided", 0), q.get("decided_sq", 0)),
            decided_share, decision, branching, q.get("meld_phases", 0), q.get("sampled", 0),
            Spread(_per_game(g, rounds, q.get("rounds_sq", 0)),
                   _sd(g, rounds, q.get("rounds_sq", 0))),
            Spread(_per_game(g, turns, q.get("turns_sq", 0)),
                   _sd(g, turns, q.get("turns_sq", 0))),
            ProportionCI(cap / g if g else 0.0, clo, chi, clo, chi, g, g, None),
            q.get("sample_errors", 0))

    def rows(self) -> list[tuple[str, str, Any, Any, Any, str]]:
        """Every figure as ``(key, label, value, low, high, unit)`` in report order; unit
        ``"%"`` means a fraction shown in percent (skill margins: percentage points)."""
        out: list[tuple[str, str, Any, Any, Any, str]] = []
        for t in self.skill:
            out.append(("skill_trace", f"skill trace: {t.stronger} over {t.weaker}",
                        t.margin.mean, t.margin.low, t.margin.high, "pp"))
        for key, label, e, unit in (
                ("lead_changes", "lead changes per game", self.lead_changes, "changes"),
                ("comeback", "largest deficit a winner came back from", self.comeback,
                 "points"),
                ("won_from_behind", "games won from behind", self.won_from_behind, "%"),
                ("decided_round", "decided after round", self.decided_round, "round"),
                ("decided_share", "decided after (share of the game's rounds)",
                 self.decided_share, "%"),
                ("decision_share", "meld phases with more than one play",
                 self.decision_share, "%"),
                ("branching", "distinct plays per meld phase", self.branching, "plays"),
                ("rounds", "rounds per game", self.rounds.mean, "rounds"),
                ("turns", "turns per game", self.turns.mean, "turns"),
                ("capped", "games in which a round ran the stock out", self.capped, "%")):
            value = e.mean if isinstance(e, MeanCI) else e.rate
            out.append((key, label, value, e.low, e.high, unit))
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON form: each figure ``{value, low, high, unit}`` (fractions for ``%`` and
        ``pp``), the spreads, the skill traces with ``games_needed`` and ``verdict``, the
        sampling counts and :data:`DEFINITIONS`."""
        figs = {k: {"value": v, "low": lo, "high": hi, "unit": u}
                for k, _, v, lo, hi, u in self.rows() if k != "skill_trace"}
        return {
            "games": self.games, **figs,
            "rounds_sd": self.rounds.sd, "turns_sd": self.turns.sd,
            "meld_phases": self.meld_phases, "sampled_meld_phases": self.sampled,
            "sample_errors": self.sample_errors,
            "sample_every": SAMPLE_EVERY, "sample_every_no_solver": SAMPLE_EVERY_NO_SOLVER,
            "skill_trace": [{"stronger": t.stronger, "weaker": t.weaker,
                             "margin": t.margin.mean, "low": t.margin.low,
                             "high": t.margin.high, "games": t.games,
                             "games_needed": t.games_needed, "verdict": t.verdict}
                            for t in self.skill],
            "definitions": dict(DEFINITIONS),
        }


#: the difference each verdict says how many games would detect, per unit of a figure
#: (a fraction for win rates and shares: 0.02 is 2 points of percent)
DETECT: dict[str, float] = {"pp": 0.02, "%": 0.02, "rounds": 0.25, "turns": 5.0,
                            "turns/round": 0.5, "changes": 0.1, "points": 5.0, "round": 0.25,
                            "plays": 0.1}


def verdict(name: str, diff: float, low: float | None, high: float | None, games: int,
            unit: str, *, a: str = "A", b: str = "B") -> str:
    """A difference ``a − b`` with its 95% interval, in words: which side is higher and
    by how much when the interval excludes 0, else "no detectable change at this sample
    size" with the games that would detect ±:data:`DETECT` ``[unit]`` (two-sided 5% test,
    power :data:`POWER`; the per-game standard deviation is read off the interval as
    ``(high − low)/(2·z)·√games``). ``unit``: ``"pp"`` for fractions shown in points of
    percent, else the figure's unit."""
    def show(x: float) -> str:
        return f"{100 * x:.1f} points" if unit in ("pp", "%") else f"{x:.2f} {unit}"

    if low is None or high is None:
        return f"{name}: too few games for an interval"
    ci = f"95% CI {show(low).split()[0]} to {show(high)}"
    if low == high == diff == 0:
        return (f"{name}: the same under {a} and {b} in every one of the {games} games "
                "(no spread: more games would tell more)")
    if low > 0 or high < 0:
        more = "higher" if diff > 0 else "lower"
        return f"{name}: {show(abs(diff))} {more} under {a} than under {b} ({ci})"
    target = DETECT.get(unit, 0.0)
    sd = (high - low) / (2 * Z95) * math.sqrt(games)
    need = games_needed(sd, target)
    if need is not None and need <= games:
        more = f"; a change of ±{show(target)} would have been detected (about {need} games)"
    else:
        more = f"; about {need} games would detect ±{show(target)}" if need else ""
    return f"{name}: no detectable change at this sample size ({games} games, {ci}){more}"


def fmt(value: float | None, unit: str) -> str:
    """A figure as text in its unit: percent for ``%``, points of percent for ``pp``,
    two decimals otherwise (``–`` for ``None``)."""
    if value is None:
        return "–"
    if unit in ("%", "pp"):
        return f"{100 * value:.1f}" + ("%" if unit == "%" else " pp")
    return f"{value:.2f}"


__all__ = ["DEFINITIONS", "MARGIN_UNIT", "QualityReport", "SAMPLE_EVERY",
           "SAMPLE_EVERY_NO_SOLVER", "SOLVER_BOTS", "SkillTrace", "sample_every",
           "Spread", "count_plays", "drama", "fmt", "game_sums", "games_needed", "is_sampled",
           "verdict", "DETECT"]
