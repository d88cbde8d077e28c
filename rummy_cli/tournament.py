"""``rummy tournament``: a round robin between bots, rated with openskill (docs/strength.md).

Every combination of ``--players`` bots out of ``--bots`` plays ``--games`` games; game
``i`` of a pairing is played with seed :func:`rummy.simulate.game_seed` ``(S, index)`` and
the line-up rotated by ``i`` seats, so seat advantage and bot strength are not confounded.
Games run in ``--jobs`` processes; the ratings are then fitted in game order in the parent,
so the table does not depend on ``--jobs``.

Ratings: openskill's Plackett-Luce model (each game ranks the seats by final total, R9.4;
tied totals share a rank), starting from openskill's defaults (mu 25, sigma 25/3); the
interval is mu ± 2 sigma. Win rates count a shared win as 1/k, with 95% Wilson intervals.
Cost per move is the wall time of ``bot.act(view)`` in milliseconds, on this machine: its
mean, and its median and 99th percentile over every move of the bot (nearest rank).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from rummy.bots import check_bot, make_bot
from rummy.commands import CreateGame
from rummy.decide import step
from rummy.rules import RuleSet
from rummy.state import GAME_OVER
from rummy.stats import wilson
from rummy.views import view
from rummy_cli.options import bot_names
from rummy_cli.outputs import output_problem

BEGIN = "<!-- rummy tournament: begin -->"
END = "<!-- rummy tournament: end -->"
MAX_STEPS = 200_000


def play_timed(lineup: tuple[str, ...], seed: int, rules: RuleSet) -> dict[str, Any]:
    """One game: final totals (R9), winners, and per seat the moves, the seconds spent in
    ``act`` and each move's time in whole microseconds (``us``)."""
    bots = [make_bot(b, seed * 8 + i) for i, b in enumerate(lineup)]
    state, _ = step(None, CreateGame(len(lineup), seed, rules, lineup))
    moves = [0] * len(lineup)
    secs = [0.0] * len(lineup)
    us: list[list[int]] = [[] for _ in lineup]
    n = 0
    while state.phase != GAME_OVER:
        seat = state.turn
        t0 = time.perf_counter()
        cmd = bots[seat].act(view(state, seat))
        dt = time.perf_counter() - t0
        secs[seat] += dt
        us[seat].append(round(dt * 1e6))
        moves[seat] += 1
        state, _ = step(state, cmd)
        n += 1
        if n > MAX_STEPS:
            raise RuntimeError(f"game with seed {seed} did not end")
    assert state.result is not None
    return {"lineup": list(lineup), "final": list(state.result.final),
            "winners": list(state.result.winners), "moves": moves, "secs": secs, "us": us}


def _chunk(args: tuple[list[tuple[int, tuple[str, ...], int]], RuleSet]
           ) -> list[tuple[int, dict[str, Any]]]:
    games, rules = args
    return [(i, play_timed(lineup, seed, rules)) for i, lineup, seed in games]


def schedule(bots: list[str], players: int, games: int, seed: int
             ) -> list[tuple[int, tuple[str, ...], int]]:
    """``(index, line-up, seed)`` of every game of the round robin."""
    from rummy.simulate import game_seed, lineup_for
    out: list[tuple[int, tuple[str, ...], int]] = []
    for combo in itertools.combinations(bots, players):
        for g in range(games):
            i = len(out)
            out.append((i, lineup_for(combo, g), game_seed(seed, i)))
    return out


def percentile(values: list[int], q: float) -> float:
    """The ``q`` quantile (0 < q <= 1) of ``values`` by nearest rank; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(q * len(ordered)) - 1)])


def rate(results: list[dict[str, Any]], bots: list[str]) -> dict[str, dict[str, float]]:
    """Ratings, win rates and costs per bot from the games, in order: ``ms`` the mean
    milliseconds per move, ``ms_p50``/``ms_p99`` the median and 99th percentile when the
    games carry per-move times (``us``, see :func:`play_timed`)."""
    from openskill.models import PlackettLuce
    model = PlackettLuce()
    ratings = {b: model.rating(name=b) for b in bots}
    seats = dict.fromkeys(bots, 0)
    wins = dict.fromkeys(bots, 0.0)
    moves = dict.fromkeys(bots, 0)
    secs = dict.fromkeys(bots, 0.0)
    per_move: dict[str, list[int]] = {b: [] for b in bots}
    for r in results:
        lineup, final = r["lineup"], r["final"]
        ranks: list[float] = [sorted(final, reverse=True).index(f) + 1.0 for f in final]
        teams = model.rate([[ratings[b]] for b in lineup], ranks=ranks)
        for b, team in zip(lineup, teams, strict=True):
            ratings[b] = team[0]
        for seat, b in enumerate(lineup):
            seats[b] += 1
            moves[b] += r["moves"][seat]
            secs[b] += r["secs"][seat]
            if "us" in r:
                per_move[b].extend(r["us"][seat])
            if seat in r["winners"]:
                wins[b] += 1 / len(r["winners"])
    out: dict[str, dict[str, float]] = {}
    for b in bots:
        lo, hi = wilson(wins[b], seats[b])
        out[b] = {"mu": ratings[b].mu, "sigma": ratings[b].sigma, "games": seats[b],
                  "win": wins[b] / seats[b] if seats[b] else 0.0, "win_lo": lo, "win_hi": hi,
                  "ms": 1000 * secs[b] / moves[b] if moves[b] else 0.0,
                  "ms_p50": percentile(per_move[b], 0.5) / 1000,
                  "ms_p99": percentile(per_move[b], 0.99) / 1000}
    return out


def markdown(table: dict[str, dict[str, float]], command: str, seconds: float) -> str:
    """The Markdown section (between the BEGIN/END markers), best rated first."""
    import openskill
    rows = sorted(table.items(), key=lambda kv: -kv[1]["mu"])
    lines = [BEGIN, "## Ratings (round robin, openskill)", "", "```", command, "```", "",
             "| bot | rating mu ± 2σ | games | win rate [95% CI] | cost per move "
             "(mean) | median | p99 |",
             "|---|---:|---:|---|---:|---:|---:|"]
    for b, t in rows:
        lines.append(f"| {b} | {t['mu']:.1f} ± {2 * t['sigma']:.1f} | {int(t['games'])} | "
                     f"{100 * t['win']:.1f} % [{100 * t['win_lo']:.1f}, "
                     f"{100 * t['win_hi']:.1f}] | {t['ms']:.2f} ms | "
                     f"{t.get('ms_p50', 0.0):.2f} ms | {t.get('ms_p99', 0.0):.2f} ms |")
    lines += ["", f"openskill {getattr(openskill, '__version__', '?')} Plackett-Luce, "
              "default prior (mu 25, σ 25/3), seats ranked by final total (R9.4), games "
              "fed in schedule order; win rate counts a shared win as 1/k (Wilson "
              "intervals); cost = wall time of `bot.act` per move (mean, median, 99th "
              "percentile over every move, draws included). Run took "
              f"{seconds:.0f} s.", END]
    return "\n".join(lines) + "\n"


def write_section(path: str, section: str) -> None:
    """Put ``section`` in ``path`` between the markers (replacing an earlier one), or
    append it."""
    text = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            text = f.read()
    if BEGIN in text and END in text:
        a, b = text.index(BEGIN), text.index(END) + len(END) + 1
        text = text[:a] + section + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + section if text else section
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def cmd_tournament(args: argparse.Namespace) -> int:
    """``rummy tournament``."""
    try:
        import openskill  # noqa: F401
    except ImportError:
        print("error: `rummy tournament` needs the 'ratings' extra: "
              "pip install 'manipulation-rummy[ratings]' (openskill)", file=sys.stderr)
        return 1
    try:
        bots = bot_names(args.bots) or []
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        for b in bots:
            check_bot(b)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    problem = None
    if len(set(bots)) != len(bots):
        twice = sorted({b for b in bots if bots.count(b) > 1})
        problem = f"--bots lists {', '.join(twice)} more than once; name each bot once"
    elif not 2 <= args.players <= 5:
        problem = f"--players must be 2..5, got {args.players} (R1.1)"
    elif args.players > len(bots):
        problem = (f"--players {args.players} needs at least {args.players} bots in --bots "
                   f"(each game seats distinct bots), got {len(bots)}")
    elif args.games < 1:
        problem = f"--games must be at least 1, got {args.games}"
    elif args.jobs < 0:
        problem = f"--jobs must be >= 0 (0: one per CPU), got {args.jobs}"
    else:
        problem = output_problem(args.markdown)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    rules = RuleSet()
    games = schedule(bots, args.players, args.games, args.seed)
    jobs = max(1, args.jobs or os.cpu_count() or 1)
    size = max(1, -(-len(games) // (jobs * 4)))
    chunks = [(games[a:a + size], rules) for a in range(0, len(games), size)]
    t0 = time.perf_counter()
    done: list[tuple[int, dict[str, Any]]] = []
    if jobs == 1:
        for c in chunks:
            done.extend(_chunk(c))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for part in pool.map(_chunk, chunks):
                done.extend(part)
    elapsed = time.perf_counter() - t0
    done.sort(key=lambda x: x[0])
    table = rate([r for _, r in done], bots)
    command = (f"rummy tournament --bots {','.join(bots)} --games {args.games} "
               f"--players {args.players} --seed {args.seed} --jobs {args.jobs}")
    section = markdown(table, command, elapsed)
    # the markers are for the file; on screen the table alone
    print(section.replace(BEGIN + "\n", "").replace(END + "\n", ""), end="")
    if args.markdown:
        try:
            write_section(args.markdown, section)
        except OSError as e:  # the table is printed above: nothing is lost
            print(f"error: cannot write {args.markdown}: {e.strerror}", file=sys.stderr)
            return 1
        print(f"written to {args.markdown}", file=sys.stderr)
    return 0


DESCRIPTION = """\
Play a round robin between bots and rate them with openskill (docs/strength.md).

Every combination of --players bots out of --bots plays --games games. Game i of a
pairing uses the seed derived from --seed and its index, with the line-up rotated by i
seats, so seat advantage and bot strength are not confounded. Games run in --jobs
processes; the ratings are fitted in game order afterwards, so the table does not depend
on --jobs.

Ratings: openskill's Plackett-Luce model (each game ranks the seats by final total, R9.4;
tied totals share a rank) from openskill's defaults (mu 25, sigma 25/3); the interval is
mu +/- 2 sigma. Win rates count a shared win as 1/k, with 95% Wilson intervals. Cost per
move is the wall time of the bot's act() in milliseconds on this machine: mean, median
and 99th percentile over every move.

--bots names 2 or more distinct bots of: random, basic, human, greedy, strategic, search
(docs/strength.md says what each does); --players is at most the number of bots. The
first bot in a process pays a one-time warm-up (imports, the compiled solver), so the
cost per move of small runs is rough. --markdown FILE puts the table between the lines
<!-- rummy tournament: begin --> and <!-- rummy tournament: end --> of FILE (or appends
them), replacing what was there.

examples:
  rummy tournament --bots random,basic,greedy,strategic --games 100 --jobs 2
  rummy tournament --bots human,strategic,search --games 50 --markdown docs/strength.md
"""


def add_parser(sub: Any) -> None:
    """Register ``rummy tournament``."""
    p = sub.add_parser("tournament", help="round robin between bots, with openskill ratings",
                       description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bots", default="random,basic,greedy,strategic",
                   help="comma-separated distinct bots (default random,basic,greedy,strategic)")
    p.add_argument("--games", type=int, default=20,
                   help="games per combination of bots (default 20)")
    p.add_argument("--players", type=int, default=2, help="seats per game (default 2)")
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    p.add_argument("--jobs", type=int, default=1,
                   help="worker processes (default 1; 0: CPU count)")
    p.add_argument("--markdown", metavar="FILE",
                   help="also put the table in FILE between its markers (see above; e.g. "
                   "docs/strength.md)")
    p.set_defaults(func=cmd_tournament)
