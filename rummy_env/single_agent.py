"""One seat against bots, as a Gymnasium environment (docs/rl.md, "Training against bots").

>>> from rummy_env import single_agent
>>> env = single_agent(seat=0, opponents={1: "greedy"})
>>> obs, info = env.reset(seed=3)
>>> obs.shape, info["action_mask"].shape
((179,), (21,))

The other seats are played by bots of :mod:`rummy.bots` inside ``step``
(:class:`~rummy_env.manipulation_rummy_v0.raw_env`'s ``opponents`` hook), so each
``step`` returns at the learner's next decision. Works with sb3-contrib's ``MaskablePPO``
(``env.action_masks()``) and passes ``gymnasium.utils.env_checker.check_env``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from rummy.bots.base import Bot
from rummy.decide import default_command
from rummy.rules import RuleSet
from rummy_env._edit import EDIT_OBS_SIZE, MAX_EDITS
from rummy_env.manipulation_rummy_v0 import OBS_SIZE, raw_env


class SingleAgentEnv(gymnasium.Env[np.ndarray, np.int64]):
    """Seat ``seat`` of a game whose other seats are ``opponents`` (see
    :func:`single_agent` for the arguments).

    Observation: ``float32[OBS_SIZE]`` (the AEC environment's ``"observation"``,
    normalised by default; with ``actions="edits"`` followed by ``"edit"``, the working
    table: ``float32[OBS_SIZE + EDIT_OBS_SIZE]``). Action: ``Discrete(N_ACTIONS)``
    (``Discrete(N_EDIT_ACTIONS)`` with ``actions="edits"``). ``info["action_mask"]`` and
    :meth:`action_masks` give the legal actions. Reward: the seat's rewards since its last
    decision (round scores over the target score, +1/k for a shared win, docs/rl.md).
    ``terminated`` when the game ends, ``truncated`` at ``max_steps`` commands.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"]}

    def __init__(self, seat: int = 0, opponents: Mapping[int, str | Bot] | None = None,
                 players: int | None = None, rules: RuleSet | None = None, *,
                 normalize: bool = True, auto_forced: bool = True, illegal: str = "default",
                 max_steps: int = 50_000, render_mode: str | None = None,
                 actions: str = "slots", max_edits: int = MAX_EDITS) -> None:
        if illegal not in ("default", "raise"):
            raise ValueError(f"illegal must be 'default' or 'raise', got {illegal!r}")
        if opponents is None:
            n = players or 2
            opponents = {s: "greedy" for s in range(n) if s != seat}
        n = players or len(opponents) + 1
        if seat in opponents or not 0 <= seat < n:
            raise ValueError(f"seat {seat} must be a seat of {n} players and no opponent's")
        if len(opponents) != n - 1:
            raise ValueError(f"{n} players need {n - 1} opponents, got {len(opponents)}")
        self.seat = seat
        self.agent = f"player_{seat}"
        self.illegal = illegal
        self.render_mode = render_mode
        self.aec = raw_env(players=n, rules=rules, max_steps=max_steps, opponents=opponents,
                           auto_forced=auto_forced, normalize=normalize,
                           render_mode="ansi" if render_mode else None, actions=actions,
                           max_edits=max_edits)
        self.edits = actions == "edits"
        size = OBS_SIZE + (EDIT_OBS_SIZE if self.edits else 0)
        self.observation_space = spaces.Box(low=0.0, high=np.inf, shape=(size,),
                                            dtype=np.float32)
        self.action_space = spaces.Discrete(self.aec.n_actions)

    def _obs(self) -> tuple[np.ndarray, dict[str, Any]]:
        o = self.aec.observe(self.agent)
        obs = np.concatenate((o["observation"], o["edit"])) if self.edits else o["observation"]
        return obs, {"action_mask": o["action_mask"]}

    def action_masks(self) -> np.ndarray:
        """``bool[n_actions]``: the legal actions now (sb3-contrib's MaskablePPO reads
        this); all False once the game is over."""
        return np.asarray(self.aec.observe(self.agent)["action_mask"], dtype=bool)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game (seeding as the AEC environment: Gymnasium's contract) and
        play the opponents up to the seat's first decision.

        Should the opponents end the game before the seat's first decision (a short
        ``target_score`` and an opponent going out at once), that game is skipped and the
        next one started with the next seed of the environment's generator, so a reset
        always returns a decision to make (``info["skipped_games"]`` counts them)."""
        super().reset(seed=seed)
        self.aec.reset(seed=seed)
        skipped = 0
        while self.aec.terminations[self.agent] or self.aec.truncations[self.agent]:
            skipped += 1
            if skipped > 1000:
                raise RuntimeError("1000 games in a row ended before the seat's first "
                                   "decision; check the rules and opponents")
            self.aec.reset()
        obs, info = self._obs()
        info["skipped_games"] = skipped
        return obs, info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play ``action`` and the opponents up to the seat's next decision (or the end).

        An illegal action raises ``ValueError`` with ``illegal="raise"``; with
        ``illegal="default"`` (the default, so random exploration and Gymnasium's checker
        can act) the phase's default command is played instead (draw, pass, or end the
        turn: :func:`rummy.decide.default_command`) and ``info["illegal_action"]`` is True.
        """
        a = int(action)
        mask = self.aec.legal_mask()
        illegal = not (0 <= a < self.aec.n_actions and mask[a])
        if illegal and self.illegal == "raise":
            raise ValueError(f"action {a} is not legal now; legal: "
                             f"{np.flatnonzero(mask).tolist()}")
        if illegal:
            self.aec.step_command(default_command(self.aec.state_))
        else:
            self.aec.step(a)
        reward = float(self.aec._cumulative_rewards.get(self.agent, 0.0))
        terminated = bool(self.aec.terminations.get(self.agent, False))
        truncated = bool(self.aec.truncations.get(self.agent, False))
        obs, info = self._obs()
        info["illegal_action"] = illegal
        return obs, reward, terminated, truncated, info

    def render(self) -> str | None:
        """The public view as text (``render_mode="ansi"``), else ``None``."""
        return self.aec.render() if self.render_mode else None


def single_agent(seat: int = 0, opponents: Mapping[int, str | Bot] | None = None,
                 players: int | None = None, rules: RuleSet | None = None,
                 **kwargs: Any) -> SingleAgentEnv:
    """Seat ``seat`` against bots, as a Gymnasium environment.

    Args:
        seat: the learner's seat.
        opponents: ``{seat: bot}`` for every other seat: a registry name of
            :data:`rummy.bots.BOTS` (a new bot per game, seeded from the game's seed) or a
            bot object; default ``greedy`` in every other seat.
        players: number of seats (default: one more than the opponents, or 2).
        rules: the rule set (§11), default rules if ``None``.
        **kwargs: ``normalize`` (default True), ``auto_forced`` (default True: the learner
            is asked only when it has a choice), ``illegal`` (``"default"`` or ``"raise"``),
            ``max_steps``, ``render_mode`` (``None`` or ``"ansi"``), ``actions``
            (``"slots"`` or ``"edits"``, docs/rl.md) and ``max_edits``.

    Raises:
        ValueError: the seat is an opponent's or out of range, opponents missing for a
            seat, an unknown bot name, or arguments the AEC environment refuses.
    """
    return SingleAgentEnv(seat, opponents, players, rules, **kwargs)


__all__ = ["SingleAgentEnv", "single_agent"]
