"""Benchmark: ``best_play`` against the HiGHS MILP reference, and greedy games per second.

Fixed-seed positions: random legal two-deck tables of about 30, 60 and 90 cards (declared
jokers included, rate 0.15 per meld) and hands of 10-20 cards drawn from the rest of the
deck (hand jokers included when drawn). For each table size it prints the median, p99 and
maximum wall time of our solver (the compiled search when numba is installed), of the pure
reference search, and of the MILP (model build + HiGHS solve), and the ratio of the medians;
it checks that all three agree on every position. Then
it plays full 4-player games (to 150, R9.1) with greedy bots and prints games per second.

    .venv/bin/python benchmarks/bench_solver.py            # 150 positions per size
    .venv/bin/python benchmarks/bench_solver.py --positions 400 --games 40

Needs the dev extra (highspy) for the MILP; "ours" is the default backend (the compiled
search when numba is installed, see rummy/solver/compiled.py), "pure" the reference search.
At 60 and 90 cards every generated table holds both table jokers (a missing card is played
as a joker), so those hands hold none.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rummy.solver import best_play, compiled  # noqa: E402
from rummy.solver.positions import random_position  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def bench_positions(n: int, seed: int, milp: bool, pure: bool) -> None:
    if milp:
        from tests.solver.milp_reference import milp_best
    backend = "compiled" if compiled.usable() else "pure"
    if backend == "compiled":  # compile (or load numba's cache) outside the timings
        best_play((), (0, 1, 2), backend="compiled")
    if milp:
        milp_best((), (0, 1, 2))  # HiGHS prints its banner once: before the table
    print(f"solver backend timed as 'ours': {backend}")
    print(f"{'table':>6} {'n':>4} {'ours med':>9} {'ours p99':>9} {'ours max':>9} "
          f"{'pure med':>9} {'pure p99':>9} {'MILP med':>9} {'MILP p99':>9} "
          f"{'MILP/ours':>9}  (ms)")
    for size in (30, 60, 90):
        rng = random.Random(f"bench:{seed}:{size}")
        ours: list[float] = []
        ref: list[float] = []
        plain: list[float] = []  # positions without any joker (table or hand)
        total: list[float] = []
        sizes: list[int] = []
        bad = 0
        positions = [random_position(rng, size, rng.randint(10, 20)) for _ in range(n)]
        # one pass per solver over the same positions (not interleaved, so no solver runs
        # with caches just filled by another)
        plays = []
        for table, hand in positions:
            sizes.append(sum(map(len, table)))
            t0 = time.perf_counter()
            plays.append(best_play(table, hand, backend=backend))
            ours.append((time.perf_counter() - t0) * 1e3)
            if 52 not in hand and all(c < 53 for m in table for c in m):
                plain.append(ours[-1])
        if pure and backend != "pure":
            for (table, hand), play in zip(positions, plays, strict=True):
                t0 = time.perf_counter()
                again = best_play(table, hand, backend="pure")
                ref.append((time.perf_counter() - t0) * 1e3)
                if again != play:
                    bad += 1
                    print(f"  MISMATCH: compiled {play}, pure {again}")
        if milp:
            for (table, hand), play in zip(positions, plays, strict=True):
                t0 = time.perf_counter()
                value = milp_best(table, hand)
                total.append((time.perf_counter() - t0) * 1e3)
                mine = play.points if play else 0
                if value != mine:
                    bad += 1
                    print(f"  MISMATCH: ours {mine}, MILP {value}")
        line = (f"{size:>6} {n:>4} {statistics.median(ours):>9.2f} {pct(ours, 0.99):>9.2f} "
                f"{max(ours):>9.1f}")
        line += (f" {statistics.median(ref):>9.2f} {pct(ref, 0.99):>9.2f}" if ref
                 else f" {'-':>9} {'-':>9}")
        if milp:
            line += (f" {statistics.median(total):>9.2f} {pct(total, 0.99):>9.2f} "
                     f"{statistics.median(total) / statistics.median(ours):>8.1f}x")
        print(line + f"   (mean table {statistics.mean(sizes):.1f} cards)")
        if plain:
            print(f"{'':>6} {len(plain):>4} {statistics.median(plain):>9.2f} "
                  f"{pct(plain, 0.99):>9.2f}  <- positions without jokers")
        checked = " and ".join(x for x, on in (("pure", bool(ref)), ("MILP", milp)) if on)
        print(f"{'':>6} {sum(x > 20 for x in ours)} of {n} positions over 20 ms"
              + (f"; every value agrees with {checked}" if checked and not bad else ""))


def bench_games(games: int, seed: int) -> None:
    from rummy.simulate import play_game
    t0 = time.perf_counter()
    rounds = 0
    for i in range(games):
        rounds += play_game(["greedy"] * 4, seed + i).rounds
    dt = time.perf_counter() - t0
    print(f"greedy 4-player games: {games} games ({rounds} rounds) in {dt:.1f} s = "
          f"{games / dt:.2f} games/s on one core")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--positions", type=int, default=150, help="positions per table size")
    ap.add_argument("--games", type=int, default=20, help="greedy games to time (0: skip)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-milp", action="store_true", help="skip the MILP reference")
    ap.add_argument("--no-pure", action="store_true",
                    help="skip timing the pure reference search (slow on hard positions)")
    args = ap.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}; seed {args.seed}")
    bench_positions(args.positions, args.seed, not args.no_milp, not args.no_pure)
    if args.games:
        bench_games(args.games, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
