"""``rummy tune``: search rule variants for settings that meet an objective, with Optuna.

    rummy tune --space knock_threshold=0..20,hand_size=7..13,joker_moves=free|locked \\
        --objective "seat_fairness_p>=0.05; rounds_per_game in [6,9]; minimise stock_rounds" \\
        --budget-games 20000 --players 4 --seed 7 --json tune.json --html tune.html

A candidate (one value per variant of ``--space``) is evaluated in *blocks* of ``--games``
games; block ``k`` of every candidate plays the same seeds and line-ups
(:func:`rummy.tuning.block_seed`), so candidates are compared on paired deals. The search
(Optuna's TPE sampler, seeded, with the objective's bounds as constraints) asks for
candidates one at a time; a candidate it asks for again gets one more block, not a fresh
estimate. When the search's share of the budget is spent, the ``--top`` best candidates are
re-evaluated with more blocks, up to ``--final-games`` games each, and the best setting and
the Pareto front are read off those estimates with their 95% intervals (the grammar and the
figures: :mod:`rummy.tuning`).

The evaluation runs in local processes (``rummy tune``) or on the Celery workers
(``rummy batch tune``, :mod:`rummy_worker.tune`, one batch per block); both give the same
document for the same options, bar the wall time.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Protocol

from rummy.balance import BalanceReport
from rummy.simulate import Aggregate, merge_all
from rummy.tuning import (
    FIGURES,
    Clause,
    ObjectiveError,
    Param,
    block_seed,
    changed_rules,
    figures,
    pareto_front,
    parse_objective,
    parse_space,
    slack,
    status,
    violation,
)

TUNE_VERSION = 1  #: ``doc["tune_version"]`` of the JSON document
#: the figures every candidate reports, beside those its objective names
SHOWN = ("rounds_per_game", "seat_fairness_p", "skill_trace", "stock_rounds")
SEARCH_SHARE_OF_TIME = 0.7  #: with --budget-seconds, the search's share; the rest re-evaluates

EPILOG = """examples:
  rummy tune --space knock_threshold=0..20,joker_moves=free|locked \\
      --objective "rounds_per_game in [3, 6]; maximise knock_rounds" \\
      --players 2 --bots greedy,basic --games 30 --budget-games 1500 --seed 7
  rummy tune --space knock_threshold=0..20,hand_size=7..13 \\
      --objective "seat_fairness_p>=0.05; rounds_per_game in [6,9]; skill_trace>=10; \\
minimise stock_rounds" --budget-seconds 600 --json t.json --html t.html

objective grammar (clauses separated by ';'; numbers in the figure's unit):
  FIGURE >= N | FIGURE <= N | FIGURE in [A, B] | minimise FIGURE | maximise FIGURE
figures (unit):
""" + "\n".join(f"  {k} ({u}): {d}" for k, (u, d) in FIGURES.items()) + """

A candidate meets a bound when its estimate does ("met"), surely when its whole 95% interval
does ("sure"). The leaders (those on the Pareto front first) are re-evaluated until the
top ones all have --final-games games, as estimates settle (racing). The best setting is
chosen among the re-evaluated candidates that meet every bound, by the goals in order
(ties: the safest margin); the Pareto front of every candidate that meets every bound
trades the goals off (with one goal: the goal against the margin to the nearest bound).
Docs: README, "Tuning the rules"."""


class Evaluator(Protocol):
    """Plays one block of games of one candidate and returns its aggregate."""

    def __call__(self, rules: dict[str, Any], seed: int, games: int,
                 advance: Callable[[int], None]) -> Aggregate:
        """``games`` games (indices 0..games-1) under the changed variants ``rules`` with
        master seed ``seed``; ``advance(n)`` after each ``n`` finished games."""
        ...


@dataclass
class Candidate:
    """One setting of the space and what is known of it."""

    params: dict[str, Any]
    changed: dict[str, Any]
    agg: Aggregate | None = None
    blocks: int = 0
    trials: list[int] = field(default_factory=list)
    invalid: str = ""
    reevaluated: bool = False
    cached: tuple[int, dict[str, Any]] | None = None  #: (blocks, figures) last computed

    @property
    def games(self) -> int:
        """Games played (finished ones)."""
        return self.agg.games if self.agg is not None else 0


def _unit(name: str) -> str:
    return FIGURES["win_rate[BOT]" if name.startswith("win_rate[") else name][0]


@dataclass
class Tuner:
    """The search loop: Optuna asks, an :class:`Evaluator` plays, the loop keeps the budget.

    Attributes (the options of ``rummy tune``): ``space``, ``objective``, ``bots`` (the
    line-up), ``players``, ``seed``, ``games`` (per block), ``final_games``, ``top``,
    ``budget_games``, ``budget_seconds``, ``trials`` (0: no limit).
    """

    space: tuple[Param, ...]
    objective: tuple[Clause, ...]
    bots: tuple[str, ...]
    players: int
    seed: int
    games: int
    final_games: int
    top: int
    budget_games: int | None
    budget_seconds: float | None
    trials: int = 0
    candidates: dict[tuple[Any, ...], Candidate] = field(default_factory=dict)
    used: int = 0
    stopped_by: str = ""

    @property
    def goals(self) -> list[Clause]:
        """The objective's goals, in order."""
        return [c for c in self.objective if c.is_goal]

    @property
    def bounds(self) -> list[Clause]:
        """The objective's bounds and ranges."""
        return [c for c in self.objective if not c.is_goal]

    def names(self) -> list[str]:
        """Every figure a candidate reports: :data:`SHOWN` and the objective's."""
        out = list(SHOWN)
        for c in self.objective:
            if c.figure not in out:
                out.append(c.figure)
        return out

    def figures_of(self, cand: Candidate) -> dict[str, Any]:
        """The candidate's figures (:func:`rummy.tuning.figures`) of its merged games."""
        assert cand.agg is not None
        if cand.cached is None or cand.cached[0] != cand.blocks:  # new games: recompute
            cand.cached = (cand.blocks, figures(BalanceReport.of(cand.agg), self.names()))
        return cand.cached[1]

    def score(self, cand: Candidate) -> tuple[list[float], list[float]]:
        """``(values, violations)`` for Optuna: the goals' figures (or, without a goal, the
        total violation), and one violation per bound (<= 0 is met)."""
        figs = self.figures_of(cand)
        viol = [violation(c, figs[c.figure]) for c in self.bounds]
        if not self.goals:
            return [sum(viol)], viol
        values = []
        for g in self.goals:
            e = figs[g.figure]
            values.append(math.nan if e is None else e[0])
        return values, viol

    def rank_key(self, cand: Candidate) -> tuple[float, ...]:
        """Sort key, best first: meets every bound (else the smaller violation), then the
        goals in order (lexicographic, so the best is on the Pareto front), then the margin
        to the nearest bound."""
        figs = self.figures_of(cand)
        viol = sum(violation(c, figs[c.figure]) for c in self.bounds)
        goals = []
        for g in self.goals:
            e = figs[g.figure]
            goals.append(math.inf if e is None else -g.direction * e[0])
        return (0.0 if viol == 0 else 1.0, viol, *goals, -self.margin(figs))

    def margin(self, figs: dict[str, Any]) -> float:
        """The smallest :func:`rummy.tuning.slack` over the bounds (``inf`` without one)."""
        return min((slack(c, figs[c.figure]) for c in self.bounds), default=math.inf)

    # ------------------------------------------------------------------------ the loop

    def _left(self, t0: float, share: float = 1.0) -> bool:
        if self.budget_seconds is not None and \
                time.monotonic() - t0 >= share * self.budget_seconds:
            self.stopped_by = "time budget"
            return False
        return True

    def _fits(self, limit: int | None) -> bool:
        if limit is not None and self.used + self.games > limit:
            self.stopped_by = "games budget"
            return False
        return True

    def _play(self, cand: Candidate, evaluate: Evaluator, advance: Callable[[int], None]
              ) -> None:
        agg = evaluate(cand.changed, block_seed(self.seed, cand.blocks), self.games, advance)
        cand.agg = agg if cand.agg is None else cand.agg.merge(agg)
        cand.blocks += 1
        self.used += self.games

    def run(self, evaluate: Evaluator, show: Callable[[str], None],
            advance: Callable[[int], None]) -> None:
        """Search, then re-evaluate the top candidates, within the budget: the search
        goes on while the games left cover one more block and the re-evaluation of the
        current top candidates (and, with ``--budget-seconds``, for its share of the time);
        then the leaders (:meth:`leaders`) get more blocks until the top ``top`` of them all
        have ``final_games`` games: a candidate that led on a lucky block and fell back is
        replaced by the next (racing). A block that has started is finished."""
        import optuna
        from optuna.samplers import TPESampler
        from optuna.study import StudyDirection
        from optuna.trial import TrialState

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        directions = ([StudyDirection.MAXIMIZE if g.direction > 0 else
                       StudyDirection.MINIMIZE for g in self.goals]
                      or [StudyDirection.MINIMIZE])
        sampler = TPESampler(seed=self.seed,
                             n_startup_trials=min(8, max(2, self._size() // 2)))
        study = optuna.create_study(directions=directions, sampler=sampler)
        t0 = time.monotonic()
        n = 0
        while self._fits(self._search_limit()) and self._left(t0, SEARCH_SHARE_OF_TIME):
            if self.trials and n >= self.trials:
                self.stopped_by = "trials"
                break
            trial = study.ask()
            params = {}
            for p in self.space:
                if p.choices:
                    params[p.name] = trial.suggest_categorical(p.name, list(p.choices))
                else:
                    assert p.low is not None and p.high is not None
                    params[p.name] = trial.suggest_int(p.name, p.low, p.high)
            key = tuple(params[p.name] for p in self.space)
            cand = self.candidates.get(key)
            if cand is None:
                try:
                    changed = changed_rules(params)
                    from rummy.rules import RuleSet
                    RuleSet(**params).check_players(self.players)
                    cand = Candidate(params, changed)
                except ValueError as e:
                    cand = Candidate(params, {}, invalid=str(e))
                self.candidates[key] = cand
            cand.trials.append(trial.number)
            n += 1
            if cand.invalid:
                study.tell(trial, state=TrialState.FAIL)
                continue
            show(f"search: trial {n}, {_label(params)}")
            self._play(cand, evaluate, advance)
            values, viol = self.score(cand)
            if any(math.isnan(v) for v in values):
                study.tell(trial, state=TrialState.FAIL)
                continue
            if self.goals:  # without a goal the value is the violation itself
                for i, v in enumerate(viol):
                    trial.set_constraint(f"bound {i}", v)
            study.tell(trial, values if len(values) > 1 else values[0])
        while True:  # noisy evaluation: more paired blocks for the leaders, until the top
            # ones (which may change as estimates settle) all have final_games games
            top = self.leaders()[:self.top]
            for c in top:
                if c.games >= self.final_games:
                    c.reevaluated = True
            pending = [c for c in top if c.games < self.final_games]
            if not pending or not self._fits(self.budget_games) or not self._left(t0):
                break
            cand = pending[0]
            cand.reevaluated = True
            show(f"re-evaluating: {_label(cand.params)} ({cand.games} games)")
            self._play(cand, evaluate, advance)
        if not self.stopped_by:
            self.stopped_by = "every top candidate re-evaluated"

    def leaders(self) -> list[Candidate]:
        """The played candidates, best first: those on the Pareto front of the ones that
        meet every bound (:meth:`front`), then the rest, each group by :meth:`rank_key`."""
        ranked = sorted((c for c in self.candidates.values() if c.agg is not None),
                        key=self.rank_key)
        feasible = [c for c in ranked if self.entry(c)["meets_all"]]
        on_front = {id(c) for c in self.front(feasible)[1]}
        return [c for c in ranked if id(c) in on_front] + \
            [c for c in ranked if id(c) not in on_front]

    def _search_limit(self) -> int | None:
        """The games the search may use: the budget less what re-evaluating the current
        top candidates to ``final_games`` would take (at least ``top`` blocks' worth of
        each, as later candidates may need it)."""
        if self.budget_games is None:
            return None
        top = self.leaders()[:self.top]
        need = sum(max(0, self.final_games - c.games) for c in top)
        need += (self.top - len(top)) * max(0, self.final_games - self.games)
        return self.budget_games - need

    def _size(self) -> int:
        size = 1
        for p in self.space:
            size *= len(p.choices) if p.choices else (p.high or 0) - (p.low or 0) + 1
        return size

    # ------------------------------------------------------------------------ the report

    def entry(self, cand: Candidate) -> dict[str, Any]:
        """A candidate as JSON: its rules, games, figures with intervals and units, each
        bound's status (:func:`rummy.tuning.status`) and slack."""
        figs = self.figures_of(cand)
        return {
            "rules": cand.params, "changed": cand.changed, "games": cand.games,
            "blocks": cand.blocks, "trials": cand.trials, "reevaluated": cand.reevaluated,
            "figures": {k: None if e is None else
                        {"value": e[0], "low": e[1], "high": e[2], "unit": _unit(k)}
                        for k, e in figs.items()},
            "bounds": [{"clause": c.text, "status": status(c, figs[c.figure]),
                        "slack": _finite(slack(c, figs[c.figure]))} for c in self.bounds],
            "meets_all": all(violation(c, figs[c.figure]) == 0 for c in self.bounds),
            "margin": _finite(self.margin(figs)),
        }

    def document(self, seconds: float) -> dict[str, Any]:
        """The tune document (what ``--json`` writes); see docs in README "Tuning the
        rules". The same options give the same document locally and on the workers, bar
        ``seconds``."""
        played = [c for c in self.candidates.values() if c.agg is not None]
        ranked = sorted(played, key=self.rank_key)
        feasible = [c for c in ranked if self.entry(c)["meets_all"]]
        pool = [c for c in feasible if c.reevaluated] or feasible
        best = pool[0] if pool else None
        axes, front = self.front(feasible)
        return {
            "tune_version": TUNE_VERSION,
            "space": [p.text() for p in self.space],
            "objective": [c.text for c in self.objective],
            "players": self.players, "lineup": list(self.bots), "seed": self.seed,
            "games_per_block": self.games, "final_games": self.final_games, "top": self.top,
            "budget": {"games": self.budget_games, "seconds": self.budget_seconds},
            "games_played": self.used, "stopped_by": self.stopped_by,
            "trials": sum(len(c.trials) for c in self.candidates.values()),
            "paired": "block k of every candidate plays the same seeds and line-ups",
            "best": None if best is None else self.entry(best),
            "front_axes": axes,
            "front": [self.entry(c) for c in front],
            "candidates": [self.entry(c) for c in ranked],
            "invalid": [{"rules": c.params, "error": c.invalid}
                        for c in self.candidates.values() if c.invalid],
            "seconds": round(seconds, 1),
        }

    def front(self, feasible: list[Candidate]) -> tuple[list[str], list[Candidate]]:
        """The Pareto front of ``feasible`` (the candidates that meet every bound, however
        many games each has; the document gives each its games): over the goals, or, with
        one goal or none, over the goal and the margin to the nearest bound."""
        axes = [f"{'maximise' if g.direction > 0 else 'minimise'} {g.figure}"
                for g in self.goals]
        use_margin = len(self.goals) < 2 and bool(self.bounds)
        if use_margin:
            axes.append("maximise margin (standard errors to the nearest bound)")
        points = []
        for c in feasible:
            figs = self.figures_of(c)
            pt = [g.direction * (figs[g.figure][0] if figs[g.figure] else -math.inf)
                  for g in self.goals]
            if use_margin:
                m = self.margin(figs)
                pt.append(1e9 if m == math.inf else m)
            points.append(pt)
        if not points or not points[0]:
            return axes, feasible[:1]
        return axes, [feasible[i] for i in pareto_front(points)]


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _label(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                     for k, v in params.items())


# ----------------------------------------------------------------------------- local runs

def _chunk(task: tuple[list[str], int, int, int, dict[str, Any]]) -> dict[str, Any]:
    """Worker-process body: games [start, stop) as an aggregate dict."""
    from rummy.rules import RuleSet
    from rummy.simulate import play_range

    bots, seed, start, stop, rules = task
    return play_range(bots, seed, start, stop, RuleSet.from_dict(rules)).to_dict()


class LocalEvaluator:
    """Blocks played in a pool of local processes (``--jobs``)."""

    def __init__(self, bots: tuple[str, ...], jobs: int) -> None:
        self.bots = list(bots)
        self.jobs = jobs
        self.pool = ProcessPoolExecutor(max_workers=jobs)

    def __call__(self, rules: dict[str, Any], seed: int, games: int,
                 advance: Callable[[int], None]) -> Aggregate:
        """See :class:`Evaluator`."""
        size = max(1, min(25, -(-games // (self.jobs * 4))))
        futures = {self.pool.submit(_chunk, (self.bots, seed, a, min(a + size, games), rules)):
                   min(a + size, games) - a for a in range(0, games, size)}
        parts = []
        for fut in as_completed(futures):
            parts.append(Aggregate.from_dict(fut.result()))
            advance(futures[fut])
        return merge_all(len(self.bots), parts)

    def close(self) -> None:
        """Stop the processes."""
        self.pool.shutdown(cancel_futures=True)


# ----------------------------------------------------------------------------- command

def tuner_from_args(args: argparse.Namespace) -> Tuner:
    """Validate the options of ``rummy tune`` / ``rummy batch tune``.

    Raises:
        SystemExit: code 2 with an ``error: ...`` line naming what was wrong: the space or
            objective (:class:`rummy.tuning.ObjectiveError`), no budget, a budget too small
            for two blocks of search after the re-evaluation's share, a figure the line-up
            cannot give (a skill trace with one bot, a win rate of a bot not playing).
    """
    from rummy_cli.main import _lineup, usage_error

    try:
        space = parse_space(args.space)
        objective = parse_objective(args.objective)
    except ObjectiveError as e:
        raise usage_error(f"error: {e}") from None
    if not 2 <= args.players <= 5:
        raise usage_error(f"error: --players must be 2..5, got {args.players} (R1.1)")
    bots = tuple(_lineup(args.bots, args.players))
    for c in objective:
        if c.figure == "skill_trace" and len(set(bots)) < 2:
            raise usage_error(f"error: --objective clause {c.text!r}: the skill trace needs "
                              "two different bots in --bots")
        if c.figure.startswith("win_rate[") and c.figure[9:-1] not in bots:
            raise usage_error(f"error: --objective clause {c.text!r}: bot "
                              f"{c.figure[9:-1]!r} is not in the line-up "
                              f"{','.join(bots)}")
    if args.games < 2:
        raise usage_error("error: --games (per block) must be at least 2, for an interval")
    final = args.final_games if args.final_games is not None else 4 * args.games
    if final < args.games:
        raise usage_error(f"error: --final-games {final} is below --games {args.games}")
    if args.top < 1:
        raise usage_error("error: --top must be at least 1")
    if args.budget_games is None and args.budget_seconds is None:
        raise usage_error("error: give a budget: --budget-games N and/or --budget-seconds S")
    if args.budget_seconds is not None and args.budget_seconds <= 0:
        raise usage_error("error: --budget-seconds must be positive")
    reserve = args.top * (final - args.games)
    if args.budget_games is not None and args.budget_games - reserve < 2 * args.games:
        raise usage_error(
            f"error: --budget-games {args.budget_games} leaves less than two blocks of "
            f"{args.games} games for the search after re-evaluating --top {args.top} "
            f"candidates to --final-games {final} ({reserve} games); give at least "
            f"{reserve + 2 * args.games}")
    return Tuner(space, objective, bots, args.players, args.seed, args.games, final,
                 args.top, args.budget_games, args.budget_seconds, args.trials or 0)


def run_with_progress(tuner: Tuner, evaluate: Evaluator, quiet: bool) -> dict[str, Any]:
    """Run ``tuner`` with one progress display (rich; on stderr) and return its document."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    t0 = time.perf_counter()
    with Progress(TextColumn("[bold]tuning"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("games"), TimeElapsedColumn(), TextColumn("{task.fields[what]}"),
                  console=Console(stderr=True), disable=quiet) as progress:
        bar = progress.add_task("games", total=tuner.budget_games, what="")
        tuner.run(evaluate, lambda s: progress.update(bar, what=s),
                  lambda k: progress.advance(bar, k))
    return tuner.document(time.perf_counter() - t0)


def _fig_text(f: dict[str, Any] | None) -> str:
    if f is None:
        return "–"
    unit = f["unit"]
    v = f"{f['value']:.3f}" if unit == "p" else f"{f['value']:.2f}"
    if f["low"] is None or f["high"] is None:
        return v
    return f"{v} [{f['low']:.2f}, {f['high']:.2f}]"


def print_document(doc: dict[str, Any]) -> None:
    """The best setting and the Pareto front as rich tables (stdout)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 160)  # a file: no wrapping
    best = doc["best"]
    console.print(f"[bold]rummy tune[/bold]: {doc['trials']} trials, {doc['games_played']} "
                  f"games, stopped by {doc['stopped_by']}; objective: "
                  + "; ".join(doc["objective"]), highlight=False)
    if best is None:
        console.print("[yellow]no candidate meets every bound of the objective[/yellow]")
    rows = doc["front"] or ([best] if best else [])
    if not rows:
        return
    names = list(rows[0]["figures"])
    table = Table(title=("Pareto front (" + "; ".join(doc["front_axes"]) + ")" if
                         doc["front_axes"] else "Best setting") + ", values [95% CI]")
    table.add_column("rules", overflow="fold")
    table.add_column("games", justify="right")
    for n in names:
        table.add_column(f"{n} ({_unit(n)})", justify="right", overflow="fold")
    for e in rows:
        mark = " (best)" if best is not None and e["rules"] == best["rules"] else ""
        table.add_row(_label(e["rules"]) + mark, str(e["games"]),
                      *(_fig_text(e["figures"][n]) for n in names))
    console.print(table)
    if best is not None:
        console.print("best: " + _label(best["rules"]) + "; " + ", ".join(
            f"{b['clause']}: {b['status']}" for b in best["bounds"]), highlight=False)


def front_chart(doc: dict[str, Any]) -> str:
    """The Pareto front as an inline SVG chart (matplotlib, :meth:`Charts.front`): every
    candidate that meets the bounds on the front's two axes with its 95% intervals (the
    goals, or the goal and the margin), or ``""`` when the front has fewer than two axes or
    matplotlib is missing (the page says so)."""
    from rummy_cli.charts import Charts, matplotlib_missing, missing_note

    axes = doc["front_axes"]
    if len(axes) < 2:
        return ""
    missing = matplotlib_missing()
    if missing:
        return missing_note(missing)

    def coord(e: dict[str, Any], axis: str) -> Any:
        if axis.startswith("maximise margin"):
            return None if e["margin"] is None else (e["margin"], None, None)
        f = e["figures"][axis.split(" ", 1)[1]]
        return None if f is None else (f["value"], f["low"], f["high"])

    on = [e["rules"] for e in doc["front"]]
    names = [p.split("=", 1)[0] for p in doc["space"]]

    def short(rules: dict[str, Any]) -> str:
        return "/".join(str(rules[n]).lower() if isinstance(rules[n], bool) else
                        str(rules[n]) for n in names)

    pts = [(short(e["rules"]), coord(e, axes[0]), coord(e, axes[1]), e["rules"] in on)
           for e in doc["candidates"] if e["meets_all"]]
    return ("<div class=plots>" + Charts().front(
        pts, "Pareto front (95% CI); points: " + "/".join(names),
        axes[0], axes[1]) + "</div>")


def render_html(doc: dict[str, Any]) -> str:
    """One self-contained, valid HTML page: the objective, the best setting, the Pareto
    front and every candidate, each figure with its 95% interval."""
    def table(rows: list[dict[str, Any]], caption: str, best: Any) -> str:
        if not rows:
            return f"<p>{html.escape(caption)}: none.</p>"
        names = list(rows[0]["figures"])
        head = "".join(f"<th scope=col>{html.escape(n)} ({html.escape(_unit(n))})</th>"
                       for n in names)
        body = []
        for e in rows:
            is_best = best is not None and e["rules"] == best["rules"]
            cells = "".join(f"<td>{html.escape(_fig_text(e['figures'][n]))}</td>"
                            for n in names)
            bounds = "; ".join(f"{b['clause']}: {b['status']}" for b in e["bounds"]) or "–"
            body.append(f"<tr{' class=best' if is_best else ''}><th scope=row>"
                        f"{html.escape(_label(e['rules']))}</th><td>{e['games']}</td>"
                        f"{cells}<td>{html.escape(bounds)}</td></tr>")
        return (f"<table><caption>{html.escape(caption)}</caption><thead><tr>"
                f"<th scope=col>rules</th><th scope=col>games</th>{head}"
                f"<th scope=col>bounds</th></tr></thead><tbody>{''.join(body)}</tbody>"
                "</table>")

    best = doc["best"]
    title = f"rummy tune: {doc['trials']} trials, {doc['games_played']} games"
    chart = front_chart(doc)
    if best is None:
        answer = "<p id=best>No candidate meets every bound of the objective.</p>"
    else:
        answer = (f"<p id=best>Best setting: <strong>{html.escape(_label(best['rules']))}"
                  f"</strong> ({best['games']} games; "
                  + html.escape("; ".join(f"{b['clause']}: {b['status']}"
                                          for b in best["bounds"]) or "no bounds")
                  + ").</p>")
    axes = html.escape("; ".join(doc["front_axes"])) or "the objective"
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title><style>body{{font-family:sans-serif;"
        "margin:2em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid "
        "#999;padding:.3em .6em;text-align:right}caption{font-weight:bold;text-align:left}"
        "tr.best{background:#e8f4e8}code{background:#f3f3f3;padding:1px 4px}</style>"
        f"</head><body><h1>{html.escape(title)}</h1>"
        f"<p>Space <code>{html.escape(', '.join(doc['space']))}</code>; objective "
        f"<code>{html.escape('; '.join(doc['objective']))}</code>; {doc['players']} players, "
        f"line-up {html.escape(','.join(doc['lineup']))}, seed {doc['seed']}; blocks of "
        f"{doc['games_per_block']} games on paired seeds, the top {doc['top']} re-evaluated "
        f"up to {doc['final_games']} games; stopped by {html.escape(doc['stopped_by'])}. "
        "Intervals are 95% (the balance report's); a bound is <em>met</em> when the "
        "estimate meets it and <em>sure</em> when the whole interval does.</p>"
        + answer + chart + table(doc["front"], f"Pareto front ({axes})", best)
        + table(doc["candidates"], "Every candidate, best first", best)
        + "</body></html>\n")


def write_outputs(doc: dict[str, Any], args: argparse.Namespace) -> int:
    """Print the tables, write ``--json`` and ``--html`` if asked; 0, or 1 when a file
    cannot be written."""
    print_document(doc)
    try:
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=2, sort_keys=True)
                f.write("\n")
        if args.html:
            with open(args.html, "w", encoding="utf-8") as f:
                f.write(render_html(doc))
    except OSError as e:
        print(f"error: cannot write {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


def optuna_missing() -> bool:
    """Whether Optuna is missing (then say which extra brings it, on stderr)."""
    try:
        import optuna  # noqa: F401
    except ImportError as e:
        print(f"error: `rummy tune` needs the 'tune' extra: pip install "
              f"'manipulation-rummy[tune]' ({e})", file=sys.stderr)
        return True
    return False


def cmd_tune(args: argparse.Namespace) -> int:
    """``rummy tune``: the search in local processes."""
    from rummy_cli.outputs import output_problem

    tuner = tuner_from_args(args)
    if optuna_missing():
        return 1
    problem = output_problem(args.json, args.html)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    evaluate = LocalEvaluator(tuner.bots, max(1, args.jobs or os.cpu_count() or 1))
    try:
        doc = run_with_progress(tuner, evaluate, args.quiet)
    finally:
        evaluate.close()
    return write_outputs(doc, args)


def add_tune_options(p: Any) -> None:
    """The options ``rummy tune`` and ``rummy batch tune`` share."""
    p.add_argument("--space", required=True, metavar="VARIANT=LOW..HIGH|A|B,...",
                   help="the rule variants to search (docs/rules.md §11): integer ranges "
                   "LOW..HIGH and choices A|B|C, comma-separated (required)")
    p.add_argument("--objective", required=True, metavar="CLAUSES",
                   help="bounds and goals on the report's figures, separated by ';' (see "
                   "below; required)")
    p.add_argument("--budget-games", type=int, metavar="N",
                   help="stop after N games in all (search and re-evaluation)")
    p.add_argument("--budget-seconds", type=float, metavar="S",
                   help=f"stop after S seconds ({SEARCH_SHARE_OF_TIME:.0%} search, the rest "
                   "re-evaluation; checked between blocks)")
    p.add_argument("--games", type=int, default=100,
                   help="games per evaluation block (default 100)")
    p.add_argument("--final-games", type=int, metavar="N",
                   help="re-evaluate the top candidates up to N games each (default 4 x "
                   "--games)")
    p.add_argument("--top", type=int, default=3,
                   help="candidates re-evaluated after the search (default 3)")
    p.add_argument("--trials", type=int, default=0,
                   help="at most this many search trials (default: the budget decides)")
    p.add_argument("--players", type=int, default=4, help="players per game, 2..5 (default 4)")
    p.add_argument("--bots", help="comma-separated line-up, cycled over the seats (default "
                   "strategic,greedy); restricted bots (greedy!no-rearrange) too")
    p.add_argument("--seed", type=int, default=0,
                   help="master seed of the games and of the sampler (default 0)")
    p.add_argument("--json", metavar="FILE", help="write the tune document as JSON")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    p.add_argument("--quiet", action="store_true", help="no progress display")


def add_tune_parser(sub: Any) -> None:
    """Register ``tune`` on the ``rummy`` subparsers."""
    p = sub.add_parser("tune", help="search rule variants for an objective (Optuna)",
                       description="Search rule variants (docs/rules.md §11) for settings "
                       "whose balance report meets an objective, with Optuna's TPE sampler, "
                       "on paired seeds, in local processes; re-evaluate the best with more "
                       "games; report the best setting and the Pareto front with 95% "
                       "intervals. `rummy batch tune` does the same on the Celery workers.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_tune_options(p)
    p.add_argument("--jobs", type=int, default=0, help="worker processes (default: CPU count)")
    p.set_defaults(func=cmd_tune)


__all__ = ["Candidate", "Evaluator", "LocalEvaluator", "Tuner", "add_tune_options",
           "add_tune_parser", "cmd_tune", "print_document", "render_html",
           "run_with_progress", "tuner_from_args", "write_outputs"]
