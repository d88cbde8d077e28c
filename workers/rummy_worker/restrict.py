"""``rummy batch restrict BOT --restrictions R1,R2``: what each way of playing is worth.

For each restriction ``R`` (:mod:`rummy.bots.restrict`) one A/B batch: variant A is the
line-up ``BOT`` + the opponents (``--against``, default ``BOT`` itself), variant B the same
line-up with slot 0 played by ``BOT!R``; every game index is played under both with the
same seed (paired). The **cost** of ``R`` is line-up slot 0's win rate under A minus under
B, in points of win rate, with the paired 95% interval of
:func:`rummy_worker.paired.compare` (``slot_win_rate[0]``): "what rearranging the table is
worth" is the cost of ``no-rearrange``.

The batches run on the Celery workers (one progress bar over all their chunks), or, with
``--local``, in local processes through the same chunk function
(:func:`rummy_worker.chunks.compute_chunk`): the same options give the same figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any


def plan(args: argparse.Namespace) -> tuple[list[str], list[Any]]:
    """``(restrictions, specs)``: one validated A/B :class:`BatchSpec` per restriction.

    Raises:
        ValueError: an unknown bot or restriction (naming the known ones), a restriction
            given twice, a bad player count (R1.1) or rule variant (R11), bad games or
            chunk size.
    """
    from rummy.bots import check_bot
    from rummy.bots.restrict import SEP, parse_restrictions
    from rummy.rules import RuleSet, parse_rule_pairs
    from rummy_cli.options import bot_names
    from rummy_worker.batches import BatchSpec

    bot = check_bot(args.bot)
    if not 2 <= args.players <= 5:
        raise ValueError(f"--players must be 2..5, got {args.players} (R1.1)")
    items = [r.strip() for r in args.restrictions.split(",")]
    if "" in items:
        raise ValueError(f"--restrictions {args.restrictions!r}: an empty name (two commas, "
                         "or a comma at an end)")
    for i, r in enumerate(items):
        parse_restrictions(r.split(SEP), where=f"--restrictions {r}")
        if r in items[:i]:
            raise ValueError(f"--restrictions: {r!r} given twice")
    against = bot_names(args.against, "--against") or [bot]
    for b in against:
        check_bot(b)
    opponents = [against[i % len(against)] for i in range(args.players - 1)]
    rules = RuleSet.from_dict(parse_rule_pairs(args.rules or [])).changed()
    specs = [BatchSpec(games=args.games, bots=(bot, *opponents), seed=args.seed, rules=rules,
                       chunk_size=args.chunk_size,
                       compare_bots=(f"{bot}{SEP}{r}", *opponents)).validate()
             for r in items]
    return items, specs


def cost_rows(restrictions: list[str], specs: list[Any], merged: list[Any]
              ) -> list[dict[str, Any]]:
    """One row per restriction from the merged results: ``restricted`` (the bot's name),
    ``a``/``b`` (slot 0's win rate, fractions), ``cost`` = a − b with ``low``/``high`` (95%,
    paired), ``games`` (paired games), ``failed`` (games left out: a bot failed) and the
    ``verdict`` in words."""
    from rummy_worker.paired import Paired, compare

    rows = []
    for r, spec, m in zip(restrictions, specs, merged, strict=True):
        paired = m.paired or Paired.empty(spec.players)
        s = compare(paired, spec.bots, spec.compare_bots)["slot_win_rate"][0]
        failed = len(m.a.failed) + (len(m.b.failed) if m.b is not None else 0)
        rows.append({"restriction": r, "restricted": spec.compare_bots[0], "a": s["a"],
                     "b": s["b"], "cost": s["diff"], "low": s["low"], "high": s["high"],
                     "games": paired.games, "failed": failed,
                     "verdict": _verdict(spec.bots[0], r, s, paired.games)})
    return rows


def _verdict(bot: str, r: str, s: dict[str, Any], games: int) -> str:
    pts = f"{100 * s['diff']:.1f} points of win rate"
    if s["low"] is None or s["high"] is None:
        return f"{r}: too few games for an interval"
    ci = f"(95% CI {100 * s['low']:.1f} to {100 * s['high']:.1f})"
    if s["low"] > 0:
        return f"{r} costs {bot} {pts} {ci}"
    if s["high"] < 0:
        return f"{r} gains {bot} {100 * -s['diff']:.1f} points of win rate {ci}"
    return f"{r}: no detectable cost at {games} paired games {ci}"


def _local(specs: list[Any], jobs: int, advance: Callable[[int], None]) -> list[Any]:
    from rummy_worker.batches import merge_results
    from rummy_worker.chunks import compute_chunk

    results: list[list[dict[str, Any]]] = [[] for _ in specs]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(compute_chunk, spec, i): k
                   for k, spec in enumerate(specs) for i in range(spec.chunks)}
        for fut in as_completed(futures):
            results[futures[fut]].append(fut.result())
            advance(1)
    return [merge_results(spec.players, res) for spec, res in zip(specs, results,
                                                                   strict=True)]


def cmd_restrict(args: argparse.Namespace) -> int:
    """``rummy batch restrict``: print (and write with ``--json``) each restriction's cost.

    Exit codes: 0 done; 1 a batch failed or timed out; 2 bad options.
    """
    from rich.console import Console
    from rich.table import Table

    from rummy_cli.outputs import output_problem
    from rummy_worker.cli import _create_and_send, _die, _store, _usage, _wait_all

    try:
        restrictions, specs = plan(args)
    except ValueError as e:
        return _usage(str(e))
    problem = output_problem(args.json, None)
    if problem:
        return _usage(problem)
    t0 = time.perf_counter()
    ids: list[str] = []
    if args.local:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(TextColumn("[bold]restrict"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("chunks"), console=Console(stderr=True),
                      disable=args.quiet) as progress:
            bar = progress.add_task("chunks", total=sum(s.chunks for s in specs))
            merged = _local(specs, max(1, args.jobs or os.cpu_count() or 1),
                            lambda k: progress.advance(bar, k))
    else:
        from rummy_worker.tasks import limits

        try:
            soft, hard = limits(args.soft_time_limit, args.time_limit)
        except ValueError as e:
            return _usage(str(e))
        store = _store()
        for r, spec in zip(restrictions, specs, strict=True):
            batch_id, failure = _create_and_send(store, spec, soft, hard, r)
            if failure:
                return _die(failure)
            ids.append(batch_id)
            print(f"batch {batch_id}: {spec.bots[0]} against {spec.compare_bots[0]}",
                  file=sys.stderr)
        code = _wait_all(store, ids, quiet=args.quiet, timeout=args.timeout,
                         label=f"restrict: {len(ids)} A/B batches")
        if code:
            return code
        merged = [store.merged(b)[1] for b in ids]
    rows = cost_rows(restrictions, specs, merged)
    doc: dict[str, Any] = {
        "bot": specs[0].bots[0], "lineup": list(specs[0].bots), "players": specs[0].players,
        "games": args.games, "seed": args.seed, "rules": dict(specs[0].rules),
        "cost": "slot 0's win rate with the bot minus with the restricted bot, paired by "
                "game (fractions; 95% CI)",
        "rows": rows, "seconds": round(time.perf_counter() - t0, 1)}
    if ids:
        doc["batches"] = ids
    table = Table(title=f"What each restriction costs {doc['bot']} ({args.games} paired "
                  f"games, {doc['players']} players, line-up {','.join(doc['lineup'])}, "
                  f"seed {args.seed})")
    for col in ("restriction", "win rate", "restricted", "cost (points) [95% CI]"):
        table.add_column(col, justify="left" if col == "restriction" else "right")
    for row in rows:
        ci = ("–" if row["low"] is None else
              f"{100 * row['cost']:+.1f} [{100 * row['low']:+.1f}, {100 * row['high']:+.1f}]")
        table.add_row(row["restriction"], f"{100 * row['a']:.1f}%", f"{100 * row['b']:.1f}%",
                      ci)
    console = Console()
    console.print(table)
    for row in rows:
        console.print(row["verdict"], highlight=False)
    if args.json:
        text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
        if args.json == "-":
            sys.stdout.write(text)
        else:
            try:
                with open(args.json, "w", encoding="utf-8") as f:
                    f.write(text)
            except OSError as e:
                return _die(f"cannot write {e.filename}: {e.strerror}")
    return 1 if any(r["failed"] for r in rows) else 0


EPILOG = """examples:
  rummy batch restrict greedy --restrictions no-rearrange,no-joker-free --players 2 \\
      --games 400 --seed 7
  rummy batch restrict strategic --restrictions no-wait,knock-at-0 --against greedy \\
      --games 1000 --local --json cost.json

restrictions (several joined by '!' count as one: no-rearrange!knock-at-0):
  no-rearrange   only new melds and additions to table melds; no table card moves
  no-joker-free  never frees a table joker (R5.8); other rearranging allowed
  knock-at-N     knocks only with at most N points in hand (knock-at-0: never knocks)
  no-wait        knocks whenever allowed (R6.1)

The cost is BOT's win rate (line-up slot 0) minus BOT!R's, the same seeds and opponents,
with a paired 95% interval. Exit 1 when a game failed (a bot broke a rule)."""


def add_restrict_parser(bsub: Any, connection_options: Callable[[Any], None],
                        limit_options: Callable[[Any], None],
                        guarded: Callable[[Any], Any]) -> None:
    """Register ``rummy batch restrict``."""
    from rummy_cli.options import add_rules_option

    p = bsub.add_parser(
        "restrict", help="what each restriction of play costs a bot (paired win rates)",
        description="For each restriction, an A/B batch: BOT against the opponents (A) and\n"
        "BOT!RESTRICTION against the same opponents (B), on the same seeds; prints each\n"
        "restriction's cost in win rate with its paired 95% interval. On the Celery\n"
        "workers, or in local processes with --local (the same figures).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bot", metavar="BOT", help="the bot whose play is restricted")
    p.add_argument("--restrictions", required=True, metavar="R1,R2,...",
                   help="the restrictions to price, comma-separated (required)")
    p.add_argument("--against", metavar="BOTS",
                   help="opponents, cycled over the other seats (default: BOT itself)")
    p.add_argument("--players", type=int, default=2, help="players per game (default 2)")
    p.add_argument("--games", type=int, default=400,
                   help="paired games per restriction (default 400)")
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    add_rules_option(p)
    p.add_argument("--chunk-size", type=int, default=50,
                   help="games per chunk task (default 50)")
    p.add_argument("--local", action="store_true",
                   help="play in local processes instead of on the workers")
    p.add_argument("--jobs", type=int, default=0,
                   help="with --local: processes (default: CPU count)")
    p.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="give up waiting after SECONDS (exit 1; the batches go on)")
    p.add_argument("--json", metavar="FILE", help="write the costs as JSON ('-': stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    limit_options(p)
    connection_options(p)

    def run(args: argparse.Namespace) -> int:
        return cmd_restrict(args) if args.local else guarded(cmd_restrict)(args)

    p.set_defaults(func=run)


__all__ = ["add_restrict_parser", "cost_rows", "cmd_restrict", "plan"]
