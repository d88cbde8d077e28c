"""Rule tuning, the pure part: search spaces, objectives, figures and the Pareto front.

``rummy tune`` (:mod:`rummy_cli.tune`) searches rule variants (§11) for settings whose
balance report (:class:`rummy.balance.BalanceReport`) meets an objective. This module holds
what needs no optimiser and no I/O: the grammar of ``--space`` and ``--objective``, the
figures an objective may name (read off the report, each with its 95% interval), the
verdict of a candidate and the Pareto front of candidates.

Search space (``--space``), comma-separated ``VARIANT=VALUES``::

    knock_threshold=0..20        an integer range, both ends included
    joker_moves=free|locked      a choice (also true|false, or integers 5|10|15)

Objective (``--objective``), clauses separated by ``;``::

    objective = clause { ";" clause }
    clause    = goal | bound | range
    goal      = ("minimise" | "minimize" | "maximise" | "maximize") FIGURE
    bound     = FIGURE (">=" | "<=") NUMBER
    range     = FIGURE "in" "[" NUMBER "," NUMBER "]"
    FIGURE    = a name of :data:`FIGURES`, or win_rate[BOT]

Numbers are in the figure's unit (:data:`FIGURES`: shares in percent, the skill trace in
points of win rate, the seat-fairness p-value as a probability). A candidate *meets* a
bound when its estimate does, and meets it *surely* when the whole 95% interval does.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rummy.balance import BalanceReport
from rummy.rules import _RANGES, RuleSet

#: figures an objective may name: name -> (unit, definition). Shares are percent.
FIGURES: dict[str, tuple[str, str]] = {
    "rounds_per_game": ("rounds", "mean rounds per game (normal 95% CI over games)"),
    "turns_per_game": ("turns", "mean turns per game (95% CI over games)"),
    "seat_fairness_p": ("p", "p-value of the chi-square test of seat wins against 1/n "
                        "(no interval: it is a test)"),
    "skill_trace": ("pp", "win-rate margin of the stronger bot over the weaker, points of "
                    "percent (needs two different bots)"),
    "knock_rounds": ("%", "share of rounds ended by a knock that won"),
    "undercut_rounds": ("%", "share of rounds ended by a knock that was undercut"),
    "going_out_rounds": ("%", "share of rounds ended by going out"),
    "stock_rounds": ("%", "share of rounds ended by an exhausted stock"),
    "lead_changes": ("changes", "lead changes per game"),
    "comeback": ("points", "largest deficit a winner came back from"),
    "decided_share": ("%", "share of a game's rounds after which the winner led for good"),
    "decision_share": ("%", "meld phases with more than one legal play"),
    "branching": ("plays", "distinct plays per sampled meld phase"),
    "capped": ("%", "games in which a round ran the stock out"),
    "win_rate[BOT]": ("%", "win rate of BOT per seat-game (clustered by game)"),
}
_GOALS = {"minimise": -1, "minimize": -1, "maximise": 1, "maximize": 1}
_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_FIG = r"[a-z_]+(?:\[[^\]]+\])?"


class ObjectiveError(ValueError):
    """A ``--objective`` or ``--space`` that cannot be read; the message names the clause
    and what was wrong."""


@dataclass(frozen=True, slots=True)
class Param:
    """One dimension of the search space: a variant and its values (``low``/``high`` for an
    integer range, else ``choices`` in the order given)."""

    name: str
    low: int | None = None
    high: int | None = None
    choices: tuple[Any, ...] = ()

    def text(self) -> str:
        """As written in ``--space``."""
        if self.choices:
            return f"{self.name}=" + "|".join(_text(c) for c in self.choices)
        return f"{self.name}={self.low}..{self.high}"


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def parse_space(text: str) -> tuple[Param, ...]:
    """The search space of ``--space`` (see the module docstring).

    Raises:
        ObjectiveError: an item without ``=``, an unknown variant, a value the variant does
            not take (R11, with its range), an empty range (low above high), a value given
            twice, a variant given twice.
    """
    params: list[Param] = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            raise ObjectiveError(f"--space {text!r}: an empty item (two commas, or a comma "
                                 "at an end)")
        name, sep, raw = (p.strip() for p in item.partition("="))
        if not sep or not name or not raw:
            raise ObjectiveError(f"--space item {item!r}: expected VARIANT=LOW..HIGH or "
                                 "VARIANT=A|B|C (docs/rules.md §11)")
        if name not in _RANGES:
            raise ObjectiveError(f"--space item {item!r}: unknown rule variant {name!r}; "
                                 f"known: {', '.join(_RANGES)} (R11)")
        if any(p.name == name for p in params):
            raise ObjectiveError(f"--space: variant {name!r} given twice")
        m = re.fullmatch(r"([-+]?\d+)\s*\.\.\s*([-+]?\d+)", raw)
        if m:
            low, high = int(m.group(1)), int(m.group(2))
            if low > high:
                raise ObjectiveError(f"--space item {item!r}: the range is empty ({low} is "
                                     f"above {high})")
            for v in (low, high):
                _check_value(item, name, str(v))
            params.append(Param(name, low, high))
            continue
        values = [v.strip() for v in raw.split("|")]
        if "" in values:
            raise ObjectiveError(f"--space item {item!r}: an empty choice (write A|B|C)")
        typed = tuple(_check_value(item, name, v) for v in values)
        twice = next((v for i, v in enumerate(typed) if v in typed[:i]), None)
        if twice is not None:
            raise ObjectiveError(f"--space item {item!r}: value {_text(twice)} given twice")
        params.append(Param(name, choices=typed))
    return tuple(params)


def _check_value(item: str, name: str, value: str) -> Any:
    """``value`` as the rule set holds it (``8``, ``True``, ``"locked"``).

    Raises:
        ObjectiveError: the variant does not take it (R11).
    """
    try:
        return getattr(RuleSet.from_dict({name: value}), name)
    except ValueError as e:
        raise ObjectiveError(f"--space item {item!r}: {e}") from None


@dataclass(frozen=True, slots=True)
class Clause:
    """One clause of an objective: a goal (``direction`` +1 maximise, -1 minimise) or a
    constraint (``low``/``high`` bounds, either may be ``None``, both included).
    ``figure`` is a :data:`FIGURES` name or ``win_rate[BOT]``; ``text`` the clause as
    written."""

    text: str
    figure: str
    direction: int = 0
    low: float | None = None
    high: float | None = None

    @property
    def is_goal(self) -> bool:
        """True for ``minimise``/``maximise``."""
        return self.direction != 0


def _figure(clause: str, name: str) -> str:
    if name in FIGURES or re.fullmatch(r"win_rate\[[^\]]+\]", name):
        return name
    known = ", ".join(FIGURES)
    raise ObjectiveError(f"--objective clause {clause!r}: unknown figure {name!r}; known: "
                         f"{known}")


def parse_objective(text: str) -> tuple[Clause, ...]:
    """The clauses of ``--objective`` (grammar in the module docstring).

    Raises:
        ObjectiveError: an empty objective or clause, a clause that is neither a goal, a
            bound nor a range, an unknown figure, a range whose low end is above its high
            end, or the same figure as a goal twice; the message quotes the clause.
    """
    clauses: list[Clause] = []
    if not text.strip():
        raise ObjectiveError("--objective is empty: give at least one clause, e.g. "
                             "'rounds_per_game in [6, 9]; minimise stock_rounds'")
    parts = text.split(";")
    if len(parts) > 1 and not parts[-1].strip():
        parts = parts[:-1]  # a trailing ";"
    for raw in parts:
        c = " ".join(raw.split())
        if not c:
            raise ObjectiveError(f"--objective {text!r}: an empty clause (two ';' in a row)")
        low = c.lower()
        m = re.fullmatch(rf"(minimi[sz]e|maximi[sz]e)\s+({_FIG})", c, re.I)
        if m:
            fig = _figure(c, m.group(2))
            if any(k.is_goal and k.figure == fig for k in clauses):
                raise ObjectiveError(f"--objective clause {c!r}: {fig} is already a goal")
            clauses.append(Clause(c, fig, direction=_GOALS[m.group(1).lower()]))
            continue
        m = re.fullmatch(rf"({_FIG})\s*(>=|<=|>|<|=>|=<|==|=)\s*({_NUM})", c)
        if m:
            fig, op, num = _figure(c, m.group(1)), m.group(2), float(m.group(3))
            if op not in (">=", "<="):
                raise ObjectiveError(
                    f"--objective clause {c!r}: write >= or <= (not {op}): a figure is an "
                    "estimate, so a bound includes its end; for an exact value give a "
                    f"range, '{fig} in [A, B]'")
            clauses.append(Clause(c, fig, low=num if op == ">=" else None,
                                  high=num if op == "<=" else None))
            continue
        m = re.fullmatch(rf"({_FIG})\s+in\s*\[\s*({_NUM})\s*,\s*({_NUM})\s*\]", c)
        if m:
            fig, a, b = _figure(c, m.group(1)), float(m.group(2)), float(m.group(3))
            if a > b:
                raise ObjectiveError(f"--objective clause {c!r}: the range is empty ({a:g} "
                                     f"is above {b:g})")
            clauses.append(Clause(c, fig, low=a, high=b))
            continue
        first = re.match(r"[a-z_]+(?:\[[^\]]*\])?", low)
        if first and first.group(0) not in FIGURES and first.group(0) not in _GOALS \
                and not first.group(0).startswith("win_rate["):
            _figure(c, first.group(0))  # raises: an unknown figure
        raise ObjectiveError(
            f"--objective clause {c!r}: expected 'FIGURE >= N', 'FIGURE <= N', 'FIGURE in "
            "[A, B]', 'minimise FIGURE' or 'maximise FIGURE' (FIGURE: a name of rummy "
            "tune --help, e.g. rounds_per_game)")
    if not clauses:
        raise ObjectiveError("--objective is empty: give at least one clause, e.g. "
                             "'rounds_per_game in [6, 9]; minimise stock_rounds'")
    return tuple(clauses)


# ----------------------------------------------------------------------------- figures

Estimate = tuple[float, float | None, float | None]  #: value, 95% low, 95% high


def figures(rep: BalanceReport, names: Sequence[str]) -> dict[str, Estimate | None]:
    """The figures ``names`` of a report, each ``(value, low, high)`` in its unit of
    :data:`FIGURES` (percent for shares); ``None`` for a figure the report cannot give
    (a skill trace with one bot, a bot not in the line-up, no games)."""
    out: dict[str, Estimate | None] = {}
    q = rep.quality
    for name in names:
        e: Estimate | None = None
        if rep.games == 0:
            out[name] = None
            continue
        if name == "rounds_per_game":
            ci = rep.rounds_per_game_ci()
            e = (ci.mean, ci.low, ci.high)
        elif name == "seat_fairness_p":
            p = rep.fairness.p_value
            e = None if p is None else (p, None, None)
        elif name.endswith("_rounds"):
            key = name[: -len("_rounds")]
            pc = rep.round_end_ci()[key]
            e = _pct(pc.rate, pc.low, pc.high)
        elif name.startswith("win_rate["):
            bot = rep.bots.get(name[len("win_rate["):-1])
            e = None if bot is None else _pct(bot.win.rate, bot.win.low, bot.win.high)
        elif q is not None and name == "skill_trace":
            if q.skill:
                t = q.skill[0].margin
                e = _pct(t.mean, t.low, t.high)
        elif q is not None:
            rows = {k: (v, lo, hi, u) for k, _, v, lo, hi, u in q.rows()}
            key = "turns" if name == "turns_per_game" else name
            if key in rows:
                v, lo, hi, u = rows[key]
                e = _pct(v, lo, hi) if u == "%" else (v, lo, hi)
        out[name] = e
    return out


def _pct(v: float, lo: float | None, hi: float | None) -> Estimate:
    return (100 * v, None if lo is None else 100 * lo, None if hi is None else 100 * hi)


def violation(c: Clause, e: Estimate | None) -> float:
    """How far estimate ``e`` is outside constraint ``c``, relative to the bound
    (``0`` when met; ``|value − bound| / (|bound| + 1)``); a missing figure counts 1."""
    if e is None:
        return 1.0
    v = e[0]
    if c.low is not None and v < c.low:
        return (c.low - v) / (abs(c.low) + 1)
    if c.high is not None and v > c.high:
        return (v - c.high) / (abs(c.high) + 1)
    return 0.0


def status(c: Clause, e: Estimate | None) -> str:
    """``"sure"`` (the 95% interval inside the bounds), ``"met"`` (the estimate inside, the
    interval not wholly), ``"missed"`` (the estimate outside) or ``"unknown"`` (no
    figure)."""
    if e is None:
        return "unknown"
    if violation(c, e) > 0:
        return "missed"
    v, lo, hi = e
    lo = v if lo is None else lo
    hi = v if hi is None else hi
    if (c.low is None or lo >= c.low) and (c.high is None or hi <= c.high):
        return "sure"
    return "met"


def slack(c: Clause, e: Estimate | None) -> float:
    """How safely ``e`` meets constraint ``c``: the distance from the estimate to the
    nearest bound in standard errors (read off the 95% interval); negative when missed;
    ``inf`` for a figure without an interval that meets it."""
    if e is None:
        return -math.inf
    v, lo, hi = e
    se = None if lo is None or hi is None or hi <= lo else (hi - lo) / (2 * 1.959963984540054)
    gaps = []
    if c.low is not None:
        gaps.append(v - c.low)
    if c.high is not None:
        gaps.append(c.high - v)
    gap = min(gaps)
    if se is None:
        return math.inf if gap >= 0 else -math.inf
    return gap / se


# ----------------------------------------------------------------------------- seeds, front

def block_seed(seed: int, block: int) -> int:
    """The master seed of evaluation block ``block`` (0, 1, ...) of a tune: ``seed`` for
    block 0, else a SHA-256 derivation. Every candidate plays block ``k`` on the same seeds
    (:func:`rummy.simulate.game_seed`), so candidates are compared on paired deals."""
    if block == 0:
        return seed
    digest = hashlib.sha256(f"rummy-tune:{seed}:{block}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def pareto_front(points: Sequence[Sequence[float]]) -> list[int]:
    """Indices of the points no other point dominates (every coordinate is maximised: a
    point dominates another when it is at least as large everywhere and larger somewhere),
    in input order."""
    front = []
    for i, p in enumerate(points):
        if not any(all(a >= b for a, b in zip(q, p, strict=True)) and
                   any(a > b for a, b in zip(q, p, strict=True))
                   for j, q in enumerate(points) if j != i):
            front.append(i)
    return front


def changed_rules(params: Mapping[str, Any]) -> dict[str, Any]:
    """The rule-set variants of a candidate that differ from the default rules (JSON
    types), after validation (R11).

    Raises:
        InvalidRuleSetError: the combination is not a rule set.
    """
    return RuleSet(**dict(params)).changed()


__all__ = ["FIGURES", "Clause", "Estimate", "ObjectiveError", "Param", "block_seed",
           "changed_rules", "figures", "pareto_front", "parse_objective", "parse_space",
           "slack", "status", "violation"]
