"""Differential fuzz of ``best_play`` against the independent MILP model.

Positions come from :func:`rummy.solver.positions.edge_position`, whose families are built
to reach the edges of R4/R5 where a wildcard is hard to place: 13-card sequences, both
aces of a suit, ace high and low, 0–2 jokers on the table and in the hand, groups of four
with jokers, melds of jokers alone. For every position:

* ``best_play`` (the default backend) must not raise;
* its play must pass ``check_action`` and add exactly ``play.cards``;
* its value must equal the MILP optimum (``tests/solver/milp_reference.py``, HiGHS);
* on every 10th position, the pure reference backend must give the same value too.

Usage (CI runs 20,000 positions on two processes)::

    python -m tests.solver.fuzz_edges --positions 20000 --jobs 2 [--seed 0]

Prints a progress line, every failure in one line (family, what, table, hand), then
``N positions, C crashes, W wrong`` and exits non-zero if C or W is not 0.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from rummy.cards import format_cards
from rummy.melds import check_action, table_text
from rummy.solver import best_play
from rummy.solver.positions import EDGE_FAMILIES, edge_position


@dataclass
class Tally:
    """What one chunk of the fuzz found."""

    positions: int = 0
    crashes: int = 0
    wrong: int = 0
    failures: list[str] = field(default_factory=list)
    solver_s: list[float] = field(default_factory=list)


def run_chunk(seed: int, chunk: int, count: int) -> Tally:
    """Fuzz ``count`` positions of chunk ``chunk`` (deterministic for ``seed``)."""
    from tests.solver.milp_reference import milp_best

    rng = random.Random(f"fuzz-edges:{seed}:{chunk}")
    out = Tally()
    for i in range(count):
        family = EDGE_FAMILIES[i % len(EDGE_FAMILIES)]
        table, hand = edge_position(rng, family)
        where = f"{family}: table {table_text(table)!r} hand {' '.join(format_cards(hand))!r}"
        out.positions += 1
        t = time.perf_counter()
        try:
            play = best_play(table, hand)
            mine = 0
            if play is not None:
                added = check_action(table, hand, play.table)
                if tuple(sorted(added)) != play.cards:
                    raise AssertionError(f"play adds {added}, says {play.cards}")
                mine = play.points
            if i % 10 == 0:
                pure = best_play(table, hand, backend="pure")
                if (pure.points if pure else 0) != mine:
                    raise AssertionError(f"pure backend {pure and pure.points} != {mine}")
        except Exception as e:  # noqa: BLE001 - every crash is counted and reported
            out.crashes += 1
            out.failures.append(f"CRASH {type(e).__name__}: {e} -- {where}")
            continue
        out.solver_s.append(time.perf_counter() - t)
        ref = milp_best(table, hand)
        if ref != mine:
            out.wrong += 1
            out.failures.append(f"WRONG best_play {mine}, MILP {ref} -- {where}")
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line; returns the exit code (1 on any crash or wrong value)."""
    p = argparse.ArgumentParser(prog="python -m tests.solver.fuzz_edges",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--positions", type=int, default=20_000, help="positions (default 20000)")
    p.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the run (default 0)")
    args = p.parse_args(argv)
    chunk = 250
    chunks = [(args.seed, k, min(chunk, args.positions - k * chunk))
              for k in range((args.positions + chunk - 1) // chunk)]
    total = Tally()
    t0 = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for n, t in enumerate(pool.map(run_chunk, *zip(*chunks, strict=True)), 1):
            total.positions += t.positions
            total.crashes += t.crashes
            total.wrong += t.wrong
            total.solver_s += t.solver_s
            for f in t.failures:
                print(f, flush=True)
            print(f"[{n}/{len(chunks)}] {total.positions} positions, {total.crashes} crashes, "
                  f"{total.wrong} wrong, {time.perf_counter() - t0:.0f} s", file=sys.stderr,
                  flush=True)
    xs = sorted(total.solver_s) or [0.0]
    print(f"{total.positions} positions, {total.crashes} crashes, {total.wrong} wrong "
          f"(best_play median {xs[len(xs) // 2] * 1e3:.2f} ms, p99 "
          f"{xs[int(0.99 * len(xs))] * 1e3:.2f} ms, max {xs[-1] * 1e3:.1f} ms)")
    return 1 if total.crashes or total.wrong else 0


if __name__ == "__main__":
    sys.exit(main())
