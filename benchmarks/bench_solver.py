"""Benchmark: ``best_play`` against the compact HiGHS MILP, and greedy games per CPU-second.

Positions (fixed seeds): random legal two-deck tables of about 30, 60 and 90 cards
(declared jokers included, rate 0.15 per meld) with hands of 10-20 cards drawn from the rest
of the deck, and the ``full`` family of :func:`rummy.solver.positions.edge_position` (one or
two 13-card sequences, 0-2 jokers between table and hand: the positions where a wildcard is
hardest to place). Position by position, interleaved so that the machine's load hits every
solver alike: our solver (the default backend: the compiled search when numba is installed)
is called twice, the compact MILP (``tests/solver/milp_compact.py``: one binary per
candidate meld and copy, what a user would write first) once, and optionally the heavy MILP
(``--heavy``) and the pure reference search (``--pure``).

* every time is **CPU time** of this process (``time.process_time_ns``), so other processes
  on the machine do not count; the load average is printed;
* **cold** is our first call on a position, right after the MILP solved the previous one (a
  fresh position, caches taken by HiGHS: what a single call on a new position costs);
  **warm** is the second call on the same position, immediately after;
* median and p99 over the positions (p99: the value at rank 0.99 * (n - 1), rounded; with
  200 positions, the third slowest: a p99 of fewer positions is about the maximum), and
  the ratios MILP / ours at the median and at p99.

Then greedy 4-player games (to 150, R9.1) per CPU-second: this tree against a baseline
commit (``--baseline``, default the commit before the solver's speed-up), each in its own
subprocess, in alternating rounds; the baseline's ``rummy/`` is taken with ``git archive``
into a temporary directory (numba compiles its kernels there once, outside the timing).

    .venv/bin/python benchmarks/bench_solver.py             # 200 positions per family
    .venv/bin/python benchmarks/bench_solver.py --positions 600 --sizes 60 --games 0

Needs the dev extra (highspy) for the MILP.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rummy.solver import best_play, compiled  # noqa: E402
from rummy.solver.positions import edge_position, random_position  # noqa: E402

#: the commit before the solver's whole-position kernel (the greedy games' reference)
BASELINE = "66d9c65"


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def cpu_ms(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` and its CPU time in ms."""
    t0 = time.process_time_ns()
    out = fn(*args, **kwargs)
    return out, (time.process_time_ns() - t0) / 1e6


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on Linux
        return "n/a"


def family_positions(family: str, n: int, seed: int) -> list[tuple[tuple, tuple]]:
    """``n`` positions of a family: a table size in cards (``"60"``) or ``"full"``."""
    rng = random.Random(f"bench:{seed}:{family}")
    if family == "full":
        return [edge_position(rng, "full") for _ in range(n)]
    size = int(family)
    return [random_position(rng, size, rng.randint(10, 20)) for _ in range(n)]


def bench_positions(n: int, seed: int, families: tuple[str, ...], heavy: bool,
                    pure: bool, prefixes: tuple[int, ...] = ()) -> None:
    """Time ours (cold and warm), the compact MILP and, optionally, the heavy MILP and the
    pure search on the same positions, interleaved, and check that every value agrees.
    ``prefixes``: also report the cold median and p99 of the first so many positions (the
    positions of a run with that ``--positions``, timed in this run)."""
    from tests.solver.milp_compact import compact_best
    if heavy:
        from tests.solver.milp_reference import milp_best
    backend = "compiled" if compiled.usable() else "pure"
    best_play((), (0, 1, 2), backend=backend)  # numba's cache loaded outside the timings
    compact_best((), (0, 1, 2))  # HiGHS prints its banner once: before the table
    if heavy:
        milp_best((), (0, 1, 2))
    print(f"\nsolver: ours = backend {backend!r}, single calls, CPU time; cold = first call "
          "on a fresh position (after the MILP's), warm = the second call; reference: "
          "compact HiGHS MILP (model build + solve, one call); load average " + load())
    print(f"{'family':>7} {'n':>4} {'cold med':>9} {'cold p99':>9} {'warm med':>9} "
          f"{'warm p99':>9} {'MILP med':>9} {'MILP p99':>9} {'MILP/cold':>12} "
          f"{'MILP/warm':>12}" + (f" {'heavy med':>9}" if heavy else "")
          + (f" {'pure med':>9}" if pure else "") + "   (ms; ratios: median | p99)")
    for family in families:
        cold: list[float] = []
        warm: list[float] = []
        milp: list[float] = []
        heavy_t: list[float] = []
        pure_t: list[float] = []
        cards: list[int] = []
        bad = 0
        for table, hand in family_positions(family, n, seed):
            cards.append(sum(map(len, table)))
            play, t = cpu_ms(best_play, table, hand, backend=backend)
            cold.append(t)
            again, t = cpu_ms(best_play, table, hand, backend=backend)
            warm.append(t)
            mine = play.points if play else 0
            value, t = cpu_ms(compact_best, table, hand)
            milp.append(t)
            values = [value]
            if heavy:
                value_h, t = cpu_ms(milp_best, table, hand)
                heavy_t.append(t)
                values.append(value_h)
            if pure and backend != "pure":
                ref, t = cpu_ms(best_play, table, hand, backend="pure")
                pure_t.append(t)
                if ref != play:
                    bad += 1
                    print(f"  MISMATCH: compiled {play}, pure {ref}")
            if again != play or any(v != mine for v in values):
                bad += 1
                print(f"  MISMATCH: ours {mine} (again {again}), MILP {values}")
        c50, c99 = statistics.median(cold), pct(cold, 0.99)
        w50, w99 = statistics.median(warm), pct(warm, 0.99)
        m50, m99 = statistics.median(milp), pct(milp, 0.99)
        line = (f"{family:>7} {n:>4} {c50:>9.3f} {c99:>9.2f} {w50:>9.3f} {w99:>9.2f} "
                f"{m50:>9.2f} {m99:>9.1f} {m50 / c50:>6.0f}x|{m99 / c99:>4.0f}x "
                f"{m50 / w50:>6.0f}x|{m99 / w99:>4.0f}x")
        if heavy:
            line += f" {statistics.median(heavy_t):>9.2f}"
        if pure_t:
            line += f" {statistics.median(pure_t):>9.2f}"
        print(line + f"   (mean table {statistics.mean(cards):.1f} cards, max cold "
              f"{max(cold):.1f} ms)")
        for k in prefixes:
            if 0 < k < n:
                c, m = cold[:k], milp[:k]
                print(f"{'':>7} first {k}: cold med {statistics.median(c):.3f} p99 "
                      f"{pct(c, 0.99):.2f}, MILP med {statistics.median(m):.2f} p99 "
                      f"{pct(m, 0.99):.1f}: {statistics.median(m) / statistics.median(c):.0f}x"
                      f"|{pct(m, 0.99) / pct(c, 0.99):.0f}x")
        if not bad:
            print(f"{'':>7} every value agrees with the MILP"
                  + (" and every play with the pure search" if pure_t else ""))
    print("targets (60 cards and full): cold MILP/ours >= 100x at the median, >= 50x at p99")


_GAMES = """
import sys, time
sys.path.insert(0, sys.argv[1])
from rummy.simulate import play_game
from rummy.solver import compiled
compiled.usable()
play_game(["greedy"] * 4, 10_000)  # numba's cache loaded outside the timing
n, seed = int(sys.argv[2]), int(sys.argv[3])
t0 = time.process_time()
for i in range(n):
    play_game(["greedy"] * 4, seed + i)
print(time.process_time() - t0)
"""


def _baseline_tree(ref: str) -> Path | None:
    """A directory holding the ``rummy/`` package of commit ``ref`` (kept between runs so
    that numba compiles its kernels once), or None without git or the commit."""
    dest = Path(tempfile.gettempdir()) / f"rummy-bench-baseline-{ref}"
    if (dest / "rummy" / "__init__.py").exists():
        return dest
    if shutil.which("git") is None:
        return None
    tmp = Path(tempfile.mkdtemp(prefix="rummy-bench-"))
    try:
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "rummy"],
                             capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=tar, check=True)
        tmp.rename(dest)
    except (subprocess.CalledProcessError, OSError):
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    return dest


def _games_cpu(tree: Path, games: int, seed: int) -> float:
    out = subprocess.run([sys.executable, "-c", _GAMES, str(tree), str(games), str(seed)],
                         capture_output=True, text=True, check=True, cwd=tree,
                         env={**os.environ, "PYTHONPATH": str(tree)})
    return float(out.stdout.strip().splitlines()[-1])


def bench_games(games: int, seed: int, rounds: int, ref: str) -> None:
    """Greedy 4-player games per CPU-second, this tree against commit ``ref``, each round
    one subprocess each (same games, same seeds), alternating which goes first."""
    base = _baseline_tree(ref) if ref else None
    print(f"\ngreedy 4-player games per CPU-second ({games} games per run, {rounds} rounds, "
          f"each run a subprocess; load average {load()})")
    if base is None:
        print(f"  baseline {ref!r} not available (no git or no such commit): ours only")
    else:
        _games_cpu(base, 1, seed)  # numba compiles the baseline's kernels: not timed
    ours_r: list[float] = []
    base_r: list[float] = []
    for r in range(rounds):
        order = [("ours", ROOT), ("base", base)] if r % 2 == 0 else \
            [("base", base), ("ours", ROOT)]
        for name, tree in order:
            if tree is None:
                continue
            rate = games / _games_cpu(tree, games, seed)
            (ours_r if name == "ours" else base_r).append(rate)
        print(f"  round {r + 1}: ours {ours_r[-1]:.1f} games/CPU-s"
              + (f", baseline {base_r[-1]:.1f}, ratio {ours_r[-1] / base_r[-1]:.2f}x"
                 if base_r else ""))
    om = statistics.median(ours_r)
    line = f"  median: ours {om:.1f} games/CPU-s"
    if base_r:
        bm = statistics.median(base_r)
        line += (f", baseline ({ref}) {bm:.1f}: {om / bm:.2f}x (target >= 2x: "
                 f"{'met' if om / bm >= 2 else 'NOT met'})")
    print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--positions", type=int, default=200, help="positions per family")
    ap.add_argument("--sizes", default="30,60,90,full",
                    help="families: table sizes in cards and/or 'full' (default 30,60,90,full)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prefixes", default="",
                    help="also report the first N positions of each family, e.g. 150,200")
    ap.add_argument("--heavy", action="store_true", help="time the heavy MILP as well")
    ap.add_argument("--pure", action="store_true",
                    help="time the pure reference search as well (slow on hard positions)")
    ap.add_argument("--games", type=int, default=40, help="greedy games per run (0: skip)")
    ap.add_argument("--rounds", type=int, default=4, help="rounds of the greedy games")
    ap.add_argument("--baseline", default=BASELINE,
                    help=f"commit the greedy games are compared with (default {BASELINE}; "
                    "'' for none)")
    args = ap.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}; seed {args.seed}")
    families = tuple(x.strip() for x in args.sizes.split(",") if x.strip())
    if args.positions and families:
        prefixes = tuple(int(x) for x in args.prefixes.split(",") if x.strip())
        bench_positions(args.positions, args.seed, families, args.heavy, args.pure, prefixes)
    if args.games:
        bench_games(args.games, args.seed, max(1, args.rounds), args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
