"""Train sb3-contrib's MaskablePPO as one seat against the greedy bot; plot its learning curve.

    pip install sb3-contrib matplotlib        # not project dependencies (torch is large)
    python -m rummy_env.warmup
    PYTHONPATH=. python examples/rl_maskable_ppo.py --out docs/rl_ppo   # ~300 CPU s

The learner is ``rummy_env.single_agent(seat=0, opponents={1: "greedy"})`` (2 players,
normalised observations, forced decisions played inside the environment, docs/rl.md),
with a shorter game (``target_score`` 50) so that more games fit in a run. Every
``--eval-every`` timesteps the current policy (deterministic, masked) plays
``--eval-games`` fresh games with fixed seeds, seats alternating, and its win rate (a
shared win counts 1/k) and mean reward per game are recorded, with the CPU seconds used so
far (``time.process_time``: this process, the environment and PPO updates together).
A random policy over the same games is the baseline at timestep 0.

Writes ``OUT.csv`` (timesteps, cpu_s, win_rate, mean_reward) and ``OUT.png``.
"""

from __future__ import annotations

import argparse
import csv
import time

import numpy as np

from rummy.rules import RuleSet
from rummy_env import single_agent


def evaluate(policy, games: int, target: int, seed: int) -> tuple[float, float]:
    """Win rate and mean reward per game of ``policy(obs, mask) -> action`` against
    greedy, seats alternating, on fixed seeds."""
    wins = total = 0.0
    for g in range(games):
        seat = g % 2
        env = single_agent(seat=seat, opponents={1 - seat: "greedy"},
                           rules=RuleSet(target_score=target))
        obs, info = env.reset(seed=seed + g)
        done = False
        while not done:
            action = policy(obs, info["action_mask"].astype(bool))
            obs, reward, term, trunc, info = env.step(action)
            total += reward
            done = term or trunc
        result = env.aec.state_.result
        if result is not None and seat in result.winners:
            wins += 1 / len(result.winners)
    return wins / games, total / games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timesteps", type=int, default=200_000)
    ap.add_argument("--eval-every", type=int, default=20_000)
    ap.add_argument("--eval-games", type=int, default=100)
    ap.add_argument("--target", type=int, default=50, help="target_score of the games")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="rl_ppo")
    args = ap.parse_args()

    import torch
    from sb3_contrib import MaskablePPO
    torch.set_num_threads(1)
    rules = RuleSet(target_score=args.target)
    env = single_agent(seat=0, opponents={1: "greedy"}, rules=rules)
    model = MaskablePPO("MlpPolicy", env, n_steps=2048, batch_size=256, learning_rate=3e-4,
                        gamma=0.995, ent_coef=0.01, seed=args.seed, verbose=0)
    rng = np.random.default_rng(args.seed)

    def random_policy(obs: np.ndarray, mask: np.ndarray) -> int:
        return int(rng.choice(np.flatnonzero(mask)))

    def ppo_policy(obs: np.ndarray, mask: np.ndarray) -> int:
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return int(action)

    eval_seed = 1_000_000
    rows: list[tuple[int, float, float, float]] = []

    def save_csv() -> None:  # after every evaluation, so a cut run keeps its points
        with open(f"{args.out}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["timesteps", "cpu_s", "win_rate", "mean_reward"])
            w.writerows(rows)

    win, rew = evaluate(random_policy, args.eval_games, args.target, eval_seed)
    rows.append((0, time.process_time(), win, rew))
    print(f"{0:>8} steps  cpu {rows[-1][1]:7.1f} s  win {win:.3f}  reward {rew:+.3f}  (random)")
    save_csv()
    done = 0
    while done < args.timesteps:
        model.learn(args.eval_every, reset_num_timesteps=False)
        done += args.eval_every
        win, rew = evaluate(ppo_policy, args.eval_games, args.target, eval_seed)
        rows.append((done, time.process_time(), win, rew))
        print(f"{done:>8} steps  cpu {rows[-1][1]:7.1f} s  win {win:.3f}  reward {rew:+.3f}")
        save_csv()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.5))
    xs = [r[0] for r in rows]
    ax.plot(xs, [r[2] for r in rows], marker="o", label="win rate vs greedy")
    ax.plot(xs, [r[3] for r in rows], marker="s", label="mean reward per game")
    ax.set_xlabel("learner timesteps (decisions with a choice)")
    ax.set_title(f"MaskablePPO vs greedy, 2 players, target {args.target} "
                 f"({rows[-1][1]:.0f} CPU s)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{args.out}.png", dpi=110)
    print(f"written {args.out}.csv and {args.out}.png")


if __name__ == "__main__":
    main()
