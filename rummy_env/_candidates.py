"""The meld candidates of one decision, computed lazily (docs/rl.md, "Actions").

Slot 0 and slot 1 are the solver's plays (most points, most cards); they are searched only
when a slot is played, looked at, or when no cheap candidate proves that some play exists.
Slots 2.. are the cheap candidates (the basic bot's play, new melds of three hand cards,
single lay-offs), legal by construction: every card comes from the hand, every new or
extended meld passes :func:`rummy.melds.is_valid_meld`, the rest of the table stands (the
basic bot's plays are legal by the bot contract); under the opening variants of R5.5 each
is also checked with :func:`rummy.decide.check_opening`. No candidate is ever
trial-stepped through the engine. Under the default meld rules the cheap slots are
counted from bit masks (the action mask needs only their number) and a slot's table is
made alone when it is played or read (:meth:`Candidates._count`, :meth:`Candidates._item`);
the whole list is built only when that does not apply.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from rummy.bots._melding import _fit_bits, basic_plan, hand_meld_entries
from rummy.bots._melding import _table_fits as _table_fits_by_value
from rummy.bots.greedy import plan_play
from rummy.cards import JOKER, NUM_REAL, POINTS, TABLE_JOKER_BASE, hand_points, physical
from rummy.commands import Meld
from rummy.decide import check_opening
from rummy.errors import RummyError
from rummy.events import Melded
from rummy.melds import (
    EFF_BIT,
    VALID_MELDS,
    Table,
    canonical_meld,
    canonical_table,
    check_action,
    is_valid_meld,
)
from rummy.rules import RuleSet
from rummy.solver import _solve_flat
from rummy.state import GameState
from rummy.views import PlayerView, view

_T = TypeVar("_T")

NODE_LIMIT = 40_000  #: the solver's budget per search (as the greedy bot's)
SOLVER_SLOTS = 2  #: slot 0: most points; slot 1: most cards


def _rank(card: int) -> int:
    return card % 13


def _suit(card: int) -> int:
    return card // 13


def _all_triples() -> list[tuple[int, int, int]]:
    """Every legal meld of three distinct real cards (R4.2, R4.3), most points first, then
    by cards. Only cards sharing a rank or a suit can form one, so only those are tried."""
    found: set[tuple[int, int, int]] = set()
    for key in (_rank, _suit):
        buckets: dict[int, list[int]] = {}
        for c in range(NUM_REAL):
            buckets.setdefault(key(c), []).append(c)
        for cards in buckets.values():
            for m in itertools.combinations(cards, 3):
                if is_valid_meld(m):
                    found.add(m)
    return sorted(found, key=lambda m: (-hand_points(m), m))


_TRIPLES = _all_triples()
#: for each real card, the other two cards of every legal triple that holds it
_PARTNERS: list[list[tuple[int, int]]] = [[] for _ in range(NUM_REAL)]
for _m in _TRIPLES:
    for _i, _c in enumerate(_m):
        _PARTNERS[_c].append(tuple(x for j, x in enumerate(_m) if j != _i))  # type: ignore[arg-type]


def could_meld(table: Table, hand: Iterable[int]) -> bool:
    """False only when no meld action can exist; True says nothing.

    A card added to the table ends in a legal meld, and a legal group or run holding it
    holds a legal triple holding it (R4.2, R4.3). A table joker keeps its declared card
    (R5.7) unless the real card it declares is on the table after the action (R5.8), which
    needs that card in the hand or already on the table; otherwise it counts as its
    declared card (R4.4). So the answer is False when there is no joker in the hand, no
    table joker that could be freed, and no hand card forming a legal triple with two
    other cards of the hand or the table (table jokers as their declared cards)."""
    hand = tuple(hand)
    if JOKER in hand:
        return True
    hand_bits = 0
    for c in hand:
        hand_bits |= 1 << c
    real, jokers, declared = _table_pool(table)
    pool = hand_bits | real
    for d in jokers:
        if pool >> d & 1:  # R5.8: it could be freed
            return True
    return bool(_triple_cards(pool | declared) & hand_bits)


def _table_pool_of(table: Table) -> tuple[int, tuple[int, ...], int]:
    """``(bits of the table's real cards, the cards its jokers declare, their bits)``."""
    real = declared = 0
    jokers = []
    for m in table:
        for t in m:
            if t >= TABLE_JOKER_BASE:
                jokers.append(t - TABLE_JOKER_BASE)
                declared |= 1 << (t - TABLE_JOKER_BASE)
            else:
                real |= 1 << t
    return real, tuple(jokers), declared


_RANK_BITS = (1 << 13) - 1  #: one suit's cards
_RUN_STARTS = sum(((1 << 11) - 1) << (13 * s) for s in range(4))  #: ranks A..J of a suit
_ACE_BITS = sum(1 << (13 * s) for s in range(4))  #: the aces


def _triple_cards(pool: int) -> int:
    """The cards (bits, real cards 0..51) of ``pool`` that are in a legal meld of three
    distinct cards of ``pool`` (R4.2, R4.3: :data:`_TRIPLES`): three consecutive ranks
    of a suit (``Q K A`` too), or a rank held in three or four suits."""
    w = pool & pool >> 1 & pool >> 2 & _RUN_STARTS  # the lowest card of each run of 3
    cover = w | w << 1 | w << 2
    qka = pool & pool >> 11 & pool >> 12 & _ACE_BITS  # Q K A: the ace's bit
    cover |= qka | qka << 11 | qka << 12
    a = pool & _RANK_BITS
    b = pool >> 13 & _RANK_BITS
    c = pool >> 26 & _RANK_BITS
    d = pool >> 39 & _RANK_BITS
    g = (a & b & (c | d)) | (c & d & (a | b))  # the ranks in three suits or more
    return cover | pool & (g | g << 13 | g << 26 | g << 39)


@functools.lru_cache(maxsize=1024)
def _free_cards(table: Table) -> dict[int, list[tuple[int, tuple[int, ...]]]]:
    """For each real card, ``(meld index, the meld without it)`` for each meld that stays
    legal without it: an end of a sequence of four or more, a card of a group of four
    (R4.2, R4.3; melds holding a joker are left out). Cached per table (the table changes
    only when someone melds; every meld phase in between asks again); read-only."""
    out: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    for i, m in enumerate(table):
        if len(m) < 4 or any(t >= TABLE_JOKER_BASE for t in m):
            continue
        for k, c in enumerate(m):
            rest = m[:k] + m[k + 1:]
            if is_valid_meld(rest):
                out.setdefault(c, []).append((i, rest))
    return out


def _last_by_identity(fn: Callable[[Table], _T]) -> Callable[[Table], _T]:
    """``fn`` answering the last table again by identity, without hashing it: a game's
    table object stands until someone melds, while every meld phase in between asks
    again. The remembered ``(table, answer)`` pair is replaced whole, so a thread never
    sees a table with another table's answer."""
    last: tuple[object, Any] = (_NO_TABLE, None)

    def answer(table: Table) -> _T:
        nonlocal last
        seen = last
        if seen[0] is table:
            return seen[1]  # type: ignore[no-any-return]
        out = fn(table)
        last = (table, out)
        return out

    return answer


_NO_TABLE = object()

#: the basic bot's fit masks of a table (``rummy.bots._melding._table_fits``)
_table_fits = _last_by_identity(_table_fits_by_value)

#: :func:`_free_cards` of a table
_free_table_cards = _last_by_identity(_free_cards)

#: :func:`_table_pool_of` of a table
_table_pool = _last_by_identity(_table_pool_of)


def _layoff_fits_of(table: Table) -> tuple[tuple[int, ...], int, bool]:
    """``(fit masks of the melds, their union, whether two melds are equal)``: the
    basic bot's fit masks (:func:`_table_fits`) with what :meth:`Candidates._count`
    needs of the table."""
    _, fits, union = _table_fits(table)
    return fits, union, len(set(table)) != len(table)


#: :func:`_layoff_fits_of` of a table
_table_layoff_fits = _last_by_identity(_layoff_fits_of)


def _construction_exists(free: dict[int, list[tuple[int, tuple[int, ...]]]],
                         hand: Sequence[int]) -> bool:
    """Whether :func:`play_exists`'s construction exists (unchecked), searched from the
    free table cards (few) rather than from the hand: a legal triple with at least one
    card held and the others not held but free, two of those from different melds."""
    held = 0
    for c in hand:
        held |= 1 << c
    for f, places in free.items():
        if held >> f & 1:
            continue  # a held card is played from the hand
        for a, b in _PARTNERS[f]:
            ha = held >> a & 1
            hb = held >> b & 1
            if ha and hb:
                return True
            if ha or hb:
                other = b if ha else a
                more = free.get(other)
                if more and any(p[0] != q[0] for p in places for q in more):
                    return True
    return False


#: for each real card, ``(a, b, bits of a and b)`` for each legal triple ``{card, a, b}``
_PARTNER_BITS: list[list[tuple[int, int, int]]] = [
    [(a, b, (1 << a) | (1 << b)) for a, b in _PARTNERS[c]] for c in range(NUM_REAL)]


def play_exists(table: Table, hand: Sequence[int], rules: RuleSet, *,
                check: bool | None = None) -> bool:
    """True when a cheap construction finds a legal meld action: a hand card with two
    cards from the hand or taken off melds that stay legal without them, as a new meld of
    three (R5.2, R5.3). False says nothing. The opening variants of R5.5 are not checked.

    Each construction is checked with :func:`rummy.melds.check_action` under ``rules``
    when ``check`` (default: only under a §11 variant that restricts melds). Under the
    default meld rules every construction on a legal table (I2) is legal: every old table
    card stays (the melds a card leaves stay legal, R5.2/R5.3), the new meld is a legal
    triple of real cards, the cards it adds are in the hand (R5.4), and no meld holding a
    joker changes (R5.7, R5.8); the test compares both ways."""
    if check is None:
        check = rules.restricts_melds
    free = _free_table_cards(table)
    if not check:
        return _construction_exists(free, hand)
    if not free:
        return False
    held = Counter(hand)
    held_bits = 0
    for c in held:
        if c != JOKER:
            held_bits |= 1 << c
    free_bits = 0
    for c in free:
        free_bits |= 1 << c
    reach = held_bits | free_bits
    for c in held:
        if c == JOKER:
            continue
        for a, b, bits in _PARTNER_BITS[c]:
            # both partners held or freeable, at least one of them off the table
            if bits & ~reach or not bits & ~held_bits:
                continue
            taken = [x for x in (a, b) if not held[x]]
            options: list[list[tuple[int, tuple[int, ...]]]] = (
                [[f] for f in free[taken[0]]] if len(taken) == 1 else
                [[fa, fb] for fa in free[a] for fb in free[b] if fa[0] != fb[0]])
            if not check:
                if options:
                    return True
                continue
            for changes in options:
                base = list(table)
                for i, rest in changes:
                    base[i] = rest
                try:
                    check_action(table, tuple(hand), (*base, (c, a, b)), rules=rules)
                except RummyError:
                    continue
                return True
    return False


#: for each real card, ``(place in _TRIPLES, mask)`` of the triples whose lowest card it is
_LOW_TRIPLES: list[list[tuple[int, int]]] = [[] for _ in range(NUM_REAL)]
for _k, _m in enumerate(_TRIPLES):
    _LOW_TRIPLES[min(_m)].append((_k, (1 << _m[0]) | (1 << _m[1]) | (1 << _m[2])))


def triples(hand: Iterable[int]) -> list[tuple[int, int, int]]:
    """Every legal meld of three distinct real hand cards (R4.2, R4.3; no joker), most
    points first, then by cards. Only the triples whose lowest card is held are tried
    (:data:`_LOW_TRIPLES`), on a bit mask of the hand."""
    held = set(hand)
    held.discard(JOKER)
    hb = 0
    for c in held:
        hb |= 1 << c
    found = [k for c in held for k, m in _LOW_TRIPLES[c] if m & hb == m]
    if len(found) > 1:
        found.sort()
    return [_TRIPLES[k] for k in found]


@functools.lru_cache(maxsize=8192)
def _fits(meld: tuple[int, ...]) -> tuple[frozenset[int], int | None]:
    """The real cards that extend ``meld`` to a legal meld, and the first declaration
    (a table joker) with which a joker does (``None``: none). The test is
    :func:`rummy.melds.is_valid_meld`'s, on the meld's effective-card mask."""
    mm = sum(map(EFF_BIT.__getitem__, meld))
    n = len(meld) + 1
    valid = VALID_MELDS.get
    fits = [c for c in range(NUM_REAL) if valid(mm + (1 << c)) == n]
    return frozenset(fits), (TABLE_JOKER_BASE + fits[0] if fits else None)


def layoffs(table: Table, hand: Iterable[int], *, with_index: bool = False
            ) -> list[Any]:
    """Every single lay-off of one hand card on one table meld (a joker with the first
    declaration that fits, R5.6): ``(new table, card)`` (``(new table, card, meld
    index)`` with ``with_index``), most points first (stable: table order, then cards
    ascending). Which cards fit a meld is cached per meld."""
    out: list[tuple[int, Table, int, int]] = []
    held = set(hand)
    joker_held = JOKER in held
    held.discard(JOKER)
    for i, meld in enumerate(table):
        real, joker = _fits(meld)
        for c in sorted(real & held) if held else ():
            out.append((POINTS[c], table[:i] + (meld + (c,),) + table[i + 1:], c, i))
        if joker_held and joker is not None:
            out.append((POINTS[JOKER], table[:i] + (meld + (joker,),) + table[i + 1:],
                        JOKER, i))
    out.sort(key=lambda x: -x[0])
    if with_index:
        return [(t, c, i) for _, t, c, i in out]
    return [(t, c) for _, t, c, _ in out]


def _layoffs_by_bits(table: Table, hand: Sequence[int]) -> list[tuple[Table, int, int]]:
    """:func:`layoffs` with ``with_index``, found with the bit masks of the table's melds
    that :mod:`rummy.bots._melding` caches for the basic bot (``_table_fits``): the same
    lay-offs in the same order."""
    if not table:
        return []
    _, fits, union = _table_fits(table)
    lb = 0
    joker_held = False
    for c in hand:
        if c == JOKER:
            joker_held = True
        else:
            lb |= 1 << c
    if not (union & lb or (joker_held and union)):
        return []
    out: list[tuple[int, Table, int, int]] = []
    for i, f in enumerate(fits):
        if not f:
            continue
        meld = table[i]
        x = f & lb
        while x:
            low = x & -x
            c = low.bit_length() - 1
            x ^= low
            out.append((POINTS[c], table[:i] + (meld + (c,),) + table[i + 1:], c, i))
        if joker_held:
            d = TABLE_JOKER_BASE + (f & -f).bit_length() - 1
            out.append((POINTS[JOKER], table[:i] + (meld + (d,),) + table[i + 1:], JOKER, i))
    out.sort(key=_NEG_POINTS)
    return [(t, c, i) for _, t, c, i in out]


def _neg_points(x: tuple[int, Table, int, int]) -> int:
    return -x[0]


_NEG_POINTS = _neg_points


def _diff(table0: Table, new: Table) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """``(added, removed)``: the canonical melds of ``new`` (``table0``'s melds in place,
    some grown, new melds after them, as the basic play builds it) that are not
    ``table0``'s, and the melds of ``table0`` they replace (canonical already, I2). Two
    such tables are equal in canonical form iff ``added1 + removed2`` and ``added2 +
    removed1`` hold the same melds."""
    added = [canonical_meld(m) for m in new[len(table0):]]
    removed = []
    for m0, m in zip(table0, new, strict=False):
        if m is not m0 and m != m0:
            added.append(canonical_meld(m))
            removed.append(m0)
    return added, removed


_PHYSICAL = tuple(physical(t) for t in range(TABLE_JOKER_BASE + NUM_REAL))


def _added(table: Table, new: Table) -> list[int]:
    """The physical cards ``new`` holds beyond ``table`` (jokers as ``JOKER``), sorted.
    Fast when ``new`` keeps the melds of ``table`` in place with cards appended and new
    melds after them (as the basic bot's and the lay-off candidates' tables do)."""
    n = len(table)
    if len(new) >= n and all(new[i][:len(m)] == m for i, m in enumerate(table)):
        out = [c for i, m in enumerate(table) for c in new[i][len(m):]]
        out += [c for m in new[n:] for c in m]
        return sorted(map(_PHYSICAL.__getitem__, out))
    from collections import Counter
    left = Counter(map(_PHYSICAL.__getitem__, (t for m in new for t in m)))
    left.subtract(map(_PHYSICAL.__getitem__, (t for m in table for t in m)))
    return sorted(left.elements())


def melded_of(seat: int, table: Table, new_table: Table) -> Melded:
    """The ``Melded`` event of a meld action from the legal, canonical ``table`` (I2) to
    ``new_table``, known to be legal (not checked): the melds of ``new_table`` that stand
    unchanged are kept as they are, the others put in display order (R4.5), all sorted;
    the cards added are the physical cards of the changed melds less those of the melds
    they replace, ascending (a joker as ``JOKER``). The engine's
    :func:`rummy.melds.check_and_canonical` gives the same for a legal action."""
    left: dict[tuple[int, ...], int] = {}
    for m in table:
        left[m] = left.get(m, 0) + 1
    melds: list[tuple[int, ...]] = []
    added: list[int] = []
    for m in new_table:
        k = left.get(m)
        if k:
            left[m] = k - 1
            melds.append(m)
        else:
            melds.append(canonical_meld(m))
            added += map(_PHYSICAL.__getitem__, m)
    added.sort()
    for m, k in left.items():
        for _ in range(k):
            for t in m:
                added.remove(_PHYSICAL[t])
    melds.sort()
    return Melded(seat, tuple(added), tuple(melds))


_PLANNED: dict[tuple[Any, ...], tuple[Table, tuple[int, ...]] | None] = {}
_PLANNED_MAX = 4096
_NOT_PLANNED = object()


def _planned(rules: Any, table: Table, hand: tuple[int, ...], opened: bool, slot: int,
             v: PlayerView) -> tuple[Table, tuple[int, ...]] | None:
    """``plan_play(v)``'s table and the hand cards its play adds (slot 0: most points, 1:
    most cards), or ``None``, remembered for the last :data:`_PLANNED_MAX` positions: it
    depends only on the rules, the table, the hand and whether the seat has opened
    (clones and searches revisit positions)."""
    key = (rules, table, hand, opened, slot)
    got = _PLANNED.get(key, _NOT_PLANNED)
    if got is not _NOT_PLANNED:
        return got  # type: ignore[return-value]
    got = slot_search(v, slot)
    if len(_PLANNED) >= _PLANNED_MAX:
        _PLANNED.pop(next(iter(_PLANNED)))
    _PLANNED[key] = got
    return got


def solver_play(v: PlayerView, slot: int) -> tuple[Table, tuple[int, ...]] | None:
    """The table of ``plan_play(v, node_limit=NODE_LIMIT)`` (slot 0: objective
    ``"points"``, 1: ``"cards"``) and the hand cards its play adds, or ``None``: the
    solver's search of a meld slot. Unless an R5.5 opening variant applies to the seat or
    a §11 variant restricts melds, the solver's flat path (:func:`rummy.solver._solve_flat`,
    the path that ``plan_play``'s :func:`rummy.solver.best_play` takes) is called on the
    view's table and hand directly, without the frames around it; it answers as
    ``plan_play`` does (its table is the play's, R5), and when it cannot answer
    ``plan_play`` does."""
    objective = "points" if slot == 0 else "cards"
    rules = v.rules
    seat = v.seat if v.seat is not None else v.turn
    if not ((rules.opening_meld_per_player and not v.opened[seat])
            or (not v.table and rules.opening_meld_min_points)
            or rules.restricts_melds):
        flat = _solve_flat(v.table, v.hand, (), objective, NODE_LIMIT)
        if flat is not None:
            play = flat[0]
            return None if play is None else (play.table, play.cards)
    planned = plan_play(v, node_limit=NODE_LIMIT, objective=objective)
    return (planned[0], planned[1].cards) if planned is not None else None


#: the search of a meld slot that :func:`_planned` runs on a miss of its cache
#: (:func:`solver_play`). Read from the module at each miss, so a tool can wrap it (the
#: environment benchmark times the solver's share through it) whether or not this module
#: is compiled ahead of time: compiled code calls :func:`solver_play` itself directly,
#: past any patch of the module's name.
slot_search: Callable[[PlayerView, int], tuple[Table, tuple[int, ...]] | None] = solver_play


#: :attr:`Candidates._counted`
_Counted = tuple[int, int, list[tuple[int, ...]], tuple[int, int], Table | None]


class Candidates:
    """The meld candidates of ``state``'s seat to act (a ``meld_or_pass`` state).

    Attributes:
        n_cheap: how many cheap candidate tables there are (slots 2..), at most
            ``slots - 2``; under the default meld rules counted without building them.
        has_play: whether the seat may meld at all (then slots 0 and 1 are legal).
    """

    def __reduce__(self) -> tuple[Any, ...]:
        """Copied and pickled as its state and slot count (everything else is caches,
        rebuilt alike on first use): a class compiled ahead of time (mypyc) has no
        instance ``__dict__`` for :mod:`copy` and :mod:`pickle` to take."""
        return (Candidates, (self.state, self._room + SOLVER_SLOTS))

    def __init__(self, state: GameState, slots: int) -> None:
        self.state = state
        self.seat = seat = state.turn
        self._view: PlayerView | None = None
        rules = state.rules
        table = state.table
        hand = state.hands[seat]  # the view's hand and table (rummy.views.view)
        self._plays: dict[int, Table | None] = {}
        #: the hand cards (ascending, jokers as JOKER) that a solver slot's play adds
        self._cards: dict[int, tuple[int, ...]] = {}
        self.restricted = bool((rules.opening_meld_per_player and not state.opened[seat])
                               or (not table and rules.opening_meld_min_points))
        self._room = slots - SOLVER_SLOTS
        self._cheap: list[Table] | None = None
        self._entries: list[tuple[int, int, tuple[int, ...]]] | None = None
        #: what :meth:`_count` found: (1 if there is a basic play else 0, the basic
        #: play's twin: 0 none, 1 the triple ``twin[0]``, 2 the lay-off ``twin`` (meld,
        #: card), the hand's triples, ``twin``, the basic play if made); ``None``: not
        #: counted
        self._counted: _Counted | None = None
        #: the slots :meth:`_item` made alone, by index among the cheap slots
        self._made: dict[int, tuple[Table, tuple[int, ...] | None]] = {}
        n = None
        if not self.restricted and not rules.restricts_melds:
            n = self._count()
        if n is None:
            n = len(self.cheap)
        self.n_cheap = n
        if not n and not could_meld(table, hand):
            self.has_play = False  # proven without the solver
        elif self.restricted or not n:
            self.has_play = (not self.restricted and play_exists(table, hand, rules)) \
                or self.play(0) is not None
        else:
            self.has_play = True

    @property
    def view(self) -> PlayerView:
        """The seat's view (:func:`rummy.views.view`), made on first use."""
        v = self._view
        if v is None:
            v = self._view = view(self.state, self.seat)
        return v

    def _count(self) -> int | None:
        """How many cheap candidates :attr:`cheap` holds, found without building them
        under the default meld rules (no R5.5 variant, nothing for ``check_action`` to
        refuse), or ``None`` when this count does not apply (two equal melds on the
        table: :attr:`cheap` is built instead).

        The candidates are the basic play (if any), the hand's triples, then (while
        there is room) the single lay-offs, distinct by construction but for the one
        triple or lay-off that the basic play equals: it equals the triple it is when it
        forms just the first triple of the hand and lays nothing off (the greedy order
        of :func:`rummy.bots._melding.form_hand_melds`), and the lay-off it is when it
        forms no meld and lays off exactly one card (the first of
        :func:`rummy.bots._melding.lay_off_ascending`). With a joker in the hand the
        basic play is made (:meth:`_joker_count`)."""
        hand = self.state.hands[self.seat]  # the view's (rummy.views.view)
        table0 = self.state.table
        if table0:
            fits, union, repeats = _table_layoff_fits(table0)
            if repeats:
                return None  # equal melds: lay-offs onto them repeat
        else:
            fits, union = (), 0
        lb = 0
        for c in hand:
            if c != JOKER:
                lb |= 1 << c
        # every legal meld holds a legal triple: none in the hand, no meld of the hand
        entries = self._entries = hand_meld_entries(hand) if _triple_cards(lb) else []
        tri: list[tuple[int, ...]] = [e[2] for e in entries if len(e[2]) == 3]
        n_tri = len(tri)
        twin = (-1, -1)
        n_lay = 0
        if union & lb:
            for f in fits:
                n_lay += (f & lb).bit_count()
        if JOKER in hand:
            if union:  # a joker lays off on every meld that takes a card
                n_lay += sum(1 for f in fits if f)
            return self._joker_count(entries, tri, n_lay, fits)
        dup = 0
        if entries:
            basic = 1
            first = entries[0]
            if len(first[2]) == 3:
                left = list(hand)
                for c in first[2]:
                    left.remove(c)
                hm = 0
                for c in left:
                    hm |= 1 << c
                if not any(e[1] & hm == e[1] for e in entries):
                    grown = union | _fit_bits(sum(map(EFF_BIT.__getitem__, first[2])), 4)
                    if not grown & hm:  # nothing laid off: the play is this triple
                        dup, twin = 1, (0, -1)
        elif n_lay:
            basic = 1
            # the first lay-off of lay_off_ascending: the first meld taking a hand card,
            # its lowest such card; exactly one card is laid off when nothing fits after it
            i = 0
            while not fits[i] & lb:
                i += 1
            x = fits[i] & lb
            c = (x & -x).bit_length() - 1
            rest = lb if hand.count(c) > 1 else lb & ~(1 << c)
            meld = table0[i]
            after = _fit_bits(sum(map(EFF_BIT.__getitem__, meld)) + (1 << c), len(meld) + 2)
            for f in fits[i + 1:]:
                after |= f
            if not after & rest:
                dup = 2
                twin = (i, c)
        else:
            basic = 0
        self._counted = (basic, dup, tri, twin, None)
        n = basic + n_tri
        if self._room > n:
            n += n_lay
        return min(self._room, n - (dup > 0))

    def _joker_count(self, entries: list[tuple[int, int, tuple[int, ...]]],
                     tri: list[tuple[int, ...]], n_lay: int, fits: Sequence[int]) -> int:
        """:meth:`_count` with a joker in the hand: the basic play is made (the basic
        bot's plan) and compared, as :meth:`_build` compares it, with the one triple or
        lay-off it could equal (one adding the same cards)."""
        table0 = self.state.table
        plan = basic_plan(self.view, entries, _table_fits(table0) if table0 else None)
        dup = 0
        twin = (-1, -1)
        if plan is not None:
            n_added = sum(map(len, plan)) - sum(map(len, table0))
            if n_added in (1, 3):
                added = tuple(_added(table0, plan))
                b_add, b_rem = _diff(table0, plan)
                if n_added == 3:
                    for k, m in enumerate(tri):
                        if m == added and sorted(b_add) == sorted([canonical_meld(m)] + b_rem):
                            dup, twin = 1, (k, -1)
                            break
                elif self._room > len(tri) + 1:
                    c = added[0]
                    for i, f in enumerate(fits):
                        if not f or (c != JOKER and not f >> c & 1):
                            continue
                        d = c if c != JOKER else TABLE_JOKER_BASE + (f & -f).bit_length() - 1
                        mine = [canonical_meld(table0[i] + (d,))]
                        if sorted(b_add + [table0[i]]) == sorted(mine + b_rem):
                            dup, twin = 2, (i, c)
                            break
        basic = 1 if plan is not None else 0
        self._counted = (basic, dup, tri, twin, plan)
        n = basic + len(tri)
        if self._room > n:
            n += n_lay
        return min(self._room, n - (dup > 0))

    def _item(self, k: int) -> tuple[Table, tuple[int, ...] | None]:
        """``(cheap[k], _origin[k])`` for ``k < n_cheap``: when the slots were counted
        (:meth:`_count`), made alone from what the count found, without building the
        others; else read from the built list."""
        info = self._counted
        if self._cheap is not None or info is None:
            return self.cheap[k], self._origin[k]
        made = self._made.get(k)
        if made is None:
            made = self._made[k] = self._make(k, info)
        return made

    def _make(self, k: int, info: _Counted) -> tuple[Table, tuple[int, ...] | None]:
        """:meth:`_item` ``k`` made from ``info`` (:attr:`_counted`): the basic bot's plan
        (first when there is one), a triple of the hand as a new meld, or a single
        lay-off (the basic play's twin left out)."""
        basic, dup, tri, twin, plan = info
        table0 = self.state.table
        if basic and not k:  # the basic play, first when there is one
            if plan is None:
                entries = self._entries
                assert entries is not None
                plan = basic_plan(self.view, entries,
                                     _table_fits(table0) if table0 else None)
            assert plan is not None
            return plan, None
        if dup == 1:
            tri = tri[:twin[0]] + tri[twin[0] + 1:]
        j = k - basic
        if j < len(tri):
            m = tri[j]
            return table0 + (m,), (-1,)
        j -= len(tri)
        lay = _layoffs_by_bits(table0, self.state.hands[self.seat])
        if dup == 2:
            lay = [x for x in lay if x[2] != twin[0] or x[1] != twin[1]]
        t, c, i = lay[j]
        return t, (i, c)

    @property
    def cheap(self) -> list[Table]:
        """The cheap candidate tables (slots 2..), deduplicated, at most ``slots - 2``
        (built on first use)."""
        cheap = self._cheap
        if cheap is None:
            self._build()
            # read again after the call (mypy keeps the attribute narrowed to None across
            # it, and a compiled build would check that)
            cheap = self._cheap
            assert cheap is not None
        return cheap

    @property
    def _origin(self) -> list[tuple[int, ...] | None]:
        """How each cheap candidate was made (``None``: the basic play; ``(-1,)``: a
        triple; ``(meld index, card)``: a lay-off); built with :attr:`cheap`."""
        if self._cheap is None:
            self._build()
        return self._origins

    def _build(self) -> None:
        """Build :attr:`cheap` and :attr:`_origin` (module docstring: the basic play,
        the triples, the single lay-offs; deduplicated; checked under the R5.5 and §11
        variants)."""
        v = self.view
        rules = v.rules
        state = self.state
        cheap: list[Table] = []
        seen: set[object] = set()
        room = self._room
        table0 = tuple(v.table)
        # a triple's table is the table plus that meld (triples are distinct); a lay-off's
        # is the table with one meld extended: the same card on two equal melds gives the
        # same table, so the key is (meld, card)
        entries = self._entries
        if entries is None:
            entries = hand_meld_entries(v.hand)
        basic = basic_plan(v, entries, _table_fits(table0) if table0 else None)
        # the basic play can equal a single triple or lay-off only when it adds 3 or 1
        # cards: its added cards (and canonical form) are computed only then, or for R5.5
        dup_added: tuple[int, ...] | None = None
        basic_diff: tuple[list[tuple[int, ...]], list[tuple[int, ...]]] | None = None
        gen: list[tuple[Table, tuple[int, ...] | None, object]] = []
        origin: list[tuple[int, ...] | None] = []  # see :meth:`added_and_table`
        if basic is not None:
            n_added = sum(map(len, basic)) - sum(map(len, table0))
            basic_added = (tuple(_added(table0, basic))
                           if self.restricted or n_added in (1, 3) else None)
            if n_added in (1, 3):
                dup_added = basic_added
            gen.append((basic, basic_added, basic))
            origin.append(None)
        tri = [x[2] for x in entries if len(x[2]) == 3]  # triples(v.hand), in order
        gen += [(table0 + (m,), m, m) for m in tri]
        origin += [(-1,)] * len(tri)
        if room > len(gen):
            lay = _layoffs_by_bits(table0, v.hand)
            gen += [(t, (c,), (table0[i], c)) for t, c, i in lay]
            origin += [(i, c) for _, c, i in lay]
        origins: list[tuple[int, ...] | None] = []
        for (table, added, key), how in zip(gen, origin, strict=True):
            if len(cheap) == room:
                break
            if key in seen:
                continue
            if dup_added is not None and key is not basic and added == dup_added:
                if basic_diff is None:
                    basic_diff = _diff(table0, basic)  # type: ignore[arg-type]
                # this candidate's melds that differ from the table: a new triple, or
                # one meld grown by a lay-off
                if how is not None and how[0] >= 0:
                    mine = ([canonical_meld(table[how[0]])], [table0[how[0]]])
                else:
                    mine = ([canonical_meld(table[-1])], [])
                # equal tables: table0 - R_basic + A_basic == table0 - R_mine + A_mine
                if sorted(basic_diff[0] + mine[1]) == sorted(mine[0] + basic_diff[1]):
                    continue  # the basic play made only this triple or lay-off
            if self.restricted:
                try:
                    check_opening(state, Meld(self.seat, table),
                                  tuple(sorted(added or ())))
                except RummyError:
                    continue
            if rules.restricts_melds:  # built for the default meld rules: §11 variants
                try:
                    check_action(v.table, v.hand, table, rules=rules)
                except RummyError:
                    continue
            seen.add(key)
            cheap.append(table)
            origins.append(how)
        self._origins = origins
        self._cheap = cheap

    def play(self, slot: int) -> Table | None:
        """The solver's play of slot 0 (most points) or 1 (most cards), searched on first
        use and cached; ``None`` when the seat cannot (or, by R5.5, may not) meld. Should
        the search stop at its node limit without a play although a cheap candidate
        exists, slot 0 falls back to the first cheap candidate, slot 1 to slot 0."""
        if slot not in self._plays:
            v = self.view
            got = _planned(v.rules, v.table, v.hand, v.opened[self.seat], slot, v)
            if got is None:
                table = (self._item(0)[0] if slot == 0 and self.n_cheap
                         else self.play(0) if slot == 1 else None)
            else:
                table, self._cards[slot] = got
            self._plays[slot] = table
        return self._plays[slot]

    def table(self, slot: int) -> Table | None:
        """The new table of meld slot ``slot`` (0-based), or ``None`` if it is empty."""
        if slot < SOLVER_SLOTS:
            return self.play(slot) if self.has_play else None
        k = slot - SOLVER_SLOTS
        return self._item(k)[0] if k < self.n_cheap else None

    def meld_event(self, slot: int) -> Melded | None:
        """The ``Melded`` event that the engine's :func:`rummy.decide.step` would make
        for the meld of slot ``slot`` (the cards it adds, the new table in canonical form,
        I2), without re-checking it: a triple's or lay-off's built from how the candidate
        was made (legal by construction), a solver play's or the basic play's by
        :func:`melded_of` (legal by the solver's and the bot's contracts); ``None`` for an
        empty slot, and for those two under the R5.5 opening variants or a §11 variant
        that restricts melds (the caller then steps the engine). Tested equal to the
        engine's event over random games."""
        k = slot - SOLVER_SLOTS
        if k >= self.n_cheap:
            return None
        table, how = (None, None) if k < 0 else self._item(k)
        if how is None:
            # a solver slot (legal by the solver's contract) or the basic play (by the bot
            # contract): under the default meld rules, the event of the checked path
            if self.restricted or self.view.rules.restricts_melds:
                return None
            if table is None:
                table = self.table(slot)
                cards = self._cards.get(slot)
                if table is not None and cards is not None:
                    # the solver's play: its table is canonical (I2), its cards the ones
                    # added (R5.4), as melded_of would find them
                    return Melded(self.seat, cards, table)
            return None if table is None else melded_of(self.seat, self.state.table, table)
        assert table is not None
        table0 = self.state.table
        if how[0] < 0:  # a triple of hand cards as a new meld (ascending real cards)
            m = table[-1]
            new = canonical_meld(m)
            j = bisect.bisect_left(table0, new)
            return Melded(self.seat, m, table0[:j] + (new,) + table0[j:])
        i, c = how  # hand card c (a joker declared) laid off on meld i
        grown = canonical_meld(table[i])
        rest = table0[:i] + table0[i + 1:]
        j = bisect.bisect_left(rest, grown)
        return Melded(self.seat, (c,), rest[:j] + (grown,) + rest[j:])

    def slot_of(self, table: Table) -> int | None:
        """The first slot whose table is ``table`` (compared in canonical form), or
        ``None`` (runs the solver for slots 0 and 1)."""
        key = canonical_table(table)
        for slot in range(SOLVER_SLOTS):
            planned = self.table(slot)
            if planned is not None and canonical_table(planned) == key:
                return slot
        for k, t in enumerate(self.cheap):
            if canonical_table(t) == key:
                return SOLVER_SLOTS + k
        return None

    def legal_slots(self) -> list[int]:
        """The slots holding a table (0-based)."""
        first = list(range(SOLVER_SLOTS)) if self.has_play else []
        return first + [SOLVER_SLOTS + k for k in range(self.n_cheap)]
