"""Benchmark: ``best_play`` against two HiGHS MILPs, and greedy games per second.

Fixed-seed positions: random legal two-deck tables of about 30, 60 and 90 cards (declared
jokers included, rate 0.15 per meld) and hands of 10-20 cards drawn from the rest of the
deck (hand jokers included when drawn). Position by position (interleaved, so the machine's
noise hits every solver alike) it times our solver (the compiled search when numba is
installed; the median of ``--repeat`` calls), the pure reference search, a compact MILP
(one binary per candidate meld and copy, what a user would write first) and the project's
heavy MILP (model build + HiGHS solve, one call each); it prints medians, p99 and the
ratios against both MILPs, and checks that every value agrees. Then it plays full 4-player
games (to 150, R9.1) with greedy bots and prints games per second.

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


def bench_positions(n: int, seed: int, milp: bool, pure: bool, sizes: tuple[int, ...],
                    repeat: int) -> None:
    """Time every solver on the same positions, interleaved position by position: ours
    (``repeat`` calls, their median), the pure reference search, the compact MILP and the
    heavy MILP (one call each), and check that every value agrees."""
    if milp:
        from tests.solver.milp_compact import compact_best
        from tests.solver.milp_reference import milp_best
    backend = "compiled" if compiled.usable() else "pure"
    if backend == "compiled":  # compile (or load numba's cache) outside the timings
        best_play((), (0, 1, 2), backend="compiled")
    if milp:
        milp_best((), (0, 1, 2))  # HiGHS prints its banner once: before the table
        compact_best((), (0, 1, 2))
    print(f"solver backend timed as 'ours': {backend} (median of {repeat} calls per position)")
    print("references, each timed once per position between our calls (model build + solve):")
    print("  compact MILP: one binary per candidate meld and copy (tests/solver/milp_compact.py)")
    print("  heavy MILP: an integer per meld and per meld slot (tests/solver/milp_reference.py)")
    print(f"{'table':>6} {'n':>4} {'ours med':>9} {'ours p99':>9} {'ours max':>9} "
          f"{'pure med':>9} {'cmp med':>9} {'cmp p99':>9} {'heavy med':>9} "
          f"{'cmp/ours':>13} {'heavy/ours':>10}  (ms; ratios at median | p99)")
    for size in sizes:
        rng = random.Random(f"bench:{seed}:{size}")
        ours: list[float] = []
        ref: list[float] = []
        compact: list[float] = []
        heavy: list[float] = []
        table_sizes: list[int] = []
        bad = 0
        positions = [random_position(rng, size, rng.randint(10, 20)) for _ in range(n)]
        for table, hand in positions:
            table_sizes.append(sum(map(len, table)))
            runs = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                play = best_play(table, hand, backend=backend)
                runs.append((time.perf_counter() - t0) * 1e3)
            ours.append(statistics.median(runs))
            mine = play.points if play else 0
            if pure and backend != "pure":
                t0 = time.perf_counter()
                again = best_play(table, hand, backend="pure")
                ref.append((time.perf_counter() - t0) * 1e3)
                if again != play:
                    bad += 1
                    print(f"  MISMATCH: compiled {play}, pure {again}")
            if milp:
                t0 = time.perf_counter()
                value_c = compact_best(table, hand)
                compact.append((time.perf_counter() - t0) * 1e3)
                t0 = time.perf_counter()
                value_h = milp_best(table, hand)
                heavy.append((time.perf_counter() - t0) * 1e3)
                if not value_c == value_h == mine:
                    bad += 1
                    print(f"  MISMATCH: ours {mine}, compact MILP {value_c}, heavy {value_h}")
        o50, o99 = statistics.median(ours), pct(ours, 0.99)
        line = f"{size:>6} {n:>4} {o50:>9.3f} {o99:>9.2f} {max(ours):>9.1f}"
        line += f" {statistics.median(ref):>9.2f}" if ref else f" {'-':>9}"
        if milp:
            c50, c99 = statistics.median(compact), pct(compact, 0.99)
            h50, h99 = statistics.median(heavy), pct(heavy, 0.99)
            line += (f" {c50:>9.2f} {c99:>9.1f} {h50:>9.2f} "
                     f"{c50 / o50:>6.0f}x|{c99 / o99:>4.0f}x {h50 / o50:>5.0f}x|{h99 / o99:>3.0f}x")
        print(line + f"   (mean table {statistics.mean(table_sizes):.1f} cards)")
        checked = " and ".join(x for x, on in (("pure", bool(ref)), ("both MILPs", milp)) if on)
        print(f"{'':>6} {sum(x > 20 for x in ours)} of {n} positions over 20 ms"
              + (f"; every value agrees with {checked}" if checked and not bad else ""))
    print("targets at 60 cards: ours >= 100x faster than the compact MILP at the "
          "median, >= 50x at p99")


def bench_games(games: int, seed: int) -> None:
    from rummy.simulate import play_game
    t0 = time.perf_counter()
    rounds = 0
    for i in range(games):
        rounds += play_game(["greedy"] * 4, seed + i).rounds
    dt = time.perf_counter() - t0
    print(f"greedy 4-player games: {games} games ({rounds} rounds) in {dt:.1f} s = "
          f"{games / dt:.2f} games/s on one core (33/s before the 2026-11-30 changes; target 66/s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--positions", type=int, default=150, help="positions per table size")
    ap.add_argument("--games", type=int, default=20, help="greedy games to time (0: skip)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-milp", action="store_true", help="skip the MILP reference")
    ap.add_argument("--no-pure", action="store_true",
                    help="skip timing the pure reference search (slow on hard positions)")
    ap.add_argument("--sizes", default="30,60,90", help="table sizes in cards (default 30,60,90)")
    ap.add_argument("--repeat", type=int, default=3,
                    help="calls of our solver per position, their median timed (default 3)")
    args = ap.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}; seed {args.seed}")
    sizes = tuple(int(x) for x in args.sizes.split(",") if x.strip())
    bench_positions(args.positions, args.seed, not args.no_milp, not args.no_pure, sizes,
                    max(1, args.repeat))
    if args.games:
        bench_games(args.games, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
