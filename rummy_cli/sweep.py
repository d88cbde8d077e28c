"""``rummy sweep``: one balance batch per value of a rule variant (or per combination of
values), on paired seeds, in local processes.

Every variant value plays the same game indices with the same seeds and line-ups
(``rummy.simulate.game_seed``), so the differences between two rows come from the rule, not
from the deals. The report puts each metric beside each value, with its 95% interval: win
rate by seat and by bot, game length, round-end shares, mean points left; the HTML page
plots each against the value (matplotlib, :mod:`rummy_cli.charts`). ``rummy batch sweep``
(:mod:`rummy_worker.cli`) runs the same batches on Celery workers and writes the same
document (:func:`sweep_document`, :func:`write_outputs`).

    rummy sweep --rules knock_threshold=0,5,10,15 --games 400 --players 4 --seed 7
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from rummy.balance import BalanceReport
from rummy_cli.charts import Charts, Point, matplotlib_missing, missing_note, unit_charts
from rummy_cli.outputs import output_problem, write_output

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
        ValueError: a spec without ``=``, an empty value list or value, a variant given
            twice, a value given twice for one variant (it would run the same batch twice).
    """
    names: list[str] = []
    values: list[list[str]] = []
    for spec in specs:
        name, sep, raw = spec.partition("=")
        name = name.strip()
        vals = [v.strip() for v in raw.split(",")]
        if not sep or not name or not raw.strip():
            raise ValueError(f"--rules {spec!r}: expected VARIANT=V1,V2,... (docs/rules.md §11)")
        if "" in vals:
            raise ValueError(f"--rules {spec!r}: an empty value (two commas, or a comma at "
                             "an end)")
        if name in names:
            raise ValueError(f"--rules: variant {name!r} given twice")
        twice = next((v for i, v in enumerate(vals) if v in vals[:i]), None)
        if twice is not None:
            raise ValueError(f"--rules {spec!r}: value {twice} given twice for {name}")
        names.append(name)
        values.append(vals)
    if not names:
        raise ValueError("give at least one --rules VARIANT=V1,V2,...")
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]


def _text(value: Any) -> str:
    """A variant's value as written in ``--rules`` (``true``, not Python's ``True``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _label(combo: dict[str, Any]) -> str:
    return ", ".join(f"{k}={_text(v)}" for k, v in combo.items())


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _ci(e: Any) -> dict[str, Any]:
    """``{"value", "low", "high"}`` of a ``MeanCI`` or ``ProportionCI``."""
    value = e.mean if hasattr(e, "mean") else e.rate
    return {"value": value, "low": e.low, "high": e.high}


def _row(rep: BalanceReport) -> dict[str, Any]:
    """The figures of one value, as plain data (fractions, points, rounds), with their 95%
    intervals, and the whole balance report of that value (``report``, its JSON form)."""
    return {
        "games": rep.games,
        "rounds_per_game": rep.rounds_per_game,
        "rounds_per_game_ci": _ci(rep.rounds_per_game_ci()),
        "turns_per_round": rep.turns_per_round,
        "round_end_share": dict(rep.round_end_share),
        "round_end_ci": {k: _ci(e) for k, e in rep.round_end_ci().items()},
        "seats": [{"rate": s.rate, "low": s.low, "high": s.high} for s in rep.seats],
        "seat_fairness_p": rep.fairness.p_value,
        "bots": {name: {"win": b.win.rate, "low": b.win.low, "high": b.win.high,
                        "points_left": b.points_left,
                        "points_left_low": b.points_left_ci.low,
                        "points_left_high": b.points_left_ci.high}
                 for name, b in sorted(rep.bots.items())},
        "warnings": list(rep.warnings),
        "quality": ({k: v for k, v in rep.quality.to_dict().items() if k != "definitions"}
                    if rep.quality is not None else {}),
        "report": json.loads(json.dumps(rep.to_dict(), sort_keys=True)),
    }


def sweep_plan(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[Any], list[str]]:
    """Validate the options of ``rummy sweep`` and ``rummy batch sweep``.

    Returns:
        ``(combos, rulesets, bots)``: every combination of values (:func:`parse_sweep`,
        each value as the rule set holds it: ``8``, ``True``), its validated
        :class:`rummy.rules.RuleSet` (R11), and the line-up.

    Raises:
        SystemExit: code 2 with an ``error: ...`` line for bad options (a bad variant or
            value names the rule, R11; two values that are the same rule, such as ``5``
            and ``05``; a bad player count R1.1).
    """
    from rummy.rules import RuleSet
    from rummy_cli.main import _lineup, usage_error

    try:
        combos = parse_sweep(args.rules)
        rulesets = [RuleSet.from_dict(c) for c in combos]
        for r in rulesets:
            r.check_players(args.players)
        for i, r in enumerate(rulesets):
            j = rulesets.index(r)
            if j < i:
                raise ValueError(f"--rules: {_label(combos[j])} and {_label(combos[i])} "
                                 "are the same rules (a value given twice)")
    except ValueError as e:
        raise usage_error(f"error: {e}") from None
    # each value as the rules read it (8 and true, not "8" and "true": the JSON document)
    combos = [{k: getattr(r, k) for k in c} for c, r in zip(combos, rulesets, strict=True)]
    if not 2 <= args.players <= 5:
        raise usage_error(f"error: --players must be 2..5, got {args.players} (R1.1)")
    if args.games < 1:
        raise usage_error("error: --games must be at least 1")
    return combos, rulesets, _lineup(args.bots, args.players)


def sweep_document(combos: list[dict[str, str]], reports: list[BalanceReport], *, games: int,
                   players: int, seed: int, bots: list[str] | tuple[str, ...],
                   seconds: float,
                   paired: list[list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """The sweep document (what ``--json`` writes): one row per combination of values, in
    sweep order, each with its figures and report (:func:`_row`); ``compare``: each value
    against the first (:func:`compare_values`, unpaired); with ``paired`` (per value after
    the first, :func:`paired_compare` output) also ``paired_compare``, the same with the
    game-by-game differences. The same seeds give the
    same document, bar ``seconds`` (wall time), whether the batches ran locally
    (``rummy sweep``) or on Celery workers (``rummy batch sweep``)."""
    rows = [{"rules": c, **_row(rep)} for c, rep in zip(combos, reports, strict=True)]
    doc = {"games": games, "players": players, "seed": seed, "lineup": list(bots),
           "paired": "every value plays the same seeds and line-ups", "sweep": rows,
           "seconds": round(seconds, 1)}
    # "compare" is the same whether the batches ran locally or on the workers; the local
    # sweep, which keeps each game's figures, adds the game-by-game comparison beside it
    doc["compare"] = [compare_values(doc, 0, k) for k in range(1, len(rows))]
    if paired is not None:
        doc["paired_compare"] = [compare_values(doc, 0, k, paired[k - 1])
                                 for k in range(1, len(rows))]
    return doc


#: the figures a sweep compares between two values: (label, getter, unit)
_COMPARED: tuple[tuple[str, str, str], ...] = (
    ("turns per game", "turns", "turns"), ("rounds per game", "rounds", "rounds"),
    ("lead changes per game", "lead_changes", "changes"),
    ("decided after (share of the game's rounds)", "decided_share", "%"),
    ("meld phases with more than one play", "decision_share", "%"))


def unpaired_diff(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any] | None:
    """``b − a`` of two figures ``{value, low, high}`` with an unpaired 95% interval (each
    side's standard error read off its interval): conservative when both values played the
    same seeds, which makes them positively correlated."""
    from rummy.stats import Z95

    if a is None or b is None:
        return None
    d = b["value"] - a["value"]
    if None in (a["low"], a["high"], b["low"], b["high"]):
        return {"diff": d, "low": None, "high": None}
    se = ((a["high"] - a["low"]) ** 2 + (b["high"] - b["low"]) ** 2) ** 0.5 / (2 * Z95)
    return {"diff": d, "low": d - Z95 * se, "high": d + Z95 * se}


def ab_command(doc: dict[str, Any], i: int, j: int) -> str:
    """The ``rummy batch ab`` command that compares values ``i`` (A) and ``j`` (B) of a
    sweep paired game by game, with the same games, players, line-up and seed."""
    rows = doc["sweep"]

    def pairs(c: dict[str, Any]) -> str:
        return " ".join(f"{k}={_text(v)}" for k, v in c.items())

    return (f"rummy batch ab --games {doc['games']} --players {doc['players']} "
            f"--bots {','.join(doc['lineup'])} --seed {doc['seed']} "
            f"--rules {pairs(rows[i]['rules'])} --compare-rules {pairs(rows[j]['rules'])} "
            "--wait --html ab.html")


def compare_values(doc: dict[str, Any], i: int, j: int,
                   paired: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Value ``j`` against value ``i`` of a sweep document: ``{"a", "b"}`` (their labels),
    ``"diffs"``: per bot (win rate) and per figure of :data:`_COMPARED`, the difference
    ``b − a`` with an unpaired 95% interval (:func:`unpaired_diff`) and a verdict in words
    (:func:`rummy.quality.verdict`), and ``"command"``: the ``rummy batch ab`` command
    that measures the same differences paired game by game (narrower intervals)."""
    from rummy.quality import verdict

    ra, rb = doc["sweep"][i], doc["sweep"][j]
    la, lb = _label(ra["rules"]), _label(rb["rules"])
    diffs = []

    def add(label: str, a: dict[str, Any] | None, b: dict[str, Any] | None, unit: str) -> None:
        e = unpaired_diff(a, b)
        if e is not None:
            diffs.append({"metric": label, "unit": unit, **e,
                          "verdict": verdict(label, e["diff"], e["low"], e["high"],
                                             doc["games"], unit, a=lb, b=la)})

    for bot in sorted(set(ra["bots"]) & set(rb["bots"])):
        def win(r: dict[str, Any], bot: str = bot) -> dict[str, Any]:
            s = r["bots"][bot]
            return {"value": s["win"], "low": s["low"], "high": s["high"]}
        add(f"{bot} win rate", win(ra), win(rb), "pp")
    for t in (ra.get("quality") or {}).get("skill_trace", []):
        def margin(r: dict[str, Any], t: dict[str, Any] = t) -> dict[str, Any] | None:
            u = next((u for u in (r.get("quality") or {}).get("skill_trace", [])
                      if {u["stronger"], u["weaker"]} == {t["stronger"], t["weaker"]}), None)
            if u is None:
                return None
            sign = 1 if u["stronger"] == t["stronger"] else -1
            bounds = (None, None) if u["low"] is None else sorted(
                (sign * u["low"], sign * u["high"]))
            return {"value": sign * u["margin"], "low": bounds[0], "high": bounds[1]}
        add(f"skill trace ({t['stronger']} over {t['weaker']})", margin(ra), margin(rb), "pp")
    for label, key, unit in _COMPARED:
        add(label, ra.get("quality", {}).get(key), rb.get("quality", {}).get(key), unit)
    if paired is not None:  # game by game: replaces the unpaired figures it has
        done = {e["metric"] for e in paired}
        diffs = [{**e, "paired": True,
                  "verdict": verdict(e["metric"], e["diff"], e["low"], e["high"], e["games"],
                                     e["unit"], a=lb, b=la)} for e in paired] + [
            {**e, "paired": False} for e in diffs if e["metric"] not in done]
    else:
        diffs = [{**e, "paired": False} for e in diffs]
    return {"a": la, "b": lb, "diffs": diffs, "command": ab_command(doc, i, j),
            "paired": paired is not None}


def write_outputs(doc: dict[str, Any], args: argparse.Namespace) -> int:
    """Write ``--json`` and ``--html`` if asked and print the table; returns 0."""
    to_stdout = "-" in (args.json, args.html)  # the document owns stdout: the table goes to stderr
    _print(doc, Console(stderr=to_stdout))  # first: on screen whatever happens next
    try:
        if args.json:
            write_output(args.json, json.dumps(doc, indent=2, sort_keys=True))
        if args.html:
            write_output(args.html, render_html(doc))
    except OSError as e:
        print(f"error: cannot write {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    """``rummy sweep``: run every value, print one table, write JSON / HTML if asked.
    Each game's figures are kept per value (:func:`game_row`), so that every value is
    compared with the first game by game (:func:`paired_compare`)."""
    from rummy.simulate import Aggregate, merge_all

    combos, rulesets, bots = sweep_plan(args)
    problem = output_problem(args.json, args.html)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    jobs = max(1, args.jobs or os.cpu_count() or 1)
    size = max(1, min(25, -(-args.games // (jobs * 8))))
    tasks = [(i, (bots, args.seed, a, min(a + size, args.games), rules))
             for i, rules in enumerate(rulesets) for a in range(0, args.games, size)]
    parts: dict[int, list[Aggregate]] = {i: [] for i in range(len(rulesets))}
    games: dict[int, dict[int, dict[str, int]]] = {i: {} for i in range(len(rulesets))}
    t0 = time.perf_counter()
    with Progress(TextColumn("[bold]sweeping"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("games"), TimeElapsedColumn(), console=Console(stderr=True),
                  disable=args.quiet) as progress:
        bar = progress.add_task("games", total=args.games * len(rulesets))
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(_sweep_chunk, t): (i, t) for i, t in tasks}
            for fut in as_completed(futures):
                i, t = futures[fut]
                agg, rows = fut.result()
                parts[i].append(Aggregate.from_dict(agg))
                games[i].update(rows)
                progress.advance(bar, t[3] - t[2])
    reports = [BalanceReport.of(merge_all(args.players, parts[i])).with_run(
        args.seed, tuple(bots), r.changed()) for i, r in enumerate(rulesets)]
    paired = [paired_compare(games[0], games[k], _label(combos[0]), _label(combos[k]))
              for k in range(1, len(rulesets))]
    doc = sweep_document(combos, reports, games=args.games, players=args.players,
                         seed=args.seed, bots=bots, seconds=time.perf_counter() - t0,
                         paired=paired)
    return write_outputs(doc, args)


def _sweep_chunk(task: tuple[list[str], int, int, int, Any]) -> tuple[dict[str, Any],
                                                                     dict[int, dict[str, int]]]:
    """Worker-process body of ``rummy sweep``: games [start, stop) of one value, as an
    aggregate dict and each finished game's figures
    (:func:`rummy.paired_quality.result_figures`) by game index."""
    from rummy.paired_quality import result_figures
    from rummy.simulate import play_range

    bots, seed, start, stop, rules = task
    rows: dict[int, dict[str, int]] = {}
    agg = play_range(bots, seed, start, stop, rules, True,
                     on_game=lambda i, r, _s: rows.__setitem__(i, result_figures(r)))
    return agg.to_dict(), rows


def paired_compare(base: dict[int, dict[str, int]], other: dict[int, dict[str, int]],
                   a: str = "A", b: str = "B") -> list[dict[str, Any]]:
    """Paired differences ``other − base`` over the game indices both values finished
    (:func:`rummy.paired_quality.compare`, each game a cluster): per bot and per seat (win
    rates, ``pp``), the skill trace of each pair of bots (named after the stronger under
    ``base``, as the unpaired comparison names it), drama, decisiveness, decision moves and
    branching, duration; each ``{"metric", "unit", "kind", "a", "b", "diff", "low", "high",
    "games", "verdict"}`` (``a``: base's value; bounds ``None`` under 2 games). ``a`` and
    ``b`` name the two values in the verdicts."""
    from rummy.paired_quality import PairedFigures, compare
    from rummy.quality import verdict

    sums = PairedFigures()
    for i in sorted(base.keys() & other.keys()):
        sums = sums.merge(PairedFigures.of_game(base[i], other[i]))
    out = []
    for e in compare(sums, first=a, second=b):  # base − other, oriented by base
        d = {**e, "a": e["a"], "b": e["b"], "diff": -e["diff"],
             "low": None if e["high"] is None else -e["high"],
             "high": None if e["low"] is None else -e["low"]}
        d["verdict"] = verdict(d["metric"], d["diff"], d["low"], d["high"], d["games"],
                               d["unit"], a=b, b=a)
        out.append(d)
    return out


def _print(doc: dict[str, Any], console: Console) -> None:
    bots = sorted({b for row in doc["sweep"] for b in row["bots"]})
    reasons = sorted({r for row in doc["sweep"] for r in row["round_end_share"]})
    table = Table(title=f"Sweep: {doc['games']} games per value, {doc['players']} players, "
                  f"seed {doc['seed']}, line-up {','.join(doc['lineup'])} (paired seeds)")
    # one column per value (a sweep has few values, many metrics): fits 80 columns for
    # a few values, and the metric names are never cut
    table.add_column("metric", no_wrap=True)
    for row in doc["sweep"]:
        table.add_column(_label(row["rules"]), justify="right", overflow="fold")
    rows = doc["sweep"]

    def line(name: str, cell: Any) -> None:
        table.add_row(name, *(cell(row) for row in rows))

    for b in bots:
        def win(row: dict[str, Any], b: str = b) -> str:
            s = row["bots"].get(b)
            return ("–" if s is None else
                    f"{_pct(s['win'])} [{_pct(s['low'])}, {_pct(s['high'])}]")
        line(f"{b} win [95% CI]", win)
    line("rounds per game", lambda row: f"{row['rounds_per_game']:.2f}")
    for r in reasons:
        line(f"rounds ended by {r}",
             lambda row, r=r: _pct(row["round_end_share"].get(r, 0.0)))
    line("seat fairness p", lambda row: "–" if row["seat_fairness_p"] is None
         else f"{row['seat_fairness_p']:.3f}")
    for label, key, unit in _QUALITY_ROWS:
        line(label, lambda row, key=key, unit=unit: _quality_cell(row, key, unit))
    console.print(table)
    for row in doc["sweep"]:
        for w in row["warnings"]:
            console.print(f"[yellow]{_label(row['rules'])}: {w}[/yellow]")
    console.print("[dim]game-quality figures: 95% CI clustered by game; definitions in "
                  "docs/metrics.md[/dim]", highlight=False)
    for c in doc.get("paired_compare") or doc.get("compare", []):
        console.print(f"[bold]{c['b']} against {c['a']}[/bold] (95% CI"
                      + ("; paired game by game unless marked" if c.get("paired") else
                         ", unpaired") + f"; on the workers: {c['command']})", highlight=False)
        for e in c["diffs"]:
            console.print(f"  {e['verdict']}" + ("" if e.get("paired") else " (unpaired)"),
                          highlight=False)
        console.print(f"[dim]{MANY}[/dim]", highlight=False)


#: game-quality figures of a sweep's table: (label, key in a row's ``quality``, unit)
_QUALITY_ROWS: tuple[tuple[str, str, str], ...] = (
    ("skill trace (pp)", "skill_trace", "pp"),
    ("turns per game", "turns", "turns"),
    ("lead changes per game", "lead_changes", "changes"),
    ("comeback (points)", "comeback", "points"),
    ("decided after (share of rounds)", "decided_share", "%"),
    ("meld phases with a choice", "decision_share", "%"),
    ("plays per meld phase", "branching", "plays"),
    ("games with a stock-out round", "capped", "%"))


def _quality_cell(row: dict[str, Any], key: str, unit: str) -> str:
    """A quality figure of one sweep row with its 95% interval, as text."""
    from rummy.quality import fmt

    q = row.get("quality") or {}
    if key == "skill_trace":
        traces = q.get("skill_trace") or []
        if not traces:
            return "–"
        t = traces[0]
        return (f"{t['stronger']} +{100 * t['margin']:.1f} "
                f"[{fmt(t['low'], 'pp').split()[0]}, {fmt(t['high'], 'pp').split()[0]}]")
    e = q.get(key)
    if not e:
        return "–"
    return f"{fmt(e['value'], unit)} [{fmt(e['low'], unit)}, {fmt(e['high'], unit)}]"


def _point(e: dict[str, Any] | None) -> Point:
    return None if e is None else (e["value"], e["low"], e["high"])


def sweep_charts(doc: dict[str, Any], charts: Charts | None = None) -> list[str]:
    """The charts of a sweep document, each metric against the variant value with its 95%
    intervals (inline SVG, :class:`rummy_cli.charts.Charts`): win rate by seat and by bot
    (percent, with the 1/players reference), rounds per game (rounds), how rounds ended
    (percent of rounds), mean points left (points per seat-round). ``charts``: the page's
    chart maker (one per page keeps the SVG ids unique), a new one by default.

    Raises:
        ImportError: matplotlib is missing.
    """
    rows = doc["sweep"]
    names = list(rows[0]["rules"]) if rows else []
    values = [" / ".join(map(_text, r["rules"].values())) for r in rows]
    variable = " / ".join(names)
    # a grid: a line joins only the combinations that differ in the last variant alone
    groups = [tuple(r["rules"].values())[:-1] for r in rows] if len(names) > 1 else None
    players = doc["players"]
    bots = sorted({b for row in rows for b in row["bots"]})
    charts = charts or Charts()
    seats = {f"seat {s}": [_point({"value": r["seats"][s]["rate"], "low": r["seats"][s]["low"],
                                   "high": r["seats"][s]["high"]}) for r in rows]
             for s in range(players)}
    by_bot = {b: [None if b not in r["bots"] else
                  (r["bots"][b]["win"], r["bots"][b]["low"], r["bots"][b]["high"])
                  for r in rows] for b in bots}
    left = {b: [None if b not in r["bots"] else
                (r["bots"][b]["points_left"], r["bots"][b]["points_left_low"],
                 r["bots"][b]["points_left_high"]) for r in rows] for b in bots}
    reasons = [k for k in ("knock", "undercut", "going_out", "stock")
               if any(k in r["round_end_ci"] for r in rows)]
    ends = {k.replace("_", " "): [_point(r["round_end_ci"].get(k)) for r in rows]
            for k in reasons}
    def qpoint(r: dict[str, Any], key: str) -> Point:
        return _point((r.get("quality") or {}).get(key))

    quality = []
    pairs = sorted({(t["stronger"], t["weaker"]) for r in rows
                    for t in (r.get("quality") or {}).get("skill_trace", [])})
    if pairs:
        skill: dict[str, list[Point]] = {}
        for a, b in pairs:
            pts: list[Point] = []
            for r in rows:
                t = next((t for t in (r.get("quality") or {}).get("skill_trace", [])
                          if {t["stronger"], t["weaker"]} == {a, b}), None)
                sign = 1 if t is None or t["stronger"] == a else -1
                pts.append(None if t is None else
                           (sign * t["margin"], None if t["low"] is None else
                            min(sign * t["low"], sign * t["high"]),
                            None if t["high"] is None else
                            max(sign * t["low"], sign * t["high"])))
            skill[f"{a} − {b}"] = pts
        quality.append(charts.sweep(values, variable, skill,
                                    "Skill trace: win-rate margin", "margin (points of %)",
                                    percent=True, groups=groups, zero=True))
    quality += [
        charts.sweep(values, variable, {"turns per game": [qpoint(r, "turns") for r in rows]},
                     "Turns per game", "turns", groups=groups),
        charts.sweep(values, variable,
                     {"lead changes": [qpoint(r, "lead_changes") for r in rows]},
                     "Drama: lead changes per game", "lead changes", groups=groups),
        charts.sweep(values, variable,
                     {"decided share": [qpoint(r, "decided_share") for r in rows],
                      "meld phases with a choice": [qpoint(r, "decision_share")
                                                    for r in rows]},
                     "Decisiveness and decisions", "share (%)", percent=True, groups=groups),
    ]
    return [
        charts.sweep(values, variable, seats, "Win rate by seat", "win rate (%)",
                     percent=True, reference=1 / players, groups=groups),
        charts.sweep(values, variable, by_bot, "Win rate by bot (per seat-game)",
                     "win rate (%)", percent=True, reference=1 / players, groups=groups),
        charts.sweep(values, variable,
                     {"rounds per game": [_point(r["rounds_per_game_ci"]) for r in rows]},
                     "Game length", "rounds per game", groups=groups),
        charts.sweep(values, variable, ends, "How rounds ended", "share of rounds (%)",
                     percent=True, groups=groups),
        charts.sweep(values, variable, left, "Mean points left at a round's end",
                     "points per seat-round", groups=groups),
        *quality,
    ]


def render_html(doc: dict[str, Any]) -> str:
    """One self-contained HTML page: the charts of :func:`sweep_charts` (or a note saying
    matplotlib is missing), then per value a table of every figure with its interval
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
        p = row["seat_fairness_p"]
        fair = "–" if p is None else f"{p:.3f}"
        body.append(f"<tr><th scope=row>{html.escape(_label(row['rules']))}</th>{cells}"
                    f"<td>{row['rounds_per_game']:.2f}</td><td>{html.escape(shares)}</td>"
                    f"<td>{html.escape(left)}</td><td>{fair}</td></tr>")
    title = (f"Sweep: {doc['games']} games per value, {doc['players']} players, seed "
             f"{doc['seed']}")
    missing = matplotlib_missing()
    charts = None if missing else Charts()
    compared = compare_html(doc, charts)
    plots = (missing_note(missing) if missing else
             "<div class=plots>" + "".join(sweep_charts(doc, charts)) + "</div>")
    return ("<!doctype html><html lang=en><head><meta charset=utf-8><title>"
            f"{html.escape(title)}</title><style>body{{font-family:sans-serif;margin:2em}}"
            "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.3em .6em;"
            "text-align:right}.plots{display:flex;flex-wrap:wrap;gap:12px;"
            "margin-bottom:1.5em}code{background:#f3f3f3;padding:1px 4px}"
            "li.verdict{margin:.2em 0}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p>Every value plays the same seeds and line-ups "
            f"({html.escape(','.join(doc['lineup']))}); intervals are 95%: win rates by seat "
            "Wilson over games, by bot and mean points left clustered by game, rounds per "
            "game normal over games, round ends Wilson over rounds; game-quality figures "
            "clustered by game (definitions: docs/metrics.md).</p>"
            + compared + plots +
            "<table><thead><tr><th scope=col>rules</th>" + head +
            "<th scope=col>rounds per game</th><th scope=col>how rounds ended</th>"
            "<th scope=col>mean points left (points)</th>"
            "<th scope=col>seat fairness p (chi-square)</th></tr></thead><tbody>" +
            "".join(body) + "</tbody></table>" + quality_table_html(doc) +
            "</body></html>\n")


#: the caveat of many verdicts on one page
MANY = ("Many differences are tested here: at 95% about one in twenty shows a change by "
        "chance alone (for the seats, the seat-fairness test in the table below tests every "
        "seat at once).")


def compare_html(doc: dict[str, Any], charts: Charts | None = None) -> str:
    """The page's answer first: for each value after the first, which is A and which B,
    the difference B − A per bot and per figure with its interval as a verdict in words,
    the ``rummy batch ab`` command that measures it paired game by game, and (paired, with
    ``charts``, the page's chart maker) one chart of the differences per unit."""
    out = []
    for k, c in enumerate(doc.get("paired_compare") or doc.get("compare", []), start=1):
        items = "".join(f"<li class=verdict data-metric=\"{html.escape(e['metric'])}\" "
                        f"data-paired={str(e.get('paired', False)).lower()}>"
                        f"{html.escape(e['verdict'])}"
                        + ("" if e.get("paired") else " (unpaired)") + "</li>"
                        for e in c["diffs"])
        how = ("Every figure is paired game by game (the same seeds under both values), "
               "its 95% interval clustered by game (ratios: delta method); any figure marked "
               "unpaired adds the two values' variances (conservative). The same comparison "
               "on the workers: "
               if c.get("paired") else
               "Intervals are unpaired (conservative): for the paired difference game by "
               "game, run ")
        out.append(f"<section class=compare id=compare-{k}><h2>B − A, where A = rules "
                   f"{html.escape(c['a'])} and B = rules {html.escape(c['b'])}</h2>"
                   f"<ul>{items}</ul><p>{how}<code class=ab-command>"
                   f"{html.escape(c['command'])}</code></p><p>{MANY}</p>"
                   + _compare_charts(c, charts) + "</section>")
    return "".join(out)


def _compare_charts(c: dict[str, Any], charts: Charts | None) -> str:
    """One chart per unit of the paired differences B − A of one comparison
    (:func:`rummy_cli.charts.unit_charts`); ``""`` when unpaired or without ``charts``
    (matplotlib missing: the page says so once, above its charts)."""
    if not c.get("paired") or charts is None:
        return ""
    rows = [(e["metric"], e, e["unit"]) for e in c["diffs"] if e.get("paired")]
    return ("<div class=plots>" + "".join(unit_charts(rows, charts, axis="B − A"))
            + "</div>")


def quality_table_html(doc: dict[str, Any]) -> str:
    """One row per value of the game-quality figures (value [95% CI])."""
    from rummy.quality import DEFINITIONS

    head = "".join(f"<th scope=col title=\"{html.escape(DEFINITIONS.get(key, ''))}\">"
                   f"{html.escape(label)}</th>" for label, key, _ in _QUALITY_ROWS)
    body = "".join(
        f"<tr><th scope=row>{html.escape(_label(row['rules']))}</th>"
        + "".join(f"<td>{html.escape(_quality_cell(row, key, unit))}</td>"
                  for _, key, unit in _QUALITY_ROWS) + "</tr>" for row in doc["sweep"])
    defs = "".join(f"<li><strong>{html.escape(k.replace('_', ' '))}</strong>: "
                   f"{html.escape(v)}</li>" for k, v in DEFINITIONS.items())
    return (f"<h2>Game quality (95% CI clustered by game)</h2><table><thead><tr>"
            f"<th scope=col>rules</th>{head}</tr></thead><tbody>{body}</tbody></table>"
            f"<ul class=definitions>{defs}</ul>")


def add_sweep_parser(sub: Any) -> None:
    """Register ``sweep`` on the ``rummy`` subparsers."""
    p = sub.add_parser("sweep", help="one balance batch per rule-variant value, paired seeds",
                       description="Run one balance batch per value of a rule variant (or "
                       "per combination of values),\non paired seeds, in local processes, and "
                       "report every metric beside every value\nwith its 95% interval.",
                       epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_sweep_options(p)
    p.add_argument("--jobs", type=int, default=0, help="worker processes (default: CPU count)")
    p.set_defaults(func=cmd_sweep)


def add_sweep_options(p: Any) -> None:
    """The options ``rummy sweep`` and ``rummy batch sweep`` share (one definition, so the
    two commands take the same sweep): ``--rules`` (repeatable), ``--games``, ``--players``,
    ``--bots``, ``--seed``, ``--json``, ``--html``, ``--quiet``."""
    p.add_argument("--rules", action="extend", nargs="+", required=True,
                   metavar="VARIANT=V1,V2,...",
                   help="a rule variant and its values (docs/rules.md §11); several (after "
                   "one --rules or each after its own) make a grid of every combination "
                   "(required)")
    p.add_argument("--games", type=int, default=200, help="games per value (default 200)")
    p.add_argument("--players", type=int, default=4, help="players per game, 2..5 (default 4)")
    p.add_argument("--bots", help="comma-separated line-up, cycled over the "
                   "seats (default strategic,greedy)")
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    p.add_argument("--json", metavar="FILE",
                   help="write every value's figures as JSON ('-': stdout)")
    p.add_argument("--html", metavar="FILE", help="write a self-contained HTML page with a "
                   "chart per metric (matplotlib: the 'report' extra; without it, tables)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


__all__ = ["ab_command", "unpaired_diff", "add_sweep_options", "add_sweep_parser", "cmd_sweep",
           "compare_html", "compare_values", "parse_sweep", "quality_table_html", "render_html",
           "sweep_charts", "sweep_document", "sweep_plan", "write_outputs"]
