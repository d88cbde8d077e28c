"""Manipulation Rummy as a PettingZoo AEC environment (``manipulation_rummy_v0``, docs/rl.md).

>>> from rummy_env import manipulation_rummy_v0
>>> env = manipulation_rummy_v0.env(players=3)
>>> env.reset(seed=7)
>>> obs, reward, termination, truncation, info = env.last()
>>> obs["observation"].shape, obs["action_mask"].dtype.name, env.agent_selection
((179,), 'int8', 'player_1')

Agents are ``"player_0"`` … ``"player_{n-1}"`` (seat i is ``player_i``), minus the seats
given to ``opponents`` (bots the environment plays itself); the agent to act is the seat
whose turn it is (R2.3, R3), and one agent acts several times in a row within its turn
(draw, then meld or pass, then knock or end the turn).

**Actions** ``Discrete(4 + K + 1)`` with ``K = MELD_SLOTS = 16``:

===========  ==============================================================
index        meaning
===========  ==============================================================
0            ``draw`` (R3.1–R3.3)
1            ``pass`` (R3.2, R8.2)
2            ``knock`` (R6.1)
3            ``end_turn`` (R6.3)
4 … 4+K−1    meld candidate slot ``k`` (a whole new table, R5)
4+K (= 20)   :data:`EXACT_ACTION`: "this exact meld", a meld that is in no slot; never in
             the mask, played only through :meth:`raw_env.step_command` and returned by
             :meth:`raw_env.action_of` (so every legal command maps to an action)
===========  ==============================================================

Meld slots, from the acting seat's view only (I3):

* slot 0: the solver's best play, most points added (:func:`rummy.bots.greedy.plan_play`,
  the greedy bot's meld, with the R5.5 opening variants); slot 1: the solver's play adding
  the most cards (may equal slot 0). Both are legal exactly when the seat may meld; the
  solver runs only when one of them is played or looked at, or when no cheap candidate
  shows that a play exists;
* slots 2…: the ``basic`` bot's play (:meth:`rummy.bots.basic.BasicBot.plan`: every new
  meld it can form from the hand, jokers completing pairs, then single lay-offs; no
  manipulation) when it is more than one triple or lay-off; then every new meld of three
  hand cards put on the table as it is (R4.2, R4.3; no joker), most points first; then
  every single lay-off of one hand card on one table meld (a joker with the first
  declaration that fits, R5.6), most points first; duplicates removed, the first
  ``K − 2`` kept. They are legal by construction (checked against the R5.5 variants when
  those apply); nothing is trial-stepped.

``info["candidates"]`` (for the acting agent) lists each slot's new table in the R1.4
notation, computed only when read.

**Edit actions** (``actions="edits"``, ``Discrete(N_EDIT_ACTIONS)``): instead of the meld
slots, a meld is built on a working table one edit at a time (play a hand card onto a
meld or into a new one, split a meld, take a card out, join two melds, reset) and sent by
``FINISH``, which the mask allows only when the engine accepts the working table (R5 via
``check_action``, R5.5's variants via ``check_opening``); ``obs["edit"]`` holds the
working table. Indices 0–3 keep their meanings. See :mod:`rummy_env._edit`.

**Observation** a dict (shapes and dtypes are fixed for a given player count):

- ``"observation"``: ``float32[179]`` (:data:`OBS_SIZE`), all from
  :func:`rummy.views.view` of the observing seat (I3: its own hand, every hand's *size*,
  the stock's size, the public table; never another hand or the stock order). Seats are
  *relative*: index 0 is the observer, 1 the next seat clockwise, …; absent seats are 0.
  With ``normalize=True`` every entry is divided by the scale in brackets.

  ===========  =====  =========================================================
  slice        size   content [scale with ``normalize=True``]
  ===========  =====  =========================================================
  0:53         53     own hand, count of each card 0..51 (``AS``…``KC``, index
                      ``suit*13+rank``, cards.py) and jokers (52): 0, 1 or 2 [2]
  53:105       52     table: count of each real card 0..51 on the table [2]
  105:157      52     table: count of jokers declared as each card 0..51 [2]
  157:162      5      hand sizes (cards), relative seats [hand_size]
  162          1      stock size (cards) [cards in the deck(s)]
  163:166      3      phase one-hot: draw, meld_or_pass, knock_or_end
  166          1      draws made this turn [max_draws_per_turn]
  167:172      5      running totals (points, R9.1), relative seats [target_score]
  172:177      5      opened this round (0/1, R5.5 variants), relative seats
  177          1      1 in the final turns after the stock ran out (R8.2)
  178          1      own hand's points (R1.5) [100]
  ===========  =====  =========================================================

- ``"action_mask"``: ``int8[N_ACTIONS]``, 1 for each legal action of the observer, all 0
  when it is not the observer's turn (and always 0 at :data:`EXACT_ACTION`).
- ``"history"`` (only with ``history=H > 0``): ``float32[H * HISTORY_FEATURES]``, the
  information state's public part: the last ``H`` commands of every seat, oldest first,
  each as a one-hot kind (draw, pass, meld, knock, end_turn), a one-hot seat relative to
  the observer, and the count of each card the command put on the table (53 entries,
  jokers last); zero rows before the game's first commands. The drawn cards of other
  seats are never in it (I3).

**Rewards** (points as in R1.5/§7; the scale keeps them near ±1):

- when a round is scored (§7), each seat gets its round score divided by the game's
  ``target_score`` (R9.1), e.g. 0.4 for 60 points with the default target 150;
- when the game ends (§9), each winner gets ``+1 / (number of winners)`` (R9.4); the
  other seats get 0. All agents then terminate.

``max_steps`` (default 50 000 commands, the environment's own included) truncates a game
that runs too long. ``auto_forced=True`` (default ``False``) plays every decision with a
single legal action (each draw, a meld phase without any play) inside ``step``, so the
agent is asked only when it has a choice. ``opponents={seat: bot}`` plays those seats with
bots of :mod:`rummy.bots` (a registry name, built per game with a seed derived from the
game's seed, or a bot object) inside ``step``.
"""

from __future__ import annotations

import copy
import operator
import random
import struct
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from rummy.bots import make_bot
from rummy.bots.base import Bot
from rummy.cards import JOKER, POINTS, TABLE_JOKER_BASE, decks_for, new_deck, physical
from rummy.commands import Command, CreateGame, Draw, EndTurn, Knock, Meld, Pass
from rummy.decide import settle, step
from rummy.events import Event, GameEnded, Melded, RoundScored
from rummy.evolve import evolve
from rummy.melds import Table, format_table, table_text
from rummy.rules import RuleSet
from rummy.state import DRAW, GAME_OVER, KNOCK_OR_END, MELD_OR_PASS, STABLE_PHASES, GameState
from rummy.views import PlayerView, legal_action_kinds, view
from rummy_env._aec import AECBase
from rummy_env._candidates import Candidates, layoffs, triples
from rummy_env._edit import (
    EDIT_OBS_SIZE,
    FINISH,
    MAX_EDITS,
    N_EDIT_ACTIONS,
    Editor,
    describe,
)

MELD_SLOTS = 16  #: K, the number of meld candidate actions
N_FIXED = 4  #: draw, pass, knock, end_turn
EXACT_ACTION = N_FIXED + MELD_SLOTS  #: "this exact meld" (never in the mask)
N_ACTIONS = EXACT_ACTION + 1
DRAW_ACTION, PASS_ACTION, KNOCK_ACTION, END_TURN_ACTION = range(N_FIXED)
MAX_SEATS = 5
OBS_SIZE = 53 + 52 + 52 + MAX_SEATS + 1 + 3 + 1 + MAX_SEATS + MAX_SEATS + 1 + 1
#: kinds of command in the history, in one-hot order
KINDS = ("draw", "pass", "meld", "knock", "end_turn")
HISTORY_FEATURES = len(KINDS) + MAX_SEATS + 53
#: global state (:meth:`raw_env.state`): every hand by absolute seat, the stock's cards,
#: the table, seat to act, phase, draws, totals, opened, final turns
STATE_SIZE = MAX_SEATS * 53 + 53 + 52 + 52 + MAX_SEATS + 3 + 1 + MAX_SEATS + MAX_SEATS + 1
_PHASES = (DRAW, MELD_OR_PASS, KNOCK_OR_END)
_KIND = {Draw: 0, Pass: 1, Meld: 2, Knock: 3, EndTurn: 4}
_POINTS = POINTS + (POINTS[JOKER],) * 52  # hand cards 0..52 (R1.5)
#: the phase one-hot's place in the observation's tail (157:)
_PHASE_INDEX = {phase: 6 + i for i, phase in enumerate(_PHASES)}
#: the observation's parts as float32 bytes: an empty hand (0:53), an empty table (53:157)
_ZERO_HAND_PART = bytes(53 * 4)
_ZERO_TABLE_PART = bytes(104 * 4)
_FLOAT32 = np.dtype(np.float32)
#: pack the observation's tail (157:179) as native float32
_pack_tail = struct.Struct(f"={OBS_SIZE - 157}f").pack
_F32_ZERO = struct.pack("=f", 0)
_F32_ONE = struct.pack("=f", 1)


class _NextCount(dict[bytes, bytes]):
    """A count's float32 bytes -> the next count's (counts from 1; those up to 255 held,
    larger ones made on demand)."""

    def __missing__(self, key: bytes) -> bytes:
        return struct.pack("=f", struct.unpack("=f", key)[0] + 1)


_F32_NEXT = _NextCount({struct.pack("=f", n): struct.pack("=f", n + 1)
                        for n in range(1, 256)})
#: the hand part's and the table part's pieces (one float32 each) of no card
_ZERO_HAND_PIECES = [_F32_ZERO] * 53
_ZERO_TABLE_PIECES = [_F32_ZERO] * 104


def _count_part(pieces: list[bytes], places: Iterable[int]) -> bytes:
    """The float32 bytes of the counts of ``places`` (indices into ``pieces``, a fresh
    list of :data:`_F32_ZERO`; changed in place): ``struct.pack`` of the counts, made from
    one float32 piece per place without converting counts."""
    for i in places:
        p = pieces[i]
        pieces[i] = _F32_ONE if p is _F32_ZERO else _F32_NEXT[p]
    return b"".join(pieces)


#: a table card's place in the table part: a real card's own, a joker's by declared card
_TABLE_SLOT = tuple(range(52)) + (-1,) + tuple(range(52, 104))


#: the environment's caches, left out of a copy (``raw_env.__getstate__``)
_CACHES = ("_table_key", "_table_part", "_hand_part", "_mask", "_mask_bytes")
#: cache names found in pickles of earlier releases (dropped on load)
_OLD_CACHES = ("_table_tmpl",)


def _action_index(action: object) -> int:
    """``action`` as an action index: an ``int`` or a numpy integer as is, an integral
    float (``1.0``, ``np.float64(0.0)``: some learners emit floats) as its value.

    Raises:
        ValueError: anything else (``1.5``, ``None``, ``"0"``): not an action index.
    """
    try:
        return operator.index(action)  # type: ignore[arg-type]
    except TypeError:
        pass
    if isinstance(action, (float, np.floating)) and float(action).is_integer():
        return int(action)
    raise ValueError(f"action {action!r} is not an action index (an int)")


def _mask_of(actions: Iterable[int]) -> np.ndarray:
    """A read-only ``int8[N_ACTIONS]`` mask with ``actions`` set, shared by every env: a
    view of immutable ``bytes``, so its ``writeable`` flag cannot be set back to True
    (numpy allows that on an array owning its memory)."""
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    mask[list(actions)] = 1
    return np.frombuffer(mask.tobytes(), dtype=np.int8)


#: the slot mode's masks (knock at the end of the turn, the default) outside meld phases
_PHASE_MASKS = {DRAW: _mask_of([DRAW_ACTION]),
                KNOCK_OR_END: _mask_of([KNOCK_ACTION, END_TURN_ACTION])}
_NO_MASK = _mask_of([])
#: ``[has_play][cheap slots filled]``: the slot mode's masks in a meld phase
_MOP_MASKS = [[_mask_of([PASS_ACTION]
                        + ([N_FIXED, N_FIXED + 1] if has_play else [])
                        + list(range(N_FIXED + 2, N_FIXED + 2 + k)))
               for k in range(MELD_SLOTS - 1)] for has_play in (False, True)]
#: the bytes of each shared mask, by the mask's ``id`` (the masks live as long as the
#: module), for :meth:`raw_env.step`'s legality test without a numpy index
_MASK_BYTES = {id(m): m.tobytes() for m in
               [*_PHASE_MASKS.values(), _NO_MASK, *(m for ms in _MOP_MASKS for m in ms)]}


#: per seat, the commands of the actions 0..3 (immutable: one object each)
_FIXED_COMMANDS: tuple[tuple[Command, ...], ...] = tuple(
    (Draw(seat), Pass(seat), Knock(seat), EndTurn(seat)) for seat in range(MAX_SEATS))


def meld_candidates(v: PlayerView) -> list[Table]:
    """Every meld candidate table of the acting seat's view, in slot order, before
    deduplication, the R5.5 checks and the cut to :data:`MELD_SLOTS` (eager: both
    solver plays are searched). Uses only the view (I3)."""
    from rummy.bots.greedy import plan_play
    out: list[Table] = []
    for objective in ("points", "cards"):
        planned = plan_play(v, objective=objective)
        if planned is not None:
            out.append(planned[0])
    out.extend(tuple(v.table) + (m,) for m in triples(v.hand))
    out.extend(t for t, _ in layoffs(tuple(v.table), v.hand))
    return out


def scales(players: int, rules: RuleSet) -> np.ndarray:
    """The ``float32[OBS_SIZE]`` divisors of ``normalize=True`` (module docstring)."""
    sc = np.ones(OBS_SIZE, dtype=np.float32)
    sc[:157] = 2.0
    sc[157:162] = float(rules.hand_size)
    sc[162] = float(len(new_deck(decks_for(players))))
    sc[166] = float(rules.max_draws_per_turn)
    sc[167:172] = float(rules.target_score)
    sc[178] = 100.0
    return sc


def _table_counts(table: Table) -> np.ndarray:
    """``float32[104]``: the count of each real card 0..51 on the table, then of jokers
    declared as each card 0..51 (observation slice 53:157)."""
    cards = [t for m in table for t in m]
    if not cards:
        return np.zeros(104, dtype=np.float32)
    counts = np.bincount(cards, minlength=TABLE_JOKER_BASE + 52)
    out = np.empty(104, dtype=np.float32)
    out[:52] = counts[:52]  # real cards 0..51, declared jokers TABLE_JOKER_BASE + card
    out[52:] = counts[TABLE_JOKER_BASE:TABLE_JOKER_BASE + 52]
    return out


def _vector(seat: int, players: int, hand: tuple[int, ...], table_counts: np.ndarray,
            hand_sizes: Sequence[int], stock_size: int, phase: str, draws: int,
            totals: Sequence[int], opened: Sequence[bool], final_turns: bool) -> np.ndarray:
    """The observation vector from the fields a seat may see (I3; layout in the module
    docstring)."""
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    if hand:
        obs[:53] = np.bincount(hand, minlength=53)
    else:
        obs[:53] = 0.0
    obs[53:157] = table_counts
    tail = [0.0] * (OBS_SIZE - 157)  # 157:179, filled in Python and copied once
    for k in range(players):
        s = (seat + k) % players
        tail[k] = hand_sizes[s]
        tail[10 + k] = totals[s]
        tail[15 + k] = float(opened[s])
    tail[5] = stock_size
    if phase in _PHASES:
        tail[6 + _PHASES.index(phase)] = 1.0
    tail[9] = draws
    tail[20] = float(final_turns)
    tail[21] = sum(map(_POINTS.__getitem__, hand))
    obs[157:] = tail
    return obs


def observation_vector(v: PlayerView) -> np.ndarray:
    """The ``float32[OBS_SIZE]`` observation of a seat's view (layout in the module
    docstring), not normalised."""
    seat = v.seat if v.seat is not None else 0
    return _vector(seat, v.players, v.hand, _table_counts(v.table), v.hand_sizes,
                   v.stock_size, v.phase, v.draws, v.totals, v.opened,
                   v.final_turns_left is not None)


def state_vector(s: GameState) -> np.ndarray:
    """The ``float32[STATE_SIZE]`` global state (hidden information included, for
    centralised critics; never an agent's observation): each seat's hand as card counts
    (absolute seats), the stock's card counts, the table's real cards and declared jokers,
    the seat to act (one-hot), the phase (one-hot), draws this turn, totals, opened, and
    1 in the final turns (R8.2). Counts are not normalised."""
    out = np.zeros(STATE_SIZE, dtype=np.float32)
    for seat, hand in enumerate(s.hands):
        for c in hand:
            out[seat * 53 + c] += 1
    base = MAX_SEATS * 53
    for c in s.deck[s.stock_pos:]:
        out[base + c] += 1
    base += 53
    for m in s.table:
        for t in m:
            if t >= TABLE_JOKER_BASE:
                out[base + 52 + t - TABLE_JOKER_BASE] += 1
            else:
                out[base + t] += 1
    base += 104
    if s.phase != GAME_OVER:
        out[base + s.turn] = 1.0
    base += MAX_SEATS
    if s.phase in _PHASES:
        out[base + _PHASES.index(s.phase)] = 1.0
    base += 3
    out[base] = s.draws
    base += 1
    for seat in range(s.players):
        out[base + seat] = s.totals[seat]
        out[base + MAX_SEATS + seat] = float(s.opened[seat])
    out[base + 2 * MAX_SEATS] = float(s.final_turns_left is not None)
    return out


def env(**kwargs: Any) -> AECEnv:
    """The environment wrapped as PettingZoo's classic games are (an illegal or
    out-of-bounds action raises; order of calls enforced). Arguments as :class:`raw_env`."""
    e: AECEnv = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class _LazyTables(Sequence[list[list[str]]]):
    """``info["candidates"]``: each legal slot's table in notation, computed when read."""

    def __init__(self, cands: Candidates) -> None:
        self._c = cands

    def __reduce__(self) -> tuple[Any, ...]:
        """Copied and pickled as its candidates (a class compiled ahead of time has no
        instance ``__dict__`` for :mod:`copy` and :mod:`pickle` to take)."""
        return (_LazyTables, (self._c,))

    def __len__(self) -> int:
        return len(self._c.legal_slots())

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        slots = self._c.legal_slots()
        table = self._c.table(slots[i])
        assert table is not None
        return format_table(table)

    def __iter__(self) -> Iterator[list[list[str]]]:
        return (self[k] for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        return list(self) == other

    def __repr__(self) -> str:
        return repr(list(self))


_C = TypeVar("_C", bound=type)


def _python_class(cls: _C) -> _C:
    """Keep ``cls`` an ordinary Python class when this module is compiled ahead of time
    (mypyc compiles a class with an unknown decorator as a Python class): a native class
    whose base is a Python class (PettingZoo's ``AECEnv``) would lay its instance
    ``__dict__`` over one of its fields, and pickling, copies and PettingZoo's own
    attributes (``_skip_agent_selection``) need that ``__dict__``. Returns ``cls``."""
    return cls


@_python_class
class raw_env(AECBase):  # noqa: N801 - the PettingZoo naming convention
    """Manipulation Rummy for 2–5 seats (see the module docstring).

    Args:
        players: number of seats, 2..5 (R1.1).
        rules: the rule set (§11), default rules if ``None``.
        render_mode: ``None``, ``"human"`` (prints) or ``"ansi"`` (returns text); both show
            the public view only (no hand).
        max_steps: commands after which every agent is truncated.
        opponents: seats played by bots inside the environment, ``{seat: bot}`` with a
            registry name of :data:`rummy.bots.BOTS` (a new bot per game, seeded from the
            game's seed) or an object with ``act(view) -> Command``; those seats are not
            agents.
        auto_forced: play every decision with a single legal action inside ``step``.
        normalize: divide the observation by the scales of the module docstring.
        history: add the last ``history`` commands as ``obs["history"]`` (0: no key).
        actions: ``"slots"`` (default: ``Discrete(N_ACTIONS)``, a meld is one of the meld
            slots) or ``"edits"`` (``Discrete(N_EDIT_ACTIONS)``, a meld is built edit by
            edit on a working table and sent by ``FINISH``; :mod:`rummy_env._edit`,
            docs/rl.md "Edit actions"); ``obs["edit"]`` then holds the working table.
        max_edits: edits per meld phase in the ``"edits"`` mode.

    Raises:
        ValueError: a player count outside 2..5, a rule set that does not fit it, an
            unknown render mode, an opponent seat out of range, every seat an opponent, a
            negative ``history``, an unknown ``actions`` mode or ``max_edits`` below 1.
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"],
                                "name": "manipulation_rummy_v0", "is_parallelizable": False}

    # the caches (:data:`_CACHES`, set by :meth:`_reset_caches`):
    #: the table whose part of the observation :attr:`_table_part` holds
    _table_key: Table | None
    #: the observation's table part (53:157) of ``_table_key``, float32 bytes
    _table_part: bytes
    #: per seat: its hand object last observed, its part (0:53, float32 bytes), its points
    _hand_part: list[tuple[object, bytes, float]]
    #: the legal-action mask of the state (:meth:`legal_mask`), ``None``: not made yet
    _mask: np.ndarray | None
    #: ``_mask``'s bytes (set with it by :meth:`legal_mask`)
    _mask_bytes: bytes

    def __init__(self, players: int = 2, rules: RuleSet | None = None,
                 render_mode: str | None = None, max_steps: int = 50_000, *,
                 opponents: Mapping[int, str | Bot] | None = None, auto_forced: bool = False,
                 normalize: bool = False, history: int = 0, actions: str = "slots",
                 max_edits: int = MAX_EDITS) -> None:
        super().__init__()
        if actions not in ("slots", "edits"):
            raise ValueError(f"actions must be 'slots' or 'edits', got {actions!r}")
        if max_edits < 1:
            raise ValueError(f"max_edits must be >= 1, got {max_edits}")
        self.actions = actions
        self.max_edits = max_edits
        self.n_actions = N_ACTIONS if actions == "slots" else N_EDIT_ACTIONS
        self._editor: Editor | None = None
        self.rules = rules or RuleSet()
        self.rules.check_players(players)
        if render_mode is not None and render_mode not in ("human", "ansi"):
            raise ValueError(f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}")
        self.opponents = dict(opponents or {})
        for seat, bot in self.opponents.items():
            if not 0 <= seat < players:
                raise ValueError(f"opponent seat {seat} is not a seat of {players} players")
            if isinstance(bot, str):
                make_bot(bot)  # raises ValueError for an unknown name now, not at reset
        if len(self.opponents) == players:
            raise ValueError("every seat is an opponent: leave at least one agent")
        if history < 0:
            raise ValueError(f"history must be >= 0, got {history}")
        self.players = players
        self.render_mode = render_mode
        self.max_steps = max_steps
        self.auto_forced = auto_forced
        self.normalize = normalize
        self.history_len = history
        self._scale = scales(players, self.rules)
        self.possible_agents = [f"player_{i}" for i in range(players)
                                if i not in self.opponents]
        self._seat_of = {f"player_{i}": i for i in range(players)}
        self._names = [f"player_{i}" for i in range(players)]  #: agent name by seat
        #: each seat's view of the seats: absolute seats in relative order
        self._relative = [[(seat + k) % players for k in range(players)]
                          for seat in range(players)]
        obs_spaces: dict[str, spaces.Space[Any]] = {
            "observation": spaces.Box(low=0.0, high=np.inf, shape=(OBS_SIZE,),
                                      dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(self.n_actions,),
                                      dtype=np.int8),
        }
        if actions == "edits":
            obs_spaces["edit"] = spaces.Box(low=0.0, high=np.inf, shape=(EDIT_OBS_SIZE,),
                                            dtype=np.float32)
        if history:
            obs_spaces["history"] = spaces.Box(low=0.0, high=np.inf,
                                               shape=(history * HISTORY_FEATURES,),
                                               dtype=np.float32)
        obs_space = spaces.Dict(obs_spaces)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.n_actions)
                              for a in self.possible_agents}
        self.state_space = spaces.Box(low=0.0, high=np.inf, shape=(STATE_SIZE,),
                                      dtype=np.float32)
        self._state: GameState | None = None
        self._cands: Candidates | None = None
        self._reset_caches()
        self._bots: dict[int, Bot] = {}
        self._steps = 0
        self._scored = True  #: whether the last step scored a round (else rewards are 0)
        self._seed_rng: random.Random | None = None
        self.game_seed = 0
        #: public record of every command: ``(seat, kind index in KINDS, cards added)``
        self.history: list[tuple[int, int, tuple[int, ...]]] = []

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        """The (fixed) observation space of ``agent``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        """``Discrete(N_ACTIONS)`` (``Discrete(N_EDIT_ACTIONS)`` with ``actions="edits"``)."""
        return self.action_spaces[agent]

    # ---------------------------------------------------------------- game plumbing

    @property
    def state_(self) -> GameState:
        """The full game state (hidden information included: for tests and tools, never
        part of an observation)."""
        assert self._state is not None, "call reset() first"
        return self._state

    def candidates(self) -> Candidates | None:
        """The meld candidates of the seat to act (built on first use, cached for the
        state), or ``None`` outside a ``meld_or_pass`` phase."""
        s = self._state
        assert s is not None, "call reset() first"
        if s.phase != MELD_OR_PASS:
            return None
        if self._cands is None or self._cands.state is not s:
            self._cands = Candidates(s, MELD_SLOTS)
        return self._cands

    def legal_mask(self) -> np.ndarray:
        """``int8[N_ACTIONS]``: the legal actions of the seat to act (cached per state,
        read-only: copy it to change it; all 0 once the game is over)."""
        if self._mask is None:
            state = self._state
            assert state is not None, "call reset() first"
            phase = state.phase
            if self.actions == "slots" and self.rules.knock_timing != "start":
                # one shared read-only array per phase and set of filled slots
                if phase == MELD_OR_PASS:
                    cands = self.candidates()
                    assert cands is not None
                    self._mask = _MOP_MASKS[cands.has_play][
                        min(cands.n_cheap, MELD_SLOTS - 2)]
                else:
                    self._mask = _PHASE_MASKS.get(phase, _NO_MASK)
                self._mask_bytes = _MASK_BYTES[id(self._mask)]
                return self._mask
            mask = np.zeros(self.n_actions, dtype=np.int8)
            if phase == DRAW:
                mask[DRAW_ACTION] = 1
            elif phase == KNOCK_OR_END:
                mask[KNOCK_ACTION] = 1
                mask[END_TURN_ACTION] = 1
            elif phase == MELD_OR_PASS and self.actions == "edits":
                editor = self.editor()
                assert editor is not None
                editor.mask_into(mask)
            elif phase == MELD_OR_PASS:
                mask[PASS_ACTION] = 1
                cands = self.candidates()
                assert cands is not None
                for slot in cands.legal_slots():
                    mask[N_FIXED + slot] = 1
            if self.rules.knock_timing == "start" and phase in (DRAW, MELD_OR_PASS) and \
                    "knock" in legal_action_kinds(self.state_):
                mask[KNOCK_ACTION] = 1  # §11 knock_timing="start": at the turn's start
            mask.flags.writeable = False
            self._mask = mask
            self._mask_bytes = mask.tobytes()
        return self._mask

    def editor(self) -> Editor | None:
        """The working table of the seat to act in the ``"edits"`` mode (built on first
        use, kept for the phase), or ``None`` outside a ``meld_or_pass`` phase or in the
        slot mode."""
        s = self.state_
        if s.phase != MELD_OR_PASS or self.actions != "edits":
            return None
        if self._editor is None or self._editor.state is not s:
            self._editor = Editor(s, self.max_edits)
        return self._editor

    def command_of(self, action: object) -> Command:
        """The command that ``action`` stands for, for the seat to act (with
        ``actions="edits"``: ``FINISH`` is the working table's meld; an edit is no command).

        Raises:
            ValueError: :data:`EXACT_ACTION`, an index out of range, or an empty slot; in
                the edit mode an edit, or ``FINISH`` while the engine would refuse it.
        """
        seat = self.state_.turn
        a = action if type(action) is int else _action_index(action)
        if self.actions == "edits" and a >= N_FIXED:
            editor = self.editor()
            cmd = editor.command() if editor is not None and a == FINISH else None
            if cmd is None:
                raise ValueError(f"action {a} ({describe(a)}) is no command now")
            return cmd
        if 0 <= a < N_FIXED:
            return _FIXED_COMMANDS[seat][a]
        cands = self.candidates()
        table = (cands.table(a - N_FIXED)
                 if cands is not None and N_FIXED <= a < EXACT_ACTION else None)
        if table is None:
            raise ValueError(f"action {a} stands for no command now (an empty meld "
                             "slot, EXACT_ACTION, or out of range)")
        return Meld(seat, table)

    def action_of(self, command: Command) -> int:
        """The action index of a seat command of the seat to act: 0–3 for draw, pass,
        knock and end_turn, the first meld slot whose table equals the command's (in
        canonical form), else :data:`EXACT_ACTION`. Does not check legality (see
        :meth:`step_command`), so every bot move and every recorded command maps.

        Raises:
            ValueError: not a seat command, or another seat's.
        """
        self._check_command(command)
        if isinstance(command, Meld) and self.actions == "edits":
            raise ValueError("in the edit mode a meld is a sequence of edits and FINISH, not "
                             "one action: play it with step_command")
        if isinstance(command, Meld):
            cands = self.candidates()
            slot = cands.slot_of(command.table) if cands is not None else None
            return EXACT_ACTION if slot is None else N_FIXED + slot
        return {Draw: DRAW_ACTION, Pass: PASS_ACTION, Knock: KNOCK_ACTION,
                EndTurn: END_TURN_ACTION}[type(command)]

    def _check_command(self, command: Command) -> None:
        if isinstance(command, CreateGame) or type(command) not in _KIND:
            raise ValueError(f"not a seat command: {command!r}")
        if command.seat != self.state_.turn:
            raise ValueError(f"seat {command.seat} is not the seat to act "
                             f"({self.state_.turn})")

    def _apply(self, cmd: Command, melded: Melded | None = None) -> list[Event]:
        """Step the engine with ``cmd``; or, given ``melded`` (the event the engine would
        make for ``cmd``, a meld slot's pre-validated meld: :meth:`Candidates.meld_event`),
        evolve that event and the automatic ones after it as :func:`rummy.decide.step`
        does, without re-validating."""
        state = self._state
        assert state is not None
        if melded is None:
            self._state, events = step(state, cmd)
        else:
            s = evolve(state, melded)
            events = [melded]
            if s.phase not in STABLE_PHASES:
                s, more = settle(s)
                events += more
            self._state = s
        self._cands = None
        self._editor = None
        self._mask = None
        self._steps += 1
        added: tuple[int, ...] = ()
        for e in events:
            if isinstance(e, Melded):
                added = e.cards
                break
        self.history.append((cmd.seat, _KIND[type(cmd)], added))  # type: ignore[union-attr]
        return events

    def _advance(self, events: list[Event]) -> None:
        """Play the opponents' seats and (with ``auto_forced``) forced decisions."""
        if not self._bots and not self.auto_forced:
            return
        while self.state_.phase != GAME_OVER and self._steps < self.max_steps:
            s = self.state_
            bot = self._bots.get(s.turn)
            if bot is not None:
                events += self._apply(bot.act(view(s, s.turn)))
                continue
            if not self.auto_forced:
                return
            legal = np.flatnonzero(self.legal_mask())
            if len(legal) != 1:
                return
            events += self._apply(self.command_of(int(legal[0])))

    def _rewards_of(self, events: list[Event]) -> dict[str, float]:
        out = dict.fromkeys(self.possible_agents, 0.0)
        self._scored = False
        for e in events:
            if type(e) is RoundScored or type(e) is GameEnded:
                self._scored = True
            if type(e) is RoundScored:
                for i, pts in enumerate(e.scores):
                    if i not in self.opponents:
                        out[f"player_{i}"] += pts / self.rules.target_score
            elif type(e) is GameEnded:
                for w in e.winners:
                    if w not in self.opponents:
                        out[f"player_{w}"] += 1.0 / len(e.winners)
        return out

    def _accumulate_rewards(self) -> None:
        """PettingZoo's: add ``rewards`` to ``_cumulative_rewards``; nothing to add when
        no round was scored by the last step (every reward is 0.0)."""
        if self._scored:
            super()._accumulate_rewards()

    def _after(self, events: list[Event]) -> None:
        """Rewards, terminations, the agent to act and the infos after ``events``."""
        self.rewards = self._rewards_of(events)
        s = self._state
        assert s is not None
        if s.phase == GAME_OVER:
            self.terminations = dict.fromkeys(self.agents, True)
        elif self._steps >= self.max_steps:
            self.truncations = dict.fromkeys(self.agents, True)
        else:
            self.agent_selection = self._names[s.turn]
        self._set_infos()

    # ---------------------------------------------------------------- AEC API

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game. ``options`` is accepted and ignored.

        Seeding follows Gymnasium's contract: ``reset(seed=s)`` plays the game of seed
        ``s`` (every deck and the first dealer, R2.1) and re-seeds the environment's
        generator with ``s``; a later ``reset()`` without a seed draws the next game's seed
        from that generator, so ``reset(seed=5); reset()`` is the same pair of games on
        every run. The first unseeded reset of an environment seeds the generator from the
        operating system's entropy. Opponents named by registry name get the bot seed
        ``game_seed * 8 + seat``.
        """
        if seed is not None:
            self._seed_rng = random.Random(seed)
        else:
            if self._seed_rng is None:
                self._seed_rng = random.Random(random.SystemRandom().getrandbits(64))
            seed = self._seed_rng.getrandbits(62)
        self.game_seed = seed  #: the seed of the game being played (public: for replays)
        names = tuple(f"player_{i}" for i in range(self.players))
        self._state, _ = step(None, CreateGame(self.players, seed, self.rules, names))
        self._cands = None
        self._mask = None
        self._steps = 0
        self.history = []
        self._bots = {seat: make_bot(b, seed * 8 + seat) if isinstance(b, str) else b
                      for seat, b in self.opponents.items()}
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]
        events: list[Event] = []
        self._advance(events)
        self._after(events)
        self._accumulate_rewards()

    def _set_infos(self) -> None:
        for a in self.agents:
            self.infos[a] = {}
        s = self._state
        assert s is not None
        if self.agents and s.phase == MELD_OR_PASS and self.actions == "slots":
            cands = self.candidates()
            assert cands is not None
            self.infos[self.agent_selection] = {"candidates": _LazyTables(cands)}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation: its view (I3) as a vector, its action mask and, with
        ``history``, the public history (module docstring). Built from the fields that
        :func:`rummy.views.view` gives the seat (equal to
        ``observation_vector(view(state, seat))``), the table's part cached per table."""
        seat = self._seat_of[agent]
        s = self._state
        assert s is not None, "call reset() first"
        table = s.table
        if table is not self._table_key:  # a new table: its part of every observation
            self._table_key = table
            if table:  # real cards 0..51, then jokers by declared card
                slot = _TABLE_SLOT
                self._table_part = _count_part(
                    _ZERO_TABLE_PIECES.copy(), [slot[t] for m in table for t in m])
            else:
                self._table_part = _ZERO_TABLE_PART
        hands = s.hands
        hand = hands[seat]
        cached = self._hand_part[seat]
        if cached[0] is not hand:  # a seat's hand object stands until it changes
            held = _count_part(_ZERO_HAND_PIECES.copy(), hand)
            cached = self._hand_part[seat] = (hand, held,
                                              float(sum(map(_POINTS.__getitem__, hand))))
        tail = [0.0] * (OBS_SIZE - 157)  # 157:179, packed as float32 after the rest
        totals = s.totals
        opened = s.opened
        for k, i in enumerate(self._relative[seat]):
            tail[k] = len(hands[i])
            tail[10 + k] = totals[i]
            tail[15 + k] = opened[i]
        tail[5] = len(s.deck) - s.stock_pos
        ph = _PHASE_INDEX.get(s.phase)
        if ph is not None:
            tail[ph] = 1.0
        tail[9] = s.draws
        tail[20] = s.final_turns_left is not None
        tail[21] = cached[2]
        # a fresh writeable buffer per observation: the caller may keep or change it
        obs = np.frombuffer(bytearray(cached[1] + self._table_part + _pack_tail(*tail)),
                            _FLOAT32)
        if self.normalize:
            obs /= self._scale
        acting = s.turn == seat and s.phase != GAME_OVER
        mask = self.legal_mask().copy() if acting else np.zeros(self.n_actions, dtype=np.int8)
        out = {"observation": obs, "action_mask": mask}
        if self.actions == "edits":
            editor = self.editor() if acting else None
            out["edit"] = (editor.observation() if editor is not None
                           else np.zeros(EDIT_OBS_SIZE, dtype=np.float32))
        if self.history_len:
            out["history"] = self.history_tensor(seat, self.history_len)
        return out

    def history_tensor(self, seat: int, length: int) -> np.ndarray:
        """``float32[length * HISTORY_FEATURES]``: the last ``length`` public commands as
        seen by ``seat`` (layout in the module docstring, oldest first, zero-padded at the
        front)."""
        out = np.zeros((length, HISTORY_FEATURES), dtype=np.float32)
        recent = self.history[-length:] if length else []
        first = length - len(recent)
        for row, (who, kind, added) in enumerate(recent, start=first):
            out[row, kind] = 1.0
            out[row, len(KINDS) + (who - seat) % self.players] = 1.0
            for c in added:
                out[row, len(KINDS) + MAX_SEATS + (JOKER if c == JOKER else physical(c))] += 1
        return out.reshape(-1)

    def state(self) -> np.ndarray:
        """The global state ``float32[STATE_SIZE]`` (:func:`state_vector`; hidden
        information included: for centralised critics, never a policy's input)."""
        return state_vector(self.state_)

    def step(self, action: object) -> None:
        """Play ``action`` (an index, see the module docstring: an ``int``, a numpy integer
        or an integral float; ``None`` for a done agent) for the agent to act, then the
        opponents' seats and, with ``auto_forced``, forced decisions.

        Raises:
            ValueError: a masked (illegal) action.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        mask = self.legal_mask()
        a = action if type(action) is int else -1 if action is None else \
            _action_index(action)
        if not 0 <= a < self.n_actions or not self._mask_bytes[a]:
            raise ValueError(f"action {action!r} is not legal for {agent} now; legal: "
                             f"{np.flatnonzero(mask).tolist()} (see action_mask)")
        if self.actions == "edits" and a > FINISH:  # an edit: no command, no event
            editor = self.editor()
            assert editor is not None
            editor.apply(a)
            self._mask = None
            self.rewards = dict.fromkeys(self.possible_agents, 0.0)
            self._cumulative_rewards[agent] = 0.0
            return
        if self.actions == "slots" and N_FIXED <= a < EXACT_ACTION:
            cands = self.candidates()
            melded = cands.meld_event(a - N_FIXED) if cands is not None else None
            if melded is not None:  # a slot known legal: the trusted meld path
                self._play(self.command_of(a), melded)
                return
        self._play(self.command_of(a))

    def step_command(self, command: Command) -> None:
        """Play a seat command of the agent to act (any legal meld, not only the slots';
        e.g. a bot's move or a recorded one), then as :meth:`step`.

        Raises:
            ValueError: not a seat command of the agent to act, or the agent is done.
            rummy.errors.RummyError: the engine refuses the command (the rule broken is in
                the error; nothing changes).
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            raise ValueError(f"{agent} is done: step(None) it instead")
        self._check_command(command)
        self._play(command)

    def _play(self, cmd: Command, melded: Melded | None = None) -> None:
        agent = self.agent_selection
        events = self._apply(cmd, melded)
        self._cumulative_rewards[agent] = 0.0
        self._advance(events)
        self._after(events)
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def __getstate__(self) -> dict[str, Any]:
        """The state that :mod:`pickle`, :func:`copy.deepcopy` and :meth:`clone` copy:
        everything but the caches (the mask, made read-only by :meth:`legal_mask`, would
        be copied writable; the observation parts are rebuilt on first use)."""
        state = self.__dict__.copy()
        for name in _CACHES:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a copied environment, its caches empty (also for a pickle made by an
        earlier release, whose caches had other names and shapes)."""
        state = {k: v for k, v in state.items() if k not in _CACHES and k not in _OLD_CACHES}
        self.__dict__.update(state)
        self._reset_caches()

    def _reset_caches(self) -> None:
        """Empty the caches (:data:`_CACHES`), rebuilt on first use."""
        self._table_key = None
        self._table_part = _ZERO_TABLE_PART
        self._hand_part = [(None, _ZERO_HAND_PART, 0.0)] * self.players
        self._mask = None
        self._mask_bytes = b""

    def clone(self) -> raw_env:
        """An independent copy (game state, generator, bots, history); stepping one
        never changes the other."""
        return copy.deepcopy(self)

    def resample_from_infostate(self, agent: str, seed: int) -> raw_env:
        """A copy whose hidden cards are re-dealt consistently with ``agent``'s
        information (its view, I3): the cards it cannot see are shuffled with ``seed`` and
        dealt into the other hands (their public sizes) and the stock
        (:func:`rummy.bots.search.determinize`, the search bot's). ``seed`` also becomes
        the copy's game seed (later rounds' decks, R2.2). For IS-MCTS and other
        determinized searches.

        Raises:
            ValueError: ``agent`` is not a seat of this game.
        """
        from rummy.bots.search import determinize, unseen_cards
        seat = int(agent.split("_")[1])
        if not 0 <= seat < self.players:
            raise ValueError(f"{agent!r} is not a seat of this game")
        v = view(self.state_, seat)
        cards = unseen_cards(v)
        random.Random(seed).shuffle(cards)
        other = self.clone()
        other._state = determinize(v, cards, seed)
        other._cands = None
        other._editor = None
        other._mask = None
        return other

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



def commands_of_events(events: Sequence[Event]) -> list[Command]:
    """The seat commands that produced a game's full event log (e.g. read from a record
    with :func:`rummy.record.from_record`), in order: each command is rebuilt from the first
    event it caused (``CardDrawn`` a draw, ``Passed`` a pass, ``Melded`` a meld with its
    table, ``Knocked`` a knock, ``TurnEnded`` in a ``knock_or_end`` state an end of turn)
    and replayed through the engine to skip the automatic events that followed it.

    Raises:
        ValueError: the log does not start with ``GameStarted`` (with its seed) or does
            not replay (an event the engine did not produce).
    """
    from rummy.events import CardDrawn, GameStarted, Knocked, Passed, TurnEnded
    if not events or not isinstance(events[0], GameStarted) or events[0].seed is None:
        raise ValueError("a full event log starts with GameStarted and its seed")
    g = events[0]
    assert g.seed is not None
    s, produced = step(None, CreateGame(g.players, g.seed, g.rules, g.names,
                                              g.turn_seconds, g.salt))
    i = len(produced)
    out: list[Command] = []
    while i < len(events):
        e = events[i]
        cmd: Command
        if isinstance(e, CardDrawn):
            cmd = Draw(e.seat)
        elif isinstance(e, Passed):
            cmd = Pass(e.seat)
        elif isinstance(e, Melded):
            cmd = Meld(e.seat, e.table)
        elif isinstance(e, Knocked):
            cmd = Knock(e.seat)
        elif isinstance(e, TurnEnded) and s.phase == KNOCK_OR_END:
            cmd = EndTurn(e.seat)
        else:
            raise ValueError(f"event {i} ({type(e).__name__}) starts no command here")
        s, produced = step(s, cmd)
        if list(events[i:i + len(produced)]) != produced:
            raise ValueError(f"events from {i} do not replay")
        out.append(cmd)
        i += len(produced)
    return out


__all__ = ["env", "raw_env", "commands_of_events", "N_EDIT_ACTIONS", "EDIT_OBS_SIZE", "FINISH",
           "meld_candidates", "observation_vector",
           "state_vector", "scales", "MELD_SLOTS", "N_ACTIONS", "N_FIXED", "EXACT_ACTION",
           "OBS_SIZE", "STATE_SIZE", "HISTORY_FEATURES", "KINDS"]
