"""Reinforcement-learning environments of Manipulation Rummy (the ``rl`` extra: pettingzoo,
gymnasium, numpy). ``rummy_env.manipulation_rummy_v0`` is a PettingZoo AEC environment
built on the pure core (docs/rl.md); the core itself never imports this package."""
