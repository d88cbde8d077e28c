"""Reinforcement-learning environments of Manipulation Rummy (the ``rl`` extra: pettingzoo,
gymnasium, numpy; docs/rl.md). The core itself never imports this package.

* :mod:`rummy_env.manipulation_rummy_v0`: the PettingZoo AEC environment (2–5 agents,
  bots in any seats through ``opponents``);
* :func:`single_agent`: one seat against bots as a Gymnasium environment (MaskablePPO);
* :mod:`rummy_env.openspiel_game`: the game for OpenSpiel (``pyspiel``, the ``bench``
  extra), registered as ``python_manipulation_rummy``;
* ``python -m rummy_env.warmup``: compile the solver's numba kernels once after installing.
"""

from __future__ import annotations

import rummy  # noqa: F401 - first: its import puts the compiled modules in use (rummy.accel)

# the function, bound after its module is imported: importing the submodule
# ``rummy_env.single_agent`` later then no longer replaces it with the module
from rummy_env.single_agent import single_agent

__all__ = ["single_agent"]
