"""Paired per-game statistics of an A/B batch, and their 95% confidence intervals.

An A/B batch plays every game index twice with the same seed: once under variant A (its bot
line-up and rules) and once under variant B. Game ``i`` contributes one integer vector ``x``
(:func:`game_vector`); a :class:`Paired` keeps ``N``, ``sum(x)`` and ``sum(x xᵀ)`` (upper
triangle), all exact integers, so merging chunks is addition: associative, commutative and
independent of the chunk size.

Vector layout for ``n`` players (``W = 2n + 2`` entries per variant, A first, then B)::

    [seat_win[0..n-1], slot_win[0..n-1], rounds, turns]   # variant A
    [seat_win[0..n-1], slot_win[0..n-1], rounds, turns]   # variant B

``seat_win[s]`` is seat ``s``'s win credit in 1/``WIN_UNIT`` of a win; ``slot_win[k]`` is the
credit of the bot at position ``k`` of the line-up list (``--bots``), whatever seat rotation
put it in, so two line-ups are compared slot by slot.

Intervals are normal approximations of the paired differences, ``mean ± z·sd/√N`` with
``z = rummy.stats.Z95`` (1.95996…); the ratio "turns per round" uses the delta method.
They are ``None`` when ``N < 2``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rummy.simulate import WIN_UNIT, GameResult
from rummy.stats import Z95


def width(players: int) -> int:
    """Entries per variant in the game vector: ``2 * players + 2``."""
    return 2 * players + 2


def _variant_vector(r: GameResult, index: int, rotate: bool) -> list[int]:
    n = len(r.bots)
    credit = WIN_UNIT // len(r.winners)
    seat = [credit if s in r.winners else 0 for s in range(n)]
    k = index % n if rotate else 0
    slot = [seat[(j + k) % n] for j in range(n)]  # slot j sits at seat (j + k) % n
    return seat + slot + [r.rounds, sum(r.turns)]


def game_vector(a: GameResult, b: GameResult, index: int, rotate: bool = True) -> list[int]:
    """The integer vector of game ``index`` played under A (``a``) and B (``b``).

    Raises:
        ValueError: the two results have different player counts.
    """
    if len(a.bots) != len(b.bots):
        raise ValueError("paired games must have the same number of players")
    return _variant_vector(a, index, rotate) + _variant_vector(b, index, rotate)


@dataclass(frozen=True)
class Paired:
    """Exact sums over paired games: ``games``, ``s1 = Σx`` and ``s2 = Σ x_p x_q`` (p ≤ q,
    row-major upper triangle, ``dim·(dim+1)/2`` entries, ``dim = 2·width(players)``)."""

    players: int
    games: int
    s1: tuple[int, ...]
    s2: tuple[int, ...]

    @property
    def dim(self) -> int:
        """Length of a game vector."""
        return 2 * width(self.players)

    @classmethod
    def empty(cls, players: int) -> Paired:
        """No games."""
        d = 2 * width(players)
        return cls(players, 0, (0,) * d, (0,) * (d * (d + 1) // 2))

    @classmethod
    def of_vector(cls, players: int, x: Sequence[int]) -> Paired:
        """One game's contribution.

        Raises:
            ValueError: ``x`` does not have ``2 * width(players)`` entries.
        """
        d = 2 * width(players)
        if len(x) != d:
            raise ValueError(f"a game vector for {players} players has {d} entries, got {len(x)}")
        s2 = tuple(x[p] * x[q] for p in range(d) for q in range(p, d))
        return cls(players, 1, tuple(x), s2)

    def merge(self, other: Paired) -> Paired:
        """Sum of both (exact; order does not matter).

        Raises:
            ValueError: different player counts.
        """
        if self.players != other.players:
            raise ValueError("cannot merge paired statistics of different player counts")
        return Paired(self.players, self.games + other.games,
                      tuple(a + b for a, b in zip(self.s1, other.s1, strict=True)),
                      tuple(a + b for a, b in zip(self.s2, other.s2, strict=True)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; inverse of :meth:`from_dict`."""
        return {"players": self.players, "games": self.games, "s1": list(self.s1),
                "s2": list(self.s2)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Paired:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            ValueError: vectors of the wrong length; KeyError: a missing key.
        """
        p = cls(int(d["players"]), int(d["games"]), tuple(d["s1"]), tuple(d["s2"]))
        if len(p.s1) != p.dim or len(p.s2) != p.dim * (p.dim + 1) // 2:
            raise ValueError("paired statistics have vectors of the wrong length")
        return p

    # ------------------------------------------------------------------------- statistics

    def _s2(self, p: int, q: int) -> int:
        if p > q:
            p, q = q, p
        d = self.dim
        return self.s2[p * d - p * (p - 1) // 2 + (q - p)]

    def cov(self, p: int, q: int) -> float:
        """Sample covariance of entries ``p`` and ``q`` (``nan`` when fewer than 2 games)."""
        n = self.games
        if n < 2:
            return math.nan
        return (n * self._s2(p, q) - self.s1[p] * self.s1[q]) / (n * (n - 1))

    def contrast(self, coef: dict[int, float]) -> tuple[float, float | None, float | None]:
        """Mean of ``Σ coef[p]·x_p`` over games with its 95% interval: ``(mean, low, high)``;
        the bounds are ``None`` when fewer than 2 games."""
        n = self.games
        mean = sum(c * self.s1[p] for p, c in coef.items()) / n if n else 0.0
        if n < 2:
            return mean, None, None
        var = sum(cp * cq * self.cov(p, q) for p, cp in coef.items() for q, cq in coef.items())
        half = Z95 * math.sqrt(max(var, 0.0) / n)
        return mean, mean - half, mean + half


def _entry(mean_a: float, mean_b: float, diff: tuple[float, float | None, float | None]
           ) -> dict[str, Any]:
    return {"a": mean_a, "b": mean_b, "diff": diff[0], "low": diff[1], "high": diff[2]}


def compare(p: Paired, bots_a: Sequence[str], bots_b: Sequence[str]) -> dict[str, Any]:
    """The A/B comparison; every ``diff`` is **A − B** (variant A minus variant B).

    Returns a JSON-ready dict: ``games``; ``seat_win_rate`` (per seat) and ``slot_win_rate``
    (per line-up slot, with ``bot_a``/``bot_b``): each ``{a, b, diff, low, high}`` with win
    rates as fractions of games; ``bot_win_rate`` (per bot in both line-ups: its win rate
    per seat-game, the mean of its slots' credits in each game, paired by game);
    ``rounds_per_game``, ``turns_per_game``, ``turns_per_round`` (the last by the delta
    method) in the same shape.
    """
    n, w, g = p.players, width(p.players), p.games
    unit = 1 / WIN_UNIT

    def mean(i: int) -> float:
        return p.s1[i] / g if g else 0.0

    def diff_of(i: int, scale: float = 1.0) -> dict[str, Any]:
        return _entry(mean(i) * scale, mean(w + i) * scale,
                      p.contrast({i: scale, w + i: -scale}))

    seats = [diff_of(s, unit) for s in range(n)]
    slots = []
    for j in range(n):
        e = diff_of(n + j, unit)
        e["bot_a"], e["bot_b"] = bots_a[j], bots_b[j]
        slots.append(e)
    bots: dict[str, Any] = {}
    for bot in sorted(set(bots_a) & set(bots_b)):
        ja = [j for j in range(n) if bots_a[j] == bot]
        jb = [j for j in range(n) if bots_b[j] == bot]
        coef = {n + j: unit / len(ja) for j in ja}
        coef.update({w + n + j: -unit / len(jb) for j in jb})
        mean_a = sum(mean(n + j) for j in ja) * unit / len(ja)
        mean_b = sum(mean(w + n + j) for j in jb) * unit / len(jb)
        bots[bot] = _entry(mean_a, mean_b, p.contrast(coef))
    r_i, t_i = 2 * n, 2 * n + 1
    out: dict[str, Any] = {"games": g, "seat_win_rate": seats, "slot_win_rate": slots,
                           "bot_win_rate": bots,
                           "rounds_per_game": diff_of(r_i), "turns_per_game": diff_of(t_i)}
    ra, rb, ta, tb = mean(r_i), mean(w + r_i), mean(t_i), mean(w + t_i)
    if ra and rb:
        qa, qb = ta / ra, tb / rb
        # delta method: z = (T_a - qa R_a)/R̄_a - (T_b - qb R_b)/R̄_b has mean ~0, var ~ var(D)
        _, lo, hi = p.contrast({t_i: 1 / ra, r_i: -qa / ra, w + t_i: -1 / rb,
                                w + r_i: qb / rb})
        d = qa - qb
        half = None if lo is None or hi is None else (hi - lo) / 2
        out["turns_per_round"] = _entry(qa, qb, (d, None if half is None else d - half,
                                                 None if half is None else d + half))
    else:
        out["turns_per_round"] = _entry(0.0, 0.0, (0.0, None, None))
    return out


def slot_scores(p: Paired, slot: int = 0) -> tuple[int, float, float]:
    """``(N, Σx, Σx²)`` of the per-game scores the SPRT reads (:mod:`rummy.sprt`):
    ``x = (1 + (b − a) / WIN_UNIT) / 2`` in [0, 1], with ``a``, ``b`` the win credit of
    line-up slot ``slot`` under variant A and under B (1: B's slot won and A's did not; 1/2:
    both or neither; shared wins in between), from the exact sums of ``p``.

    Raises:
        ValueError: ``slot`` is not a slot of the line-up.
    """
    n, w, d = p.players, width(p.players), p.dim
    if not 0 <= slot < n:
        raise ValueError(f"slot {slot} is not a slot of a {n}-player line-up")
    ia, ib = n + slot, w + n + slot

    def sq(i: int, j: int) -> int:  # Σ x_i x_j from the upper triangle, row-major
        i, j = min(i, j), max(i, j)
        return p.s2[i * d - i * (i - 1) // 2 + (j - i)]

    g = p.games
    sum_d = p.s1[ib] - p.s1[ia]
    sum_d2 = sq(ib, ib) - 2 * sq(ia, ib) + sq(ia, ia)
    total = g / 2 + sum_d / (2 * WIN_UNIT)
    total_sq = g / 4 + sum_d / (2 * WIN_UNIT) + sum_d2 / (4 * WIN_UNIT ** 2)
    return g, total, total_sq
