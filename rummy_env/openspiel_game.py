"""Manipulation Rummy as an OpenSpiel game (``python_manipulation_rummy``, docs/rl.md).

>>> import pyspiel
>>> import rummy_env.openspiel_game  # registers the game
>>> game = pyspiel.load_game("python_manipulation_rummy", {"players": 3})
>>> game.num_players(), game.num_distinct_actions()
(3, 20)

Needs OpenSpiel (``pip install open_spiel``, the project's ``bench`` extra). A Python game
(``pyspiel.register_game``) over the AEC environment's engine and actions:

* **players** 2–5 and every rule of :class:`rummy.rules.RuleSet` (§11) are game
  parameters with the rule set's defaults (``target_score``, ``knock_threshold``,
  ``hand_size``, ``max_draws_per_turn``, ``undercut_bonus``, ``going_out_bonus``,
  ``game_bonus``, ``round_bonus``, ``round_bonus_for_all``, ``opening_meld_per_player``,
  ``opening_meld_min_points``), plus ``max_moves`` (default 10 000).
* **chance**: the game starts with 4 chance nodes of 256 equally likely outcomes each;
  together they are the game's 32-bit seed, which decides every deck and the first dealer
  (R2.1, R2.2). After them the game is deterministic given the players' actions.
* **actions**: the AEC environment's 20 actions (draw, pass, knock, end_turn, meld slots
  0–15, docs/rl.md); the legal ones are its action mask.
* **returns** (terminal only): +1/k to each of the k winners (R9.4), 0 to the others, so
  they sum to 1 (constant-sum); a game cut at ``max_moves`` returns 1/n to every seat.
* **observations**: the observation tensor is the seat's normalised observation
  (``float32[179]``); the information-state tensor adds the last 64 commands (the
  ``history`` of the AEC environment). The information-state string is the seat's view
  and every command so far, with the seat's own drawn cards (perfect recall); it never
  holds another hand or the stock order (I3).
* ``resample_from_infostate(player, sampler)`` re-deals the cards the player cannot see
  (:func:`rummy.bots.search.determinize`), so OpenSpiel's IS-MCTS can search it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from rummy.cards import format_card
from rummy.rules import RuleSet
from rummy.views import view
from rummy_env.manipulation_rummy_v0 import (
    EXACT_ACTION,
    HISTORY_FEATURES,
    KINDS,
    OBS_SIZE,
    observation_vector,
    raw_env,
    scales,
)

SHORT_NAME = "python_manipulation_rummy"
CHANCE_NODES = 4  #: chance nodes at the start, each one byte of the seed
HISTORY = 64  #: commands in the information-state tensor
_RULE_PARAMS = ("target_score", "knock_threshold", "hand_size", "max_draws_per_turn",
                "undercut_bonus", "going_out_bonus", "game_bonus", "round_bonus",
                "round_bonus_for_all", "opening_meld_per_player", "opening_meld_min_points")
_DEFAULTS: dict[str, Any] = {"players": 2, "max_moves": 10_000,
                             **{k: getattr(RuleSet(), k) for k in _RULE_PARAMS}}

GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Manipulation Rummy (Python)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.CONSTANT_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=5,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS,
)


class RummyGame(pyspiel.Game):  # type: ignore[misc]
    """The game object (see the module docstring for the parameters).

    Raises:
        ValueError: a player count or rule set the engine refuses (R1.1, §11).
    """

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        p = {**_DEFAULTS, **(params or {})}
        self.players = int(p["players"])
        self.rules = RuleSet(**{k: p[k] for k in _RULE_PARAMS})
        self.rules.check_players(self.players)
        self.max_moves = int(p["max_moves"])
        info = pyspiel.GameInfo(
            num_distinct_actions=EXACT_ACTION, max_chance_outcomes=256,
            num_players=self.players, min_utility=0.0, max_utility=1.0, utility_sum=1.0,
            max_game_length=self.max_moves)
        super().__init__(GAME_TYPE, info, p)

    def new_initial_state(self) -> RummyState:
        """A state before the chance nodes that pick the seed."""
        return RummyState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> RummyObserver:
        """The observer of OpenSpiel's Python API: perfect recall gives the information
        state, otherwise the observation."""
        perfect = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        return RummyObserver(self, perfect)


class RummyState(pyspiel.State):  # type: ignore[misc]
    """A game in progress: the AEC environment's engine state behind OpenSpiel's API."""

    def __init__(self, game: RummyGame) -> None:
        super().__init__(game)
        # plain values, not the game object: OpenSpiel deep-copies states (clone())
        self._players = game.players
        self._rules = game.rules
        self._max_moves = game.max_moves
        self._seed_bytes: list[int] = []
        self.env = raw_env(players=game.players, rules=game.rules, max_steps=game.max_moves)
        #: per command: (seat, kind, cards added, card drawn or None); drawn cards are
        #: shown to their seat only
        self.log: list[tuple[int, int, tuple[int, ...], int | None]] = []
        self._cut = False

    # -- OpenSpiel API
    def current_player(self) -> int:
        """The seat to act, ``CHANCE`` before the seed is picked, ``TERMINAL`` at the end."""
        if self._is_over():
            return int(pyspiel.PlayerId.TERMINAL)
        if len(self._seed_bytes) < CHANCE_NODES:
            return int(pyspiel.PlayerId.CHANCE)
        return int(self.env.state_.turn)

    def _is_over(self) -> bool:
        return len(self._seed_bytes) == CHANCE_NODES and (
            self._cut or self.env.state_.phase == "game_over")

    def _legal_actions(self, player: int) -> list[int]:
        mask = self.env.legal_mask()
        return [int(a) for a in np.flatnonzero(mask[:EXACT_ACTION])]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """256 equally likely values of the next byte of the seed."""
        return [(b, 1.0 / 256) for b in range(256)]

    def _apply_action(self, action: int) -> None:
        if len(self._seed_bytes) < CHANCE_NODES:
            self._seed_bytes.append(int(action))
            if len(self._seed_bytes) == CHANCE_NODES:
                seed = sum(b << (8 * i) for i, b in enumerate(self._seed_bytes))
                self.env.reset(seed=seed)
            return
        before = self.env.state_
        seat = before.turn
        self.env.step(int(action))
        kind, added = self.env.history[-1][1], self.env.history[-1][2]
        drawn = None
        if kind == 0:  # the card drawn: the top of the stock before the draw (hidden)
            drawn = before.deck[before.stock_pos]
        self.log.append((seat, kind, added, drawn))
        if self.env._steps >= self._max_moves and self.env.state_.phase != "game_over":
            self._cut = True

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"seed byte {action}"
        return ("draw", "pass", "knock", "end_turn")[action] if action < 4 else \
            f"meld slot {action - 4}"

    def is_terminal(self) -> bool:
        """The game has ended (R9) or was cut at ``max_moves``."""
        return self._is_over()

    def returns(self) -> list[float]:
        """+1/k to each of the k winners at the end (R9.4), 1/n each if cut, else 0."""
        n = self._players
        if not self._is_over():
            return [0.0] * n
        if self._cut:
            return [1.0 / n] * n
        result = self.env.state_.result
        assert result is not None
        return [1.0 / len(result.winners) if s in result.winners else 0.0 for s in range(n)]

    def resample_from_infostate(self, player: int, probability_sampler: Any) -> RummyState:
        """A state with the same information state for ``player`` whose hidden cards are
        re-dealt at random (``probability_sampler()`` gives the seed's randomness)."""
        other = RummyState(self.get_game())
        other._seed_bytes = list(self._seed_bytes)
        other.log = list(self.log)
        other._cut = self._cut
        if len(self._seed_bytes) < CHANCE_NODES or self._is_over():
            other.env = self.env.clone()
            return other
        seed = int(float(probability_sampler()) * 2**31)
        other.env = self.env.resample_from_infostate(f"player_{player}", seed)
        return other

    def __str__(self) -> str:
        if len(self._seed_bytes) < CHANCE_NODES:
            return f"choosing the seed: {self._seed_bytes}"
        s = self.env.state_
        return (f"round {s.round} seat {s.turn} {s.phase} hands "
                f"{[' '.join(map(format_card, h)) for h in s.hands]} table {s.table}")


class RummyObserver:
    """OpenSpiel's Python observer: the tensor and string of a state for one player
    (module docstring)."""

    def __init__(self, game: RummyGame, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        self._scale = scales(game.players, game.rules)
        size = OBS_SIZE + (HISTORY * HISTORY_FEATURES if perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[:OBS_SIZE]}
        if perfect_recall:
            self.dict["history"] = self.tensor[OBS_SIZE:].reshape(HISTORY, HISTORY_FEATURES)

    def set_from(self, state: RummyState, player: int) -> None:
        """Fill ``tensor`` from ``player``'s point of view (zeros before the deal)."""
        self.tensor.fill(0)
        if len(state._seed_bytes) < CHANCE_NODES:
            return
        self.tensor[:OBS_SIZE] = observation_vector(view(state.env.state_, player)) / \
            self._scale
        if self.perfect_recall:
            self.tensor[OBS_SIZE:] = state.env.history_tensor(player, HISTORY)

    def string_from(self, state: RummyState, player: int) -> str:
        """``player``'s view as text and, with perfect recall, every command so far (its
        own drawn cards shown, other seats' hidden)."""
        if len(state._seed_bytes) < CHANCE_NODES:
            return f"p{player} before the deal"
        v = view(state.env.state_, player)
        text = (f"p{player} r{v.round} t{v.turn} {v.phase} d{v.draws} "
                f"hand {' '.join(map(format_card, v.hand))} sizes {list(v.hand_sizes)} "
                f"stock {v.stock_size} table {v.table} totals {list(v.totals)} "
                f"opened {[int(o) for o in v.opened]} final {v.final_turns_left}")
        if not self.perfect_recall:
            return text
        moves = []
        for seat, kind, added, drawn in state.log:
            card = f":{format_card(drawn)}" if drawn is not None and seat == player else ""
            moves.append(f"{seat}{KINDS[kind]}{card}{list(added) if added else ''}")
        return text + " | " + " ".join(moves)


pyspiel.register_game(GAME_TYPE, RummyGame)

__all__ = ["RummyGame", "RummyState", "RummyObserver", "GAME_TYPE", "SHORT_NAME"]
