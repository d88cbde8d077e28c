"""RL environment speed: ``rummy_env.manipulation_rummy_v0`` against OpenSpiel's gin_rummy.

Both loops are what a researcher runs to collect random-play experience, interleaved in
slices within each round so a change of the machine's load hits both alike:

* ours: ``raw_env(players=2)``, ``env.last()`` -> a uniformly random legal action from
  ``obs["action_mask"]`` -> ``env.step``; one step = one ``env.step`` of an agent (with
  ``--auto-forced`` the forced decisions, every draw, are played inside ``step`` and not
  counted: the agent is asked only when it has a choice);
* OpenSpiel 2.0.2: ``pyspiel.load_game("gin_rummy")``, ``legal_actions`` ->
  ``random.choice`` -> ``apply_action``, chance nodes sampled from ``chance_outcomes``
  (their time included, not counted as steps), plus ``observation_tensor`` of the player to
  act, as an agent reads an observation each step.

Prints steps/s per round and the median over rounds, and the ratio ours / OpenSpiel.
Needs the ``bench`` extra (``pip install -e '.[bench]'``); without OpenSpiel only our
figures are printed. Run ``python -m rummy_env.warmup`` once after an install first (the
solver's numba kernels compile on first use).

Usage: python benchmarks/bench_env.py [--rounds N] [--seconds S] [--auto-forced]
       [--players P]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

from rummy_env import manipulation_rummy_v0 as rummy_v0


def ours_loop(players: int, auto_forced: bool) -> Callable[[], int]:
    """A function that plays one random game through the AEC API and returns the agent
    steps it took (the same sequence of seeds on every run)."""
    env = rummy_v0.raw_env(players=players, auto_forced=auto_forced)
    rng = np.random.default_rng(0)
    games = [0]

    def one() -> int:
        games[0] += 1
        env.reset(seed=games[0])
        n = 0
        while env.agents:
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(len(legal))]))
            n += 1
        return n
    return one


def openspiel_loop(observe: bool = True) -> Callable[[], int] | None:
    """One random gin_rummy game per call (decisions returned), or None without
    OpenSpiel; ``observe`` reads the acting player's ``observation_tensor`` each step."""
    try:
        import pyspiel  # type: ignore[import-not-found]
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(15)

    def one() -> int:
        s = game.new_initial_state()
        n = 0
        while not s.is_terminal():
            if s.is_chance_node():
                actions, probs = zip(*s.chance_outcomes(), strict=True)
                s.apply_action(rng.choices(actions, probs)[0])
            else:
                if observe:
                    s.observation_tensor(s.current_player())
                s.apply_action(rng.choice(s.legal_actions()))
                n += 1
        return n
    return one


def interleaved(seconds: float, fns: list[Callable[[], int]], slices: int = 10
                ) -> list[float]:
    """Run each function in alternating slices until each has had ``seconds``; the rate
    (units per second) of each."""
    acc = [[0.0, 0] for _ in fns]
    for _ in range(slices):
        for a, fn in zip(acc, fns, strict=True):
            t0 = time.perf_counter()
            while True:
                a[1] += fn()
                dt = time.perf_counter() - t0
                if dt >= seconds / slices:
                    a[0] += dt
                    break
    return [n / t for t, n in acc]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=4.0, help="seconds per loop per round")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--auto-forced", action="store_true")
    args = ap.parse_args()
    ours = ours_loop(args.players, args.auto_forced)
    ours()  # warm-up: imports, the solver's kernels
    theirs = openspiel_loop(observe=True)
    bare = openspiel_loop(observe=False)
    if theirs is None or bare is None:
        print("OpenSpiel is not installed (pip install -e '.[bench]'): our figures only")
        fns = [ours]
    else:
        theirs()
        fns = [ours, theirs, bare]
    print(f"random-play loop, steps/s; ours: {args.players} players, auto_forced="
          f"{args.auto_forced}; OpenSpiel: gin_rummy (2 players), 'obs' reads "
          "observation_tensor each step as an agent does, 'bare' does not; "
          f"{args.rounds} rounds of ~{args.seconds:g} s per loop")
    print(f"{'round':>6} {'ours':>9} {'OS obs':>9} {'ratio':>6} {'OS bare':>9} {'ratio':>6}")
    rows: list[list[float]] = []
    for r in range(args.rounds):
        rates = interleaved(args.seconds, fns)
        rows.append(rates)
        if len(rates) == 3:
            print(f"{r + 1:>6} {rates[0]:>9,.0f} {rates[1]:>9,.0f} "
                  f"{rates[0] / rates[1]:>5.2f}x {rates[2]:>9,.0f} "
                  f"{rates[0] / rates[2]:>5.2f}x")
        else:
            print(f"{r + 1:>6} {rates[0]:>9,.0f}")
    med = [statistics.median(col) for col in zip(*rows, strict=True)]
    if len(med) == 3:
        print(f"median {med[0]:>9,.0f} {med[1]:>9,.0f} {med[0] / med[1]:>5.2f}x "
              f"{med[2]:>9,.0f} {med[0] / med[2]:>5.2f}x")
    else:
        print(f"median {med[0]:>9,.0f}")


if __name__ == "__main__":
    main()
