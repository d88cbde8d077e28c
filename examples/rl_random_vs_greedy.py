"""Random and greedy agents through the PettingZoo environment (no training): win rates.

    python examples/rl_random_vs_greedy.py --games 40 --players 2 --seed 0

The greedy agent takes meld slot 0 (the solver's best play, docs/rl.md) whenever it is
legal, draws when due and always knocks; the random agent picks uniformly among the legal
actions (the action mask). Seats alternate between the agents and rotate every game.
Prints each agent's win rate with a 95% Wilson interval (shared wins count 1/k).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from rummy_env import manipulation_rummy_v0 as rummy_v0


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def greedy(mask: np.ndarray, rng: np.random.Generator) -> int:
    """Draw, the best play (slot 0), knock; else pass."""
    for a in (rummy_v0.DRAW_ACTION, rummy_v0.N_FIXED, rummy_v0.KNOCK_ACTION,
              rummy_v0.PASS_ACTION):
        if mask[a]:
            return a
    return int(np.flatnonzero(mask)[0])


def random_agent(mask: np.ndarray, rng: np.random.Generator) -> int:
    """Uniform over the legal actions."""
    return int(rng.choice(np.flatnonzero(mask)))


POLICIES = {"greedy": greedy, "random": random_agent}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    names = list(POLICIES)
    wins = dict.fromkeys(names, 0.0)
    seats = dict.fromkeys(names, 0)
    rng = np.random.default_rng(args.seed)
    env = rummy_v0.env(players=args.players)
    t0 = time.perf_counter()
    steps = 0
    for g in range(args.games):
        lineup = [names[(i + g) % len(names)] for i in range(args.players)]
        env.reset(seed=args.seed * 100_003 + g)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = int(agent.split("_")[1])
            env.step(POLICIES[lineup[seat]](obs["action_mask"], rng))
            steps += 1
        result = env.unwrapped.state_.result
        for seat, name in enumerate(lineup):
            seats[name] += 1
            if seat in result.winners:
                wins[name] += 1 / len(result.winners)
    elapsed = time.perf_counter() - t0
    print(f"{args.games} games, {args.players} players, seed {args.seed}: "
          f"{steps} agent steps in {elapsed:.1f} s")
    for name in names:
        lo, hi = wilson(wins[name], seats[name])
        print(f"{name:7s} win rate {wins[name] / seats[name]:.3f} "
              f"[{lo:.3f}, {hi:.3f}] over {seats[name]} seat-games")


if __name__ == "__main__":
    main()
