"""``rummy sweep``: one balance batch per value of a rule variant (or per combination of
values), on paired seeds, in local processes (issue 14).

Every variant value plays the same game indices with the same seeds and line-ups
(``rummy.simulate.game_seed``), so the differences between two rows come from the rule, not
from the deals. The report puts each metric beside each value, with its 95% interval: win
rate by seat and by bot, game length, round-end shares, mean points left.

    rummy sweep --rules knock_threshold=0,5,10,15 --games 400 --players 4 --seed 7
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from rummy.balance import BalanceReport

EPILOG = """examples:
  rummy sweep --rules knock_threshold=0,5,10,15 --games 400 --players 4 --seed 7
  rummy sweep --rules hand_size=7,10 --rules knock_threshold=5,10 --games 200 --json s.json
  rummy sweep --rules target_score=50,100,150 --bots greedy,basic --players 2 --html s.html

Each value (or combination of values, with several --rules) plays the same games: the same
seeds, deals and line-ups, so a difference between rows comes from the rule. The figures
and their 95% intervals are the balance report's (docs: README, "balance report")."""


def parse_sweep(specs: list[str]) -> list[dict[str, str]]:
    """``["a=1,2", "b=x,y"]`` -> every combination ``[{"a": "1", "b": "x"}, ...]`` (the
    first variant varies slowest).

    Raises:
        ValueError: a spec without ``=``, an empty value list, a variant given twice.
    """
    names: list[str] = []
    values: list[list[str]] = []
    for spec in specs:
        name, sep, raw = spec.partition("=")
        name = name.strip()
        vals = [v.strip() for v in raw.split(",") if v.strip()]
        if not sep or not name or not vals:
            raise ValueError(f"--rules {spec!r}: expected VARIANT=V1,V2,... (docs/rules.md §11)")
        if name in names:
            raise ValueError(f"--rules: variant {name!r} given twice")
        names.append(name)
        values.append(vals)
    if not names:
        raise ValueError("give at least one --rules VARIANT=V1,V2,...")
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]


def _label(combo: dict[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in combo.items())


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _row(rep: BalanceReport) -> dict[str, Any]:
    """The figures of one value, as plain data (fractions, points)."""
    return {
        "games": rep.games,
        "rounds_per_game": rep.rounds_per_game,
        "turns_per_round": rep.turns_per_round,
        "round_end_share": dict(rep.round_end_share),
        "seats": [{"rate": s.rate, "low": s.low, "high": s.high} for s in rep.seats],
        "seat_fairness_p": rep.fairness.p_value,
        "bots": {name: {"win": b.win.rate, "low": b.win.low, "high": b.win.high,
                        "points_left": b.points_left}
                 for name, b in sorted(rep.bots.items())},
        "warnings": list(rep.warnings),
    }


def cmd_sweep(args: argparse.Namespace) -> int:
    """``rummy sweep``: run every value, print one table, write JSON / HTML if asked."""
    from rummy.rules import RuleSet
    from rummy.simulate import Aggregate, merge_all
    from rummy_cli.main import _chunk, _lineup, usage_error

    try:
        combos = parse_sweep(args.rules)
        rulesets = [RuleSet.from_dict(c) for c in combos]
        for r in rulesets:
            r.check_players(args.players)
    except ValueError as e:
        raise usage_error(f"error: {e}") from None
    if not 2 <= args.players <= 5:
        raise usage_error(f"error: --players must be 2..5, got {args.players} (R1.1)")
    if args.games < 1:
        raise usage_error("error: --games must be at least 1")
    bots = _lineup(args.bots, args.players)
    jobs = max(1, args.jobs or os.cpu_count() or 1)
    size = max(1, min(25, -(-args.games // (jobs * 8))))
    tasks = [(i, (bots, args.seed, a, min(a + size, args.games), rules, True, None))
             for i, rules in enumerate(rulesets) for a in range(0, args.games, size)]
    parts: dict[int, list[Aggregate]] = {i: [] for i in range(len(rulesets))}
    t0 = time.perf_counter()
    with Progress(TextColumn("[bold]sweeping"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("games"), TimeElapsedColumn(), console=Console(stderr=True),
                  disable=args.quiet) as progress:
        bar = progress.add_task("games", total=args.games * len(rulesets))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_chunk, t): (i, t) for i, t in tasks}
            for fut in as_completed(futures):
                i, t = futures[fut]
                parts[i].append(Aggregate.from_dict(fut.result()))
                progress.advance(bar, t[3] - t[2])
    reports = [BalanceReport.of(merge_all(args.players, parts[i])).with_run(
        args.seed, tuple(bots), r.changed()) for i, r in enumerate(rulesets)]
    rows = [{"rules": c, **_row(rep)} for c, rep in zip(combos, reports, strict=True)]
    doc = {"games": args.games, "players": args.players, "seed": args.seed,
           "lineup": list(bots), "paired": "every value plays the same seeds and line-ups",
           "sweep": rows, "seconds": round(time.perf_counter() - t0, 1)}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, sort_keys=True)
            f.write("\n")
    if args.html:
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(render_html(doc))
    _print(doc, Console())
    return 0


def _print(doc: dict[str, Any], console: Console) -> None:
    bots = sorted({b for row in doc["sweep"] for b in row["bots"]})
    reasons = sorted({r for row in doc["sweep"] for r in row["round_end_share"]})
    table = Table(title=f"Sweep: {doc['games']} games per value, {doc['players']} players, "
                  f"seed {doc['seed']}, line-up {','.join(doc['lineup'])} (paired seeds)")
    table.add_column("rules")
    for b in bots:
        table.add_column(f"{b} win [95% CI]", justify="right")
    table.add_column("rounds/game", justify="right")
    for r in reasons:
        table.add_column(f"ended by {r}", justify="right")
    table.add_column("seat fairness p", justify="right")
    for row in doc["sweep"]:
        cells = [_label(row["rules"])]
        for b in bots:
            s = row["bots"].get(b)
            cells.append("–" if s is None else
                         f"{_pct(s['win'])} [{_pct(s['low'])}, {_pct(s['high'])}]")
        cells.append(f"{row['rounds_per_game']:.2f}")
        cells += [_pct(row["round_end_share"].get(r, 0.0)) for r in reasons]
        p = row["seat_fairness_p"]
        cells.append("–" if p is None else f"{p:.3f}")
        table.add_row(*cells)
    console.print(table)
    for row in doc["sweep"]:
        for w in row["warnings"]:
            console.print(f"[yellow]{_label(row['rules'])}: {w}[/yellow]")


def render_html(doc: dict[str, Any]) -> str:
    """One self-contained HTML page: per metric, a table of every value with its interval
    (fractions shown as percent; points as points)."""
    bots = sorted({b for row in doc["sweep"] for b in row["bots"]})
    head = "".join(f"<th scope=col>{html.escape(b)} win (95% CI)</th>" for b in bots)
    body = []
    for row in doc["sweep"]:
        cells = "".join(
            f"<td>{_pct(row['bots'][b]['win'])} ({_pct(row['bots'][b]['low'])}–"
            f"{_pct(row['bots'][b]['high'])})</td>" if b in row["bots"] else "<td>–</td>"
            for b in bots)
        shares = ", ".join(f"{k} {_pct(v)}" for k, v in sorted(row["round_end_share"].items()))
        left = ", ".join(f"{b} {row['bots'][b]['points_left']:.1f}" for b in bots
                         if b in row["bots"])
        body.append(f"<tr><th scope=row>{html.escape(_label(row['rules']))}</th>{cells}"
                    f"<td>{row['rounds_per_game']:.2f}</td><td>{html.escape(shares)}</td>"
                    f"<td>{html.escape(left)}</td></tr>")
    title = (f"Sweep: {doc['games']} games per value, {doc['players']} players, seed "
             f"{doc['seed']}")
    return (f"<!doctype html><html lang=en><meta charset=utf-8><title>{html.escape(title)}"
            "</title><style>body{font-family:sans-serif;margin:2em}table{border-collapse:"
            "collapse}td,th{border:1px solid #999;padding:.3em .6em;text-align:right}"
            "</style>"
            f"<h1>{html.escape(title)}</h1><p>Every value plays the same seeds and line-ups "
            f"({html.escape(','.join(doc['lineup']))}); intervals are 95%, clustered by "
            "game.</p><table><thead><tr><th scope=col>rules</th>" + head +
            "<th scope=col>rounds per game</th><th scope=col>how rounds ended</th>"
            "<th scope=col>mean points left (points)</th></tr></thead><tbody>" +
            "".join(body) + "</tbody></table></html>\n")


def add_sweep_parser(sub: Any) -> None:
    """Register ``sweep`` on the ``rummy`` subparsers."""
    p = sub.add_parser("sweep", help="one balance batch per rule-variant value, paired seeds",
                       description=__doc__.split("\n\n")[0], epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rules", action="append", default=[], metavar="VARIANT=V1,V2,...",
                   help="a rule variant and its values (docs/rules.md §11); repeat for a "
                   "grid of every combination")
    p.add_argument("--games", type=int, default=200, help="games per value (default 200)")
    p.add_argument("--players", type=int, default=4, help="players per game, 2..5 (default 4)")
    p.add_argument("--bots", default="", help="comma-separated line-up, cycled over the "
                   "seats (default strategic,greedy)")
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    p.add_argument("--jobs", type=int, default=0, help="worker processes (default: CPU count)")
    p.add_argument("--json", metavar="FILE", help="write every value's figures as JSON")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_sweep)


__all__ = ["add_sweep_parser", "cmd_sweep", "parse_sweep", "render_html"]
