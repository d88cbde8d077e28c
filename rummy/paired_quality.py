"""Paired differences of every game-quality metric between two variants played on the
same seeds (an A/B batch, or two values of a sweep), with 95% intervals clustered by game.

Game ``i`` is played once under each variant with the same seed (the same deal and seats).
Each play gives a vector of exact integers (:func:`game_figures`): the win credit of each bot
per seat-game and of each seat, and the per-game figures of :mod:`rummy.quality` (lead
changes, comeback, decided round, rounds, turns, stock-out rounds, sampled meld phases and
the plays found there). :class:`PairedFigures` keeps, over the games both variants finished,
``N``, ``Σx`` and ``Σx xᵀ`` of the two vectors side by side, so chunks merge by addition in
any order.

:func:`compare` turns the sums into differences *first − second*, each with a normal 95%
interval of the per-game differences — the game (the pair of plays of one seed) is the
cluster, so the correlation between the two plays of a seed narrows the interval instead of
being ignored. A figure that is a ratio over the games (decided share = Σ decided round /
Σ rounds, decision share = Σ meld phases with a choice / Σ sampled, plays per sampled meld
phase, turns per round) uses the delta method on the same per-game clusters. Every entry has
one unit (``pp``: a fraction shown in points of percent; ``%``: a share; else the figure's
own unit) and a verdict in words (:func:`rummy.quality.verdict`).

Pure: no I/O; the same games in any order give the same sums.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rummy.quality import MARGIN_UNIT, drama, verdict
from rummy.stats import Z95


def game_figures(*, bots: Sequence[str], winners: Sequence[int], final: Sequence[int],
                 positions: Sequence[Sequence[int]], turns: int, reasons: Sequence[str],
                 plays: Sequence[int]) -> dict[str, int]:
    """The integers one play of a game contributes (keys below; win credits in
    1/:data:`rummy.quality.MARGIN_UNIT` of a win, exact for 1–5 seats and winners).

    Keys: ``win:<bot>`` (the bot's win credit per seat-game), ``seat:<s>`` (seat ``s``'s
    credit), ``rounds``, ``turns``, ``lead_changes``, ``comeback`` (points), ``from_behind``
    (0/1), ``decided`` (round), ``capped`` (0/1: a round ran the stock out, R8.3),
    ``sampled`` (meld phases whose plays were counted; a failed count, -1, is left out),
    ``multi`` (of those, with more than one play), ``plays`` (plays found there).
    """
    credit = MARGIN_UNIT // len(winners)
    seat = [credit if s in winners else 0 for s in range(len(bots))]
    out = {f"seat:{s}": c for s, c in enumerate(seat)}
    for b in sorted(set(bots)):
        mine = [s for s, x in enumerate(bots) if x == b]
        out[f"win:{b}"] = sum(seat[s] for s in mine) // len(mine)  # exact: see MARGIN_UNIT
    changes, comeback, decided = drama(positions, final, winners)
    counted = [p for p in plays if p >= 0]
    out.update(rounds=len(positions), turns=turns, lead_changes=changes, comeback=comeback,
               from_behind=int(comeback > 0), decided=decided,
               capped=int("stock" in reasons), sampled=len(counted),
               multi=sum(1 for p in counted if p > 1), plays=sum(counted))
    return out


def result_figures(r: Any) -> dict[str, int]:
    """:func:`game_figures` of a :class:`rummy.simulate.GameResult`."""
    return game_figures(bots=r.bots, winners=r.winners, final=r.final, positions=r.positions,
                        turns=sum(r.turns), reasons=r.reasons, plays=r.plays)


@dataclass(frozen=True)
class PairedFigures:
    """Exact sums over games played under two variants, *first* and *second*: ``games``,
    ``s1[name]`` = Σ of each entry and ``s2[(p, q)]`` = Σ of each product (``p <= q``);
    entry names are ``"1:" + key`` (first) and ``"2:" + key`` (second), keys of
    :func:`game_figures`."""

    games: int = 0
    s1: Mapping[str, int] = field(default_factory=dict)
    s2: Mapping[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def of_game(cls, first: Mapping[str, int], second: Mapping[str, int]) -> PairedFigures:
        """One game: its figures under the first and under the second variant."""
        x = {f"1:{k}": v for k, v in first.items()}
        x.update({f"2:{k}": v for k, v in second.items()})
        names = sorted(x)
        s2 = {(p, q): x[p] * x[q] for i, p in enumerate(names) for q in names[i:]}
        return cls(1, x, s2)

    def merge(self, other: PairedFigures) -> PairedFigures:
        """Sum of both (exact; order does not matter). An entry missing on one side counts
        0 there: merge only sums of the same line-ups."""
        s1 = dict(self.s1)
        for k, v in other.s1.items():
            s1[k] = s1.get(k, 0) + v
        s2 = dict(self.s2)
        for k2, v in other.s2.items():
            s2[k2] = s2.get(k2, 0) + v
        return PairedFigures(self.games + other.games, s1, s2)

    def to_dict(self) -> dict[str, Any]:
        """JSON form; inverse of :meth:`from_dict`."""
        return {"games": self.games, "s1": dict(sorted(self.s1.items())),
                "s2": [[p, q, v] for (p, q), v in sorted(self.s2.items())]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> PairedFigures:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            ValueError: a malformed document; KeyError: a missing key.
        """
        try:
            s2 = {(str(p), str(q)): int(v) for p, q, v in d["s2"]}
            return cls(int(d["games"]), {str(k): int(v) for k, v in d["s1"].items()}, s2)
        except (TypeError, AttributeError) as e:
            raise ValueError(f"malformed paired figures: {e}") from None

    # ----------------------------------------------------------------------- statistics

    def mean(self, name: str) -> float:
        """Mean of entry ``name`` per game (0 without games)."""
        return self.s1.get(name, 0) / self.games if self.games else 0.0

    def cov(self, p: str, q: str) -> float:
        """Sample covariance of two entries over the games (``nan`` under 2 games)."""
        n = self.games
        if n < 2:
            return math.nan
        key = (p, q) if p <= q else (q, p)
        return (n * self.s2.get(key, 0) - self.s1.get(p, 0) * self.s1.get(q, 0)) / (n * (n - 1))

    def half_width(self, coef: Mapping[str, float]) -> float | None:
        """Half-width of the 95% interval of the mean of ``Σ coef[p]·x_p`` over the games,
        each game one cluster (``None`` under 2 games)."""
        n = self.games
        if n < 2:
            return None
        var = sum(cp * cq * self.cov(p, q) for p, cp in coef.items() for q, cq in coef.items())
        return Z95 * math.sqrt(max(var, 0.0) / n)


#: the figures compared, in report order: (key, label, unit, kind); the labels are those of
#: :meth:`rummy.quality.QualityReport.rows`
FIGURES: tuple[tuple[str, str, str, str], ...] = (
    ("lead_changes", "lead changes per game", "changes", "drama"),
    ("comeback", "largest deficit a winner came back from", "points", "drama"),
    ("from_behind", "games won from behind", "%", "drama"),
    ("decided", "decided after round", "round", "decisiveness"),
    ("decided/rounds", "decided after (share of the game's rounds)", "%", "decisiveness"),
    ("multi/sampled", "meld phases with more than one play", "%", "decisions"),
    ("plays/sampled", "distinct plays per meld phase", "plays", "decisions"),
    ("rounds", "rounds per game", "rounds", "duration"),
    ("turns", "turns per game", "turns", "duration"),
    ("turns/rounds", "turns per round", "turns/round", "duration"),
    ("capped", "games in which a round ran the stock out", "%", "duration"),
)


def _entry(p: PairedFigures, metric: str, unit: str, kind: str, a: float, b: float,
           diff: float, half: float | None) -> dict[str, Any]:
    return {"metric": metric, "unit": unit, "kind": kind, "a": a, "b": b, "diff": diff,
            "low": None if half is None else diff - half,
            "high": None if half is None else diff + half, "games": p.games}


def compare(p: PairedFigures, *, first: str = "A", second: str = "B") -> list[dict[str, Any]]:
    """Every paired difference *first − second* of :class:`PairedFigures` ``p``, in report
    order: per bot in both line-ups (win rate per seat-game, ``pp``), per seat (win rate,
    ``pp``), the skill trace of each pair of bots in both line-ups (win-rate margin, ``pp``,
    named after the stronger bot under *first*), then :data:`FIGURES` (a ratio only when
    both variants have a denominator).

    Each entry: ``{"metric", "unit", "kind", "a", "b", "diff", "low", "high", "games",
    "verdict"}`` — ``a``/``b`` the first and second variant's values, fractions for ``pp``
    and ``%``; bounds ``None`` under 2 games; ``kind`` one of ``bot``, ``seat``, ``skill``,
    ``drama``, ``decisiveness``, ``decisions``, ``duration``; ``verdict`` in words with
    ``first`` and ``second`` as the variants' names.
    """
    out: list[dict[str, Any]] = []
    u = 1 / MARGIN_UNIT

    def simple(key: str, label: str, unit: str, kind: str, scale: float = 1.0) -> None:
        a, b = p.mean(f"1:{key}") * scale, p.mean(f"2:{key}") * scale
        out.append(_entry(p, label, unit, kind, a, b, a - b,
                          p.half_width({f"1:{key}": scale, f"2:{key}": -scale})))

    def names(prefix: str) -> list[str]:
        both = {k[2 + len(prefix):] for k in p.s1 if k.startswith(f"1:{prefix}")} & \
            {k[2 + len(prefix):] for k in p.s1 if k.startswith(f"2:{prefix}")}
        return sorted(both, key=lambda s: (len(s), s) if prefix == "seat:" else (0, s))

    bots = names("win:")
    for bot in bots:
        simple(f"win:{bot}", f"{bot} win rate", "pp", "bot", u)
    for s in names("seat:"):
        simple(f"seat:{s}", f"seat {s} win rate", "pp", "seat", u)
    for i, x in enumerate(bots):
        for y in bots[i + 1:]:
            hi, lo = (x, y) if p.mean(f"1:win:{x}") >= p.mean(f"1:win:{y}") else (y, x)
            coef = {f"1:win:{hi}": u, f"1:win:{lo}": -u, f"2:win:{hi}": -u, f"2:win:{lo}": u}
            m1 = (p.mean(f"1:win:{hi}") - p.mean(f"1:win:{lo}")) * u
            m2 = (p.mean(f"2:win:{hi}") - p.mean(f"2:win:{lo}")) * u
            out.append(_entry(p, f"skill trace ({hi} over {lo})", "pp", "skill", m1, m2,
                              m1 - m2, p.half_width(coef)))
    for key, label, unit, kind in FIGURES:
        if "/" not in key:
            simple(key, label, unit, kind)
            continue
        num, den = key.split("/")
        d1, d2 = p.mean(f"1:{den}"), p.mean(f"2:{den}")
        if not d1 or not d2:
            continue  # no denominator under one variant (e.g. no meld phase sampled)
        r1, r2 = p.mean(f"1:{num}") / d1, p.mean(f"2:{num}") / d2
        # delta method per game: (y1 − r1·x1)/x̄1 − (y2 − r2·x2)/x̄2 has mean 0 and the
        # variance of the ratio difference
        half = p.half_width({f"1:{num}": 1 / d1, f"1:{den}": -r1 / d1,
                             f"2:{num}": -1 / d2, f"2:{den}": r2 / d2})
        out.append(_entry(p, label, unit, kind, r1, r2, r1 - r2, half))
    for e in out:
        e["verdict"] = verdict(e["metric"], e["diff"], e["low"], e["high"], e["games"],
                               e["unit"], a=first, b=second)
    return out


__all__ = ["FIGURES", "PairedFigures", "compare", "game_figures", "result_figures"]
