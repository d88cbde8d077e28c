"""Manipulation Rummy as a PettingZoo AEC environment (``manipulation_rummy_v0``, docs/rl.md).

>>> from rummy_env import manipulation_rummy_v0
>>> env = manipulation_rummy_v0.env(players=3)
>>> env.reset(seed=7)
>>> obs, reward, termination, truncation, info = env.last()
>>> obs["observation"].shape, obs["action_mask"].dtype.name, env.agent_selection
((179,), 'int8', 'player_1')

Agents are ``"player_0"`` … ``"player_{n-1}"`` (seat i is ``player_i``); the agent to act
is the seat whose turn it is (R2.3, R3), and one agent acts several times in a row within
its turn (draw, then meld or pass, then knock or end the turn).

**Actions** ``Discrete(4 + K)`` with ``K = MELD_SLOTS = 16``:

===========  ==============================================================
index        meaning
===========  ==============================================================
0            ``draw`` (R3.1–R3.3)
1            ``pass`` (R3.2, R8.2)
2            ``knock`` (R6.1)
3            ``end_turn`` (R6.3)
4 … 4+K−1    meld candidate slot ``k`` (a whole new table, R5)
===========  ==============================================================

The meld candidates are built from the acting seat's view only (I3), in this order,
duplicates (same new table) and illegal ones removed, the first ``K`` kept:

1. the solver's best play, most points added (:func:`rummy.bots.greedy.plan_play`, which
   follows the R5.5 opening variants);
2. the solver's best play adding the most cards (``objective="cards"``);
3. every new meld of three hand cards (R4.2, R4.3; no joker), put on the table as it is,
   most points first;
4. every single lay-off: one hand card (a joker with each declaration that fits, R5.6)
   added to one table meld, most points first.

Unused slots are masked. ``info["candidates"]`` (for the acting agent) lists each slot's
new table in the R1.4 notation, for debugging and for agents that read tables.

**Observation** a dict (shapes and dtypes are fixed for a given player count):

- ``"observation"``: ``float32[179]`` (:data:`OBS_SIZE`), all from
  :func:`rummy.views.view` of the observing seat (I3: its own hand, every hand's *size*,
  the stock's size, the public table; never another hand or the stock order). Seats are
  *relative*: index 0 is the observer, 1 the next seat clockwise, …; absent seats are 0.

  ===========  =====  =========================================================
  slice        size   content
  ===========  =====  =========================================================
  0:53         53     own hand, count of each card 0..51 (``AS``…``KC``, index
                      ``suit*13+rank``, cards.py) and jokers (52): 0, 1 or 2
  53:105       52     table: count of each real card 0..51 on the table
  105:157      52     table: count of jokers declared as each card 0..51
  157:162      5      hand sizes (cards), relative seats
  162          1      stock size (cards)
  163:166      3      phase one-hot: draw, meld_or_pass, knock_or_end
  166          1      draws made this turn (0..max_draws_per_turn)
  167:172      5      running totals (points, R9.1), relative seats
  172:177      5      opened this round (0/1, R5.5 variants), relative seats
  177          1      1 in the final turns after the stock ran out (R8.2)
  178          1      own hand's points (R1.5)
  ===========  =====  =========================================================

- ``"action_mask"``: ``int8[4 + K]``, 1 for each legal action of the observer, all 0 when
  it is not the observer's turn.

**Rewards** (points as in R1.5/§7; the scale keeps them near ±1):

- when a round is scored (§7), each seat gets its round score divided by the game's
  ``target_score`` (R9.1), e.g. 0.4 for 60 points with the default target 150;
- when the game ends (§9), each winner gets ``+1 / (number of winners)`` (R9.4); the
  other seats get 0. All agents then terminate.

``max_steps`` (default 50 000 agent steps) truncates a game that runs too long.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from rummy.bots.greedy import plan_play
from rummy.cards import JOKER, NUM_REAL, POINTS, TABLE_JOKER_BASE, hand_points
from rummy.commands import Command, CreateGame, Draw, EndTurn, Knock, Meld, Pass
from rummy.decide import step
from rummy.errors import RummyError
from rummy.events import Event, GameEnded, RoundScored
from rummy.melds import Table, canonical_table, format_table, is_valid_meld, table_text
from rummy.rules import RuleSet
from rummy.solver import best_play
from rummy.state import DRAW, GAME_OVER, KNOCK_OR_END, MELD_OR_PASS, GameState
from rummy.views import PlayerView, view

MELD_SLOTS = 16  #: K, the number of meld candidate actions
N_FIXED = 4  #: draw, pass, knock, end_turn
N_ACTIONS = N_FIXED + MELD_SLOTS
DRAW_ACTION, PASS_ACTION, KNOCK_ACTION, END_TURN_ACTION = range(N_FIXED)
MAX_SEATS = 5
OBS_SIZE = 53 + 52 + 52 + MAX_SEATS + 1 + 3 + 1 + MAX_SEATS + MAX_SEATS + 1 + 1
_PHASES = (DRAW, MELD_OR_PASS, KNOCK_OR_END)
_NODE_LIMIT = 40_000  #: the solver's budget per candidate search (as the greedy bot's)


def meld_candidates(v: PlayerView) -> list[Table]:
    """The meld candidate tables of the acting seat's view, in the documented order (before
    legality checks and deduplication). Uses only the view (I3)."""
    out: list[Table] = []
    planned = plan_play(v, node_limit=_NODE_LIMIT)
    if planned is not None:
        out.append(planned[0])
        opening = v.rules.opening_meld_per_player and not v.opened[v.turn]
        if not opening and not (not v.table and v.rules.opening_meld_min_points):
            by_cards = best_play(v.table, v.hand, objective="cards", node_limit=_NODE_LIMIT)
            if by_cards is not None:
                out.append(by_cards.table)
    real = sorted({c for c in v.hand if c != JOKER})
    triples = [m for m in itertools.combinations(real, 3) if is_valid_meld(m)]
    triples.sort(key=lambda m: (-hand_points(m), m))
    out.extend(tuple(v.table) + (m,) for m in triples)
    layoffs: list[tuple[int, Table]] = []
    for i, meld in enumerate(v.table):
        for c in sorted(set(v.hand)):
            options: Iterable[int] = (range(TABLE_JOKER_BASE, TABLE_JOKER_BASE + NUM_REAL)
                                      if c == JOKER else (c,))
            for t in options:
                new = meld + (t,)
                if is_valid_meld(new):
                    layoffs.append((POINTS[c], v.table[:i] + (new,) + v.table[i + 1:]))
                    if c == JOKER:
                        break  # one declaration per joker and meld is enough
    layoffs.sort(key=lambda pt: -pt[0])
    out.extend(t for _, t in layoffs)
    return out


def observation_vector(v: PlayerView) -> np.ndarray:
    """The ``float32[OBS_SIZE]`` observation of a seat's view (layout in the module
    docstring)."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    for c in v.hand:
        obs[c] += 1
    for m in v.table:
        for t in m:
            if t >= TABLE_JOKER_BASE:
                obs[105 + t - TABLE_JOKER_BASE] += 1
            else:
                obs[53 + t] += 1
    seat = v.seat if v.seat is not None else 0
    for k in range(v.players):
        s = (seat + k) % v.players
        obs[157 + k] = v.hand_sizes[s]
        obs[167 + k] = v.totals[s]
        obs[172 + k] = float(v.opened[s])
    obs[162] = v.stock_size
    if v.phase in _PHASES:
        obs[163 + _PHASES.index(v.phase)] = 1.0
    obs[166] = v.draws
    obs[177] = float(v.final_turns_left is not None)
    obs[178] = v.hand_points
    return obs


def env(**kwargs: Any) -> AECEnv:
    """The environment wrapped as PettingZoo's classic games are (an illegal or
    out-of-bounds action raises; order of calls enforced). Arguments as :class:`raw_env`."""
    e: AECEnv = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):  # noqa: N801 - the PettingZoo naming convention
    """Manipulation Rummy for 2–5 agents (see the module docstring).

    Args:
        players: number of seats, 2..5 (R1.1).
        rules: the rule set (§11), default rules if ``None``.
        render_mode: ``None``, ``"human"`` (prints) or ``"ansi"`` (returns text); both show
            the public view only (no hand).
        max_steps: agent steps after which every agent is truncated.

    Raises:
        ValueError: a player count outside 2..5, a rule set that does not fit it, or an
            unknown render mode.
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"],
                                "name": "manipulation_rummy_v0", "is_parallelizable": False}

    def __init__(self, players: int = 2, rules: RuleSet | None = None,
                 render_mode: str | None = None, max_steps: int = 50_000) -> None:
        super().__init__()
        self.rules = rules or RuleSet()
        self.rules.check_players(players)
        if render_mode is not None and render_mode not in ("human", "ansi"):
            raise ValueError(f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}")
        self.players = players
        self.render_mode = render_mode
        self.max_steps = max_steps
        self.possible_agents = [f"player_{i}" for i in range(players)]
        obs_space = spaces.Dict({
            "observation": spaces.Box(low=0.0, high=np.inf, shape=(OBS_SIZE,),
                                      dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(N_ACTIONS,), dtype=np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self._state: GameState | None = None
        self._candidates: list[Table] = []
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)
        self._steps = 0

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        """The (fixed) observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        """``Discrete(4 + MELD_SLOTS)``."""
        return self.action_spaces[agent]

    # ---------------------------------------------------------------- game plumbing

    @property
    def state_(self) -> GameState:
        """The full game state (hidden information included: for tests and tools, never
        part of an observation)."""
        assert self._state is not None, "call reset() first"
        return self._state

    def _action_command(self, action: int, seat: int) -> Command:
        if action == DRAW_ACTION:
            return Draw(seat)
        if action == PASS_ACTION:
            return Pass(seat)
        if action == KNOCK_ACTION:
            return Knock(seat)
        if action == END_TURN_ACTION:
            return EndTurn(seat)
        return Meld(seat, self._candidates[action - N_FIXED])

    def _legal(self) -> None:
        """Compute the acting seat's candidates and action mask."""
        s = self.state_
        self._mask = np.zeros(N_ACTIONS, dtype=np.int8)
        self._candidates = []
        if s.phase == GAME_OVER:
            return
        seat = s.turn
        if s.phase == DRAW:
            self._mask[DRAW_ACTION] = 1
        elif s.phase == KNOCK_OR_END:
            self._mask[KNOCK_ACTION] = 1
            self._mask[END_TURN_ACTION] = 1
        elif s.phase == MELD_OR_PASS:
            self._mask[PASS_ACTION] = 1
            seen: set[Table] = set()
            for table in meld_candidates(view(s, seat)):
                key = canonical_table(table)
                if key in seen:
                    continue
                seen.add(key)
                try:  # legality depends only on what the seat sees (its hand, the table)
                    step(s, Meld(seat, table))
                except RummyError:
                    continue
                self._mask[N_FIXED + len(self._candidates)] = 1
                self._candidates.append(table)
                if len(self._candidates) == MELD_SLOTS:
                    break

    def _rewards_of(self, events: list[Event]) -> dict[str, float]:
        out = {a: 0.0 for a in self.possible_agents}
        for e in events:
            if isinstance(e, RoundScored):
                for i, pts in enumerate(e.scores):
                    out[f"player_{i}"] += pts / self.rules.target_score
            elif isinstance(e, GameEnded):
                for w in e.winners:
                    out[f"player_{w}"] += 1.0 / len(e.winners)
        return out

    # ---------------------------------------------------------------- AEC API

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game; ``seed`` decides every deck and the first dealer (R2.1), a
        random one if ``None``. ``options`` is accepted and ignored."""
        if seed is None:
            seed = random.SystemRandom().getrandbits(62)
        names = tuple(self.possible_agents)
        self._state, _ = step(None, CreateGame(self.players, seed, self.rules, names))
        self._steps = 0
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = f"player_{self.state_.turn}"
        self._legal()
        self._set_infos()

    def _set_infos(self) -> None:
        for a in self.agents:
            self.infos[a] = {}
        if self.agents and self.state_.phase != GAME_OVER:
            self.infos[self.agent_selection] = {
                "candidates": [format_table(t) for t in self._candidates]}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation: its view (I3) as a vector, and its action mask."""
        seat = int(agent.split("_")[1])
        v = view(self.state_, seat)
        acting = self.state_.phase != GAME_OVER and self.state_.turn == seat
        mask = self._mask.copy() if acting else np.zeros(N_ACTIONS, dtype=np.int8)
        return {"observation": observation_vector(v), "action_mask": mask}

    def step(self, action: int | None) -> None:
        """Play ``action`` (an index, see the module docstring) for the agent to act.

        Raises:
            ValueError: a masked (illegal) action.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None or not 0 <= int(action) < N_ACTIONS or not self._mask[int(action)]:
            raise ValueError(f"action {action!r} is not legal for {agent} now; legal: "
                             f"{np.flatnonzero(self._mask).tolist()} (see action_mask)")
        seat = int(agent.split("_")[1])
        self._cumulative_rewards[agent] = 0.0
        self._state, events = step(self.state_, self._action_command(int(action), seat))
        self._steps += 1
        self.rewards = self._rewards_of(events)
        if self.state_.phase == GAME_OVER:
            self.terminations = {a: True for a in self.agents}
        elif self._steps >= self.max_steps:
            self.truncations = {a: True for a in self.agents}
        if self.state_.phase != GAME_OVER:
            self.agent_selection = f"player_{self.state_.turn}"
        self._legal()
        self._set_infos()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """The public view (no hand, I3) as text; printed for ``"human"``."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        v = view(self.state_, None)
        text = (f"round {v.round}, seat {v.turn} to act ({v.phase}), stock {v.stock_size}, "
                f"hand sizes {list(v.hand_sizes)}, totals {list(v.totals)}\n"
                f"table: {table_text(v.table)}")
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""


__all__ = ["env", "raw_env", "meld_candidates", "observation_vector", "MELD_SLOTS",
           "N_ACTIONS", "OBS_SIZE"]
