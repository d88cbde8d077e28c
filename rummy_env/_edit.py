"""The low-level action mode ``actions="edits"`` (docs/rl.md, "Edit actions").

In a ``meld_or_pass`` phase the seat builds its new table one edit at a time on a
*working table* (a copy of the table) and a *working hand*: play a hand card onto a meld
or into a new meld, split a meld, take one card out of a meld into a new meld, join two
melds. The working table may be illegal between edits (melds of one or two cards, a card
that fits nowhere); :data:`FINISH` sends it to the engine as one :class:`Meld` command
(R5), and the mask allows :data:`FINISH` only when the engine accepts that command:
:func:`rummy.melds.check_action` (R5.1–R5.9, the §11 meld variants) and
:func:`rummy.decide.check_opening` (R5.5 variants) pass on it.

Jokers: a hand joker is played undeclared; at :data:`FINISH` each meld's undeclared jokers
take the first declarations (in the order of :data:`rummy.melds.VALID_MELDS`) that make
the meld legal (R5.6). A table joker keeps its declared card as it moves (R5.7); a working
meld that is illegal with its table jokers as declared is tried with those jokers
re-declared too, which the engine allows only when the real card replaces them (R5.8,
checked by ``check_action``).

Positions inside a meld are those of :func:`rummy.melds.canonical_meld` (groups by suit,
sequences by rank), recomputed after every edit, so "split meld i at k" cuts a sequence
between two ranks.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from rummy.cards import JOKER, NUM_REAL, TABLE_JOKER_BASE
from rummy.commands import Meld
from rummy.decide import check_opening
from rummy.errors import RummyError
from rummy.melds import EFF_BIT, Table, canonical_meld, check_action, valid_melds
from rummy.state import GameState

MAX_MELDS = 40  #: M: meld slots of the working table (a table holds at most 35 melds)
MAX_LEN = 16  #: L: cards a working meld may hold (a legal meld has at most 13)
MAX_EDITS = 64  #: default edits per meld phase (``max_edits``)
N_FIXED = 4  #: draw, pass, knock, end_turn (as in the slot mode)
FINISH = N_FIXED  #: send the working table as one meld action
RESET = N_FIXED + 1  #: back to the table and hand of the phase's start
PLAY_BASE = N_FIXED + 2  #: play hand card c onto meld i: PLAY_BASE + c * M + i
SPLIT_BASE = PLAY_BASE + 53 * MAX_MELDS  #: split meld i at k (1..L-1): + i * (L-1) + k-1
TAKE_BASE = SPLIT_BASE + MAX_MELDS * (MAX_LEN - 1)  #: take card k of meld i: + i * L + k
JOIN_BASE = TAKE_BASE + MAX_MELDS * MAX_LEN  #: join meld i onto meld j: + i * M + j
N_EDIT_ACTIONS = JOIN_BASE + MAX_MELDS * MAX_MELDS
#: per meld slot of the edit observation: 52 real cards, 52 declared jokers, 1 undeclared
#: joker (counts), 1 "legal as it stands"
MELD_FEATURES = 106
EDIT_OBS_SIZE = MAX_MELDS * MELD_FEATURES + 53 + 1


#: by meld length: the split positions 1..len-1 and the cards 0..len-1 that may be
#: taken out (none for a meld of one card), as mask rows
_SPLIT_ROWS = np.array([[1 if length > 1 and k < length - 1 else 0 for k in range(MAX_LEN - 1)]
                        for length in range(MAX_LEN + 1)], dtype=np.int8)
_TAKE_ROWS = np.array([[1 if length > 1 and k < length else 0 for k in range(MAX_LEN)]
                       for length in range(MAX_LEN + 1)], dtype=np.int8)


def describe(action: int) -> str:
    """A short text of an edit action index (for logs and tests)."""
    from rummy.cards import format_card
    if action < N_FIXED:
        return ("draw", "pass", "knock", "end_turn")[action]
    if action == FINISH:
        return "finish"
    if action == RESET:
        return "reset"
    if action < SPLIT_BASE:
        c, i = divmod(action - PLAY_BASE, MAX_MELDS)
        return f"play {format_card(c)} onto meld {i}"
    if action < TAKE_BASE:
        i, k = divmod(action - SPLIT_BASE, MAX_LEN - 1)
        return f"split meld {i} at {k + 1}"
    if action < JOIN_BASE:
        i, k = divmod(action - TAKE_BASE, MAX_LEN)
        return f"take card {k} of meld {i}"
    i, j = divmod(action - JOIN_BASE, MAX_MELDS)
    return f"join meld {i} onto meld {j}"


@functools.lru_cache(maxsize=32768)
def _declare(fixed: tuple[int, ...], free: int, ace_high: bool) -> tuple[int, ...] | None:
    """``fixed`` (table cards) plus ``free`` jokers declared so that the meld is legal
    (R4.4, R5.6): the first legal meld mask, in the order of the valid-meld table, that
    holds every fixed card and has ``len(fixed) + free`` cards; ``None`` if none."""
    mask = 0
    for c in fixed:
        mask += EFF_BIT[c]
    if bin(mask).count("1") != len(fixed):
        return None  # two cards stand for the same card
    n = len(fixed) + free
    for v, size in valid_melds(ace_high).items():
        if size == n and v & mask == mask:
            extra = v & ~mask
            declared = tuple(TABLE_JOKER_BASE + d for d in range(NUM_REAL) if extra >> d & 1)
            return fixed + declared
    return None


def resolve_meld(meld: Sequence[int], ace_high: bool = True) -> tuple[int, ...] | None:
    """A working meld with every undeclared joker declared so it is legal (R5.6), table
    jokers kept as declared (R5.7) or, failing that, re-declared as well (R5.8); ``None``
    when no declaration makes it legal."""
    free = sum(1 for c in meld if c == JOKER)
    fixed = tuple(c for c in meld if c != JOKER)
    out = _declare(fixed, free, ace_high)
    if out is None and any(c >= TABLE_JOKER_BASE for c in fixed):
        real = tuple(c for c in fixed if c < NUM_REAL)
        out = _declare(real, len(meld) - len(real), ace_high)
    return canonical_meld(out) if out is not None else None


class Editor:
    """The working table and hand of one ``meld_or_pass`` phase (``state``).

    Attributes:
        melds: the working table, each meld in :func:`canonical_meld` order.
        hand: the working hand (cards not yet played), ascending.
        edits: edits made this phase (at most ``max_edits``).
    """

    def __init__(self, state: GameState, max_edits: int = MAX_EDITS) -> None:
        self.state = state
        self.seat = state.turn
        self.max_edits = max_edits
        self.melds: list[tuple[int, ...]] = list(state.table)
        self.hand: list[int] = list(state.hands[self.seat])
        self.edits = 0
        self._command: Meld | None | bool = False  # False: not computed yet

    # ----------------------------------------------------------------- the mask

    def mask_into(self, mask: np.ndarray) -> None:
        """Set the legal actions of this phase in ``int8[N_EDIT_ACTIONS]`` ``mask`` (pass
        always; the edits while the budget lasts; :data:`FINISH` when the engine accepts
        the working table)."""
        mask[1] = 1  # pass (R3.2): abandons the edits
        if self.command() is not None:
            mask[FINISH] = 1
        if self.edits >= self.max_edits:
            return
        melds = self.melds
        n = len(melds)
        if self.edits:
            mask[RESET] = 1
        lens = np.fromiter(map(len, melds), dtype=np.intp, count=n)
        # play hand card c onto meld i: one row per card, a column per target meld
        targets = np.zeros(MAX_MELDS, dtype=np.int8)
        targets[:n] = lens < MAX_LEN
        if n < MAX_MELDS:
            targets[n] = 1  # a new meld
        play = mask[PLAY_BASE:SPLIT_BASE].reshape(53, MAX_MELDS)
        play[sorted(set(self.hand))] = targets
        if n < MAX_MELDS:  # split meld i at 1..len-1, take card 0..len-1 (len > 1)
            mask[SPLIT_BASE:TAKE_BASE].reshape(MAX_MELDS, MAX_LEN - 1)[:n] = _SPLIT_ROWS[lens]
            mask[TAKE_BASE:JOIN_BASE].reshape(MAX_MELDS, MAX_LEN)[:n] = _TAKE_ROWS[lens]
        if n > 1:
            ok = (lens[:, None] + lens[None, :]) <= MAX_LEN
            np.fill_diagonal(ok, False)
            view = mask[JOIN_BASE:JOIN_BASE + MAX_MELDS * MAX_MELDS].reshape(
                MAX_MELDS, MAX_MELDS)
            view[:n, :n] = ok

    # ------------------------------------------------------------------ the edits

    def apply(self, action: int) -> None:
        """Make edit ``action`` (a masked-in index from :data:`RESET` on).

        Raises:
            ValueError: an index that is no legal edit now.
        """
        if self.edits >= self.max_edits:
            raise ValueError(f"no edit left this phase (max_edits={self.max_edits})")
        melds = self.melds
        n = len(melds)
        if action == RESET:
            if not self.edits:
                raise ValueError("nothing to reset")
            self.melds = list(self.state.table)
            self.hand = list(self.state.hands[self.seat])
        elif PLAY_BASE <= action < SPLIT_BASE:
            c, i = divmod(action - PLAY_BASE, MAX_MELDS)
            if c not in self.hand or i > n or i == MAX_MELDS or \
                    (i < n and len(melds[i]) >= MAX_LEN):
                raise ValueError(f"{describe(action)}: not possible now")
            self.hand.remove(c)
            if i == n:
                melds.append((c,))
            else:
                melds[i] = canonical_meld(melds[i] + (c,))
        elif SPLIT_BASE <= action < TAKE_BASE:
            i, k = divmod(action - SPLIT_BASE, MAX_LEN - 1)
            k += 1
            if i >= n or not k < len(melds[i]) or n >= MAX_MELDS:
                raise ValueError(f"{describe(action)}: not possible now")
            m = melds[i]
            melds[i] = m[:k]
            melds.append(canonical_meld(m[k:]))
        elif TAKE_BASE <= action < JOIN_BASE:
            i, k = divmod(action - TAKE_BASE, MAX_LEN)
            if i >= n or not k < len(melds[i]) or len(melds[i]) < 2 or n >= MAX_MELDS:
                raise ValueError(f"{describe(action)}: not possible now")
            m = melds[i]
            melds[i] = m[:k] + m[k + 1:]
            melds.append((m[k],))
        elif JOIN_BASE <= action < N_EDIT_ACTIONS:
            i, j = divmod(action - JOIN_BASE, MAX_MELDS)
            if i >= n or j >= n or i == j or len(melds[i]) + len(melds[j]) > MAX_LEN:
                raise ValueError(f"{describe(action)}: not possible now")
            melds[j] = canonical_meld(melds[j] + melds[i])
            del melds[i]
        else:
            raise ValueError(f"action {action} is no edit")
        self.edits += 1
        self._command = False

    # ---------------------------------------------------------------- the command

    def new_table(self) -> Table | None:
        """The working table with its jokers declared (:func:`resolve_meld`), or
        ``None`` when some meld cannot be made legal."""
        ace_high = self.state.rules.ace_high
        out = []
        for m in self.melds:
            if JOKER not in m and (valid_melds(ace_high).get(sum(map(EFF_BIT.__getitem__, m)))
                                   == len(m)):
                out.append(m)
                continue
            r = resolve_meld(m, ace_high)
            if r is None:
                return None
            out.append(r)
        return tuple(out)

    def command(self) -> Meld | None:
        """The :class:`Meld` command that :data:`FINISH` sends: the working table (jokers
        declared) when the engine accepts it (R5 with the §11 variants, R5.5's opening
        variants), else ``None``. Cached until the next edit."""
        if self._command is False:
            self._command = None
            table = self.new_table() if self.edits else None
            if table is not None:
                s = self.state
                try:
                    added = check_action(s.table, s.hands[self.seat], table,
                                         table_is_legal=True, rules=s.rules)
                    cmd = Meld(self.seat, table)
                    check_opening(s, cmd, added)
                    self._command = cmd
                except RummyError:
                    pass
        return self._command  # type: ignore[return-value]

    # --------------------------------------------------------------- observation

    def observation(self) -> np.ndarray:
        """``float32[EDIT_OBS_SIZE]``: per meld slot (``MAX_MELDS`` of them, the working
        table's melds in order, then zeros) the count of each real card (52), of jokers
        declared as each card (52) and of undeclared jokers (1), and 1 when the meld is
        legal as it stands; then the working hand's card counts (53) and the share of
        the edit budget used."""
        out = np.zeros(EDIT_OBS_SIZE, dtype=np.float32)
        ace_high = self.state.rules.ace_high
        valid = valid_melds(ace_high).get
        for i, m in enumerate(self.melds):
            base = i * MELD_FEATURES
            for c in m:
                out[base + (c if c < JOKER else 104 if c == JOKER else c - 1)] += 1
            if JOKER not in m and valid(sum(map(EFF_BIT.__getitem__, m))) == len(m):
                out[base + 105] = 1.0
        base = MAX_MELDS * MELD_FEATURES
        for c in self.hand:
            out[base + c] += 1
        out[-1] = self.edits / self.max_edits
        return out


__all__ = ["Editor", "resolve_meld", "describe", "MAX_MELDS", "MAX_LEN", "MAX_EDITS",
           "FINISH", "RESET", "PLAY_BASE", "SPLIT_BASE", "TAKE_BASE", "JOIN_BASE",
           "N_EDIT_ACTIONS", "EDIT_OBS_SIZE", "MELD_FEATURES"]
