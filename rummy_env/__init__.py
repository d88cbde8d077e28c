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

from typing import Any

import rummy  # noqa: F401 - first: its import puts the compiled modules in use (rummy.accel)


def single_agent(*args: Any, **kwargs: Any) -> Any:
    """:func:`rummy_env.single_agent.single_agent` (imported on first use)."""
    from rummy_env.single_agent import single_agent as make
    return make(*args, **kwargs)


__all__ = ["single_agent"]
