"""Benchmark: the exact search under ``joker_moves="locked"`` against the same search under
the default rules (its reference: the locked search wraps it) and the locked MILP model.

Fixed-seed positions whose tables hold a joker: random legal two-deck tables of 9-30 cards
with a joker in half the melds while the deck's two last, hands of 3-10 cards (a joker added
to a third of them). Position by position, interleaved so the machine's noise hits each
alike, it times ``solve`` under the default rules, ``solve`` under ``joker_moves="locked"``
(warm: numba's cache is loaded and each search run once before the timings) and, unless
``--no-milp``, the locked MILP (tests/solver/milp_reference.py, build + solve); it prints
median, p99 and total per solver, the ratio of locked to default, and checks that the
locked value equals the MILP's.

    .venv/bin/python benchmarks/bench_locked.py                 # 300 positions
    .venv/bin/python benchmarks/bench_locked.py --positions 1000 --no-milp
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rummy.cards import JOKER, TABLE_JOKER_BASE  # noqa: E402
from rummy.rules import RuleSet  # noqa: E402
from rummy.solver import compiled, solve  # noqa: E402
from rummy.solver.positions import random_position  # noqa: E402

LOCKED = RuleSet(joker_moves="locked")


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def positions(n: int, seed: int) -> list[tuple[tuple, tuple]]:
    """``n`` positions whose table holds at least one joker."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        table, hand = random_position(rng, rng.choice((9, 15, 20, 30)), rng.randint(3, 10),
                                      joker_rate=0.5)
        if not any(c >= TABLE_JOKER_BASE for m in table for c in m):
            continue
        if rng.random() < 0.3 and JOKER not in hand:
            hand = tuple(sorted(hand + (JOKER,)))
        out.append((table, hand))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-milp", action="store_true", help="skip the locked MILP")
    args = ap.parse_args()
    milp = None
    if not args.no_milp:
        from tests.solver.milp_reference import milp_best
        milp = milp_best
        milp((), (0, 1, 2))  # HiGHS prints its banner once, before the table
    pos = positions(args.positions, args.seed)
    backend = "compiled" if compiled.usable() else "pure"
    for table, hand in pos:  # warm: every search once (numba cache, first-call costs)
        solve(table, hand, backend=backend)
        solve(table, hand, rules=LOCKED, backend=backend)
    free_t, locked_t, milp_t = [], [], []
    for table, hand in pos:
        t0 = time.perf_counter()
        solve(table, hand, backend=backend)
        t1 = time.perf_counter()
        sol = solve(table, hand, rules=LOCKED, backend=backend)
        t2 = time.perf_counter()
        free_t.append(t1 - t0)
        locked_t.append(t2 - t1)
        if milp is not None:
            value = milp(table, hand, joker_moves="locked")
            milp_t.append(time.perf_counter() - t2)
            mine = sol.play.points if sol.play else 0
            if not sol.optimal or mine != value:
                print(f"MISMATCH: {table} {hand}: {mine} (proven {sol.optimal}) != {value}")
                return 1
    print(f"{len(pos)} positions with a table joker, backend {backend}, warm")
    for name, xs in (("default rules", free_t), ("joker_moves=locked", locked_t),
                     ("locked MILP", milp_t)):
        if xs:
            print(f"  {name:20s} median {1e3 * statistics.median(xs):8.3f} ms  "
                  f"p99 {1e3 * pct(xs, 0.99):8.2f} ms  total {sum(xs):7.2f} s")
    med_free, med_locked = statistics.median(free_t), statistics.median(locked_t)
    print(f"  locked / default: median {med_locked / med_free:.2f}x, "
          f"total {sum(locked_t) / sum(free_t):.2f}x")
    if milp_t:
        print(f"  MILP / locked: median {statistics.median(milp_t) / med_locked:.1f}x; "
              "every value equal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
