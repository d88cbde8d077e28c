"""CPU cost of the game-quality metrics (docs/metrics.md): the same games, with and without.

Plays games ``0..N-1`` of a batch (``rummy.simulate.game_seed``, rotated line-up) twice,
once with ``play_game(metrics=True)`` and once with ``metrics=False``, alternating game by
game so that the machine's load falls on both alike, and prints the process CPU seconds of
each (playing and aggregating, ``Aggregate.of_game``) and the overhead in percent. The
results of both runs are checked to be the same games (same winners and totals).

    .venv/bin/python benchmarks/quality_cost.py --games 200 --players 4 --seed 1
"""

from __future__ import annotations

import argparse
import json
import time

from rummy.simulate import DEFAULT_LINEUP, Aggregate, game_seed, lineup_for, parse_lineup, play_game


def main() -> None:
    """Run the measurement and print one JSON line."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bots", default=",".join(DEFAULT_LINEUP))
    args = p.parse_args()
    bots = parse_lineup(args.bots, args.players)
    play_game(bots, 0)  # compile the solver's kernels outside the measurement
    cpu = {True: 0.0, False: 0.0}
    for i in range(args.games):
        seats, seed = lineup_for(bots, i), game_seed(args.seed, i)
        finals = []
        for on in ((True, False) if i % 2 else (False, True)):
            t0 = time.process_time()
            r = play_game(seats, seed, metrics=on)
            Aggregate.of_game(r)
            cpu[on] += time.process_time() - t0
            finals.append((r.final, r.winners))
        assert finals[0] == finals[1], f"game {i} differs with and without metrics"
    print(json.dumps({"games": args.games, "players": args.players, "bots": list(bots),
                      "cpu_with": round(cpu[True], 2), "cpu_without": round(cpu[False], 2),
                      "overhead_pct": round(100 * (cpu[True] / cpu[False] - 1), 1)}))


if __name__ == "__main__":
    main()
