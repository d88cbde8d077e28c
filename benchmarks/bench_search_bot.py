"""Benchmark: the ``search`` bot against ``strategic``, head to head, with its cost per move.

Two-player games (default rules) on paired seeds: seed ``k`` (``rummy.simulate.game_seed``
of ``--seed`` and ``k``) is played twice, once with ``search`` in seat 0 and once in seat 1,
so the deal and the seat advantage cancel out within a pair. Prints the search bot's win
rate with its 95% Wilson interval (a shared win counts 1/2), the pairs it won twice, split
or lost twice, and the wall time of ``act`` per move: median and 99th percentile over every
move (draws included) and over the decisions it searched (two candidates or more).

    .venv/bin/python benchmarks/bench_search_bot.py --pairs 10
    .venv/bin/python benchmarks/bench_search_bot.py --pairs 100 --iterations 8
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rummy.bots import make_bot  # noqa: E402
from rummy.bots.search import DEFAULT_ITERATIONS, SearchBot  # noqa: E402
from rummy.commands import CreateGame  # noqa: E402
from rummy.decide import step  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy.simulate import game_seed  # noqa: E402
from rummy.state import GAME_OVER  # noqa: E402
from rummy.stats import wilson  # noqa: E402
from rummy.views import view  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    """Nearest-rank quantile ``q`` of ``xs`` (0.0 for none)."""
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[max(0, math.ceil(q * len(xs)) - 1)]


def play(seed: int, me: int, iterations: int, opponent: str,
         every: list[float], searched: list[float]) -> float:
    """One game with the search bot in seat ``me``; its win credit (R9.4)."""
    lineup = [opponent, opponent]
    lineup[me] = "search"
    bots = [SearchBot(seed * 8 + s, iterations=iterations) if b == "search"
            else make_bot(b, seed * 8 + s) for s, b in enumerate(lineup)]
    state, _ = step(None, CreateGame(2, seed, RuleSet(), tuple(lineup)))
    while state.phase != GAME_OVER:
        seat = state.turn
        v = view(state, seat)
        bot = bots[seat]
        before = bot.searched if isinstance(bot, SearchBot) else 0
        t0 = time.perf_counter()
        cmd = bot.act(v)
        ms = 1000 * (time.perf_counter() - t0)
        if isinstance(bot, SearchBot):
            every.append(ms)
            if bot.searched > before:
                searched.append(ms)
        state, _ = step(state, cmd)
    assert state.result is not None
    winners = state.result.winners
    return 1 / len(winners) if me in winners else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=10, help="seeds, each played twice")
    ap.add_argument("--seed", type=int, default=16, help="master seed")
    ap.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    ap.add_argument("--opponent", default="strategic")
    args = ap.parse_args()
    every: list[float] = []
    searched: list[float] = []
    wins = 0.0
    pairs = {2.0: 0, 1.5: 0, 1.0: 0, 0.5: 0, 0.0: 0}
    t0 = time.perf_counter()
    for k in range(args.pairs):
        seed = game_seed(args.seed, k)
        pair = sum(play(seed, me, args.iterations, args.opponent, every, searched)
                   for me in (0, 1))
        wins += pair
        pairs[pair] = pairs.get(pair, 0) + 1
    games = 2 * args.pairs
    lo, hi = wilson(wins, games)
    print(f"search (iterations {args.iterations}) vs {args.opponent}: {games} games "
          f"({args.pairs} paired seeds), win rate {100 * wins / games:.1f} % "
          f"[{100 * lo:.1f}, {100 * hi:.1f}]")
    print(f"pairs won twice {pairs[2.0]}, split {pairs[1.0]}, lost twice {pairs[0.0]}"
          f" (with a shared win: {pairs[1.5] + pairs[0.5]})")
    print(f"cost per move, every move ({len(every)}): median {statistics.median(every):.2f} ms,"
          f" p99 {pct(every, 0.99):.1f} ms, mean {statistics.fmean(every):.2f} ms")
    if searched:
        print(f"cost per searched decision ({len(searched)}, "
              f"{len(searched) / games:.1f} per game): median "
              f"{statistics.median(searched):.1f} ms, p99 {pct(searched, 0.99):.1f} ms")
    print(f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
