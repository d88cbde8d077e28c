"""Exact best-play search for the meld action (docs/rules.md §5): ``best_play(table, hand)``.

Pure standard library, deterministic, no I/O. The search itself is in
:mod:`rummy.solver.search` (model and exactness arguments in its docstring); this module
turns a position into count vectors, handles the joker rules R5.6–R5.9 and builds the new
table.

>>> from rummy.melds import parse_table
>>> from rummy.cards import parse_cards
>>> play = best_play(parse_table("5S 6S 7S"), parse_cards("8S KD"))
>>> play.points, format_play(play)
(8, '5S 6S 7S 8S')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from itertools import chain
from operator import mul
from struct import error as StructError
from typing import Any, NamedTuple

from rummy.cards import JOKER, POINTS, TABLE_JOKER_BASE, format_card, hand_points
from rummy.errors import IllegalMoveError
from rummy.melds import MeldCards, Table, canonical_meld, check_action, table_text
from rummy.rules import RuleSet
from rummy.solver import compiled
from rummy.solver import locked as locked_search
from rummy.solver.search import MAX_COUNT, Aborted, Search, pack_state

#: weight of one point and one card in the cost of a card left in hand (see search.py)
_PTS_W = 256
_CARDS_W = 1 << 20
_OBJECTIVES = ("points", "cards")
_BACKENDS = ("auto", "pure", "compiled")


@dataclass(frozen=True, slots=True)
class Play:
    """An optimal (or budget-limited) meld action.

    Attributes:
        table: the whole new table, canonical (:func:`rummy.melds.canonical_table`), every
            joker declared (R1.4). Passing it to :func:`rummy.melds.check_action` with the
            old table and the hand succeeds.
        cards: the hand cards added (R5.1, R5.4), ascending; a joker is ``JOKER``.
        points: R1.5 point value of ``cards``.
        optimal: ``False`` only when ``node_limit`` was reached before the search finished;
            the play is then legal but not proven best.
    """

    table: Table
    cards: tuple[int, ...]
    points: int
    optimal: bool = True


_COSTS: dict[str, tuple[tuple[int, ...], int]] = {
    "points": (tuple(POINTS[c] * _PTS_W + 1 for c in range(52)), 25 * _PTS_W + 1),
    "cards": (tuple(_CARDS_W + POINTS[c] for c in range(52)), _CARDS_W + 25),
}


def _cost_vectors(objective: str) -> tuple[tuple[int, ...], int]:
    """Cost of leaving each real card 0..51, and a joker, in the hand (see search.py)."""
    try:
        return _COSTS[objective]
    except (KeyError, TypeError):
        raise ValueError(f"objective must be one of {_OBJECTIVES}, "
                         f"got {objective!r}") from None


def _templates_by_card() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For each real card, the other cards of every group of 3–4 / sequence of 3–5 with it."""
    out: list[list[tuple[int, ...]]] = [[] for _ in range(52)]
    melds: list[list[int]] = []
    for r in range(13):
        for mask in range(16):
            if bin(mask).count("1") >= 3:
                melds.append([s * 13 + r for s in range(4) if mask >> s & 1])
    for s in range(4):
        for start in range(14):
            for length in (3, 4, 5):
                if start + length <= 14:
                    melds.append([s * 13 + p % 13 for p in range(start, start + length)])
    for meld in melds:
        for c in meld:
            out[c].append(tuple(d for d in meld if d != c))
    return tuple(tuple(x) for x in out)


_PARTNERS = _templates_by_card()


#: the partners of :data:`_PARTNERS` as bit masks of cards, per card
_PARTNER_MASKS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sum(1 << d for d in others) for others in per_card) for per_card in _PARTNERS)


def _prune_dead(mand: list[int], opt: list[int], wild: int) -> list[int]:
    """Optional copies that no meld can use, removed to a fixed point; returns the dead
    counts and zeroes them in ``opt``. Exact: a dead card is in no meld of any legal new
    table (each of its groups of 3–4 and sequences of 3–5 misses more than ``wild``
    cards)."""
    dead = [0] * 52
    absent = ~sum(1 << c for c in range(52) if mand[c] or opt[c])
    changed = True
    while changed:
        changed = False
        for c in range(52):
            if opt[c] and not mand[c]:
                if not any((pm & absent).bit_count() <= wild for pm in _PARTNER_MASKS[c]):
                    dead[c] += opt[c]
                    opt[c] = 0
                    absent |= 1 << c
                    changed = True
    return dead


def _joker_options(real_table: Counter[int], before: Counter[int],
                   hand: Counter[int]) -> list[dict[int, int]]:
    """Every useful choice of how many table jokers declared ``c`` are freed (R5.8).

    Freeing is a relaxation (a freed joker may be declared ``c`` again), so a joker is freed
    whenever a real ``c`` is on the table anyway; freeing more than that needs real ``c``
    cards from the hand, which is a choice.
    """
    options: list[dict[int, int]] = [{}]
    for c in sorted(before):
        b = before[c]
        lo = min(b, real_table[c])
        hi = min(b, real_table[c] + hand[c])
        options = [{**opt, c: f} for opt in options for f in range(lo, hi + 1)]
    return options


class Solution(NamedTuple):
    """What :func:`solve` found: the best play (or ``None``) and whether the search was
    complete (``optimal``; False only when ``node_limit`` stopped it)."""

    play: Play | None
    optimal: bool


def _flat(table: Any, hand: Any, keep: Any, objective: str, node_limit: int | None,
          backend: str, rules: RuleSet | None, opening: bool) -> tuple[Play | None, bool] | None:
    """:func:`_solve_flat` for a call of :func:`solve` or :func:`best_play` without a
    restricting rule set, on plain tuples or lists, with no node limit or a positive
    ``int`` one; ``None`` for any other call (the general path decides it, with its
    errors)."""
    if ((node_limit is None or (type(node_limit) is int and node_limit >= 1))
            and (backend == "auto" or backend == "compiled")
            and (rules is None or not _restricts(rules, opening))
            and type(table) in _SEQUENCES and type(hand) in _SEQUENCES
            and type(keep) in _SEQUENCES and objective in _COSTS):
        return _solve_flat(table, hand, keep, objective, node_limit)
    return None


def best_play(
    table: Iterable[Iterable[int]],
    hand: Iterable[int],
    *,
    keep: Iterable[int] = (),
    objective: str = "points",
    node_limit: int | None = None,
    backend: str = "auto",
    rules: RuleSet | None = None,
    opening: bool = False,
) -> Play | None:
    """The best legal meld action (R5) of ``hand`` on ``table``, or ``None``: the play of
    :func:`solve` (same arguments, same errors). With a ``node_limit`` that stops the search
    before any play is found, ``None`` does not prove that there is none; :func:`solve`
    tells the two apart."""
    flat = _flat(table, hand, keep, objective, node_limit, backend, rules, opening)
    if flat is not None:
        return flat[0]
    return solve(table, hand, keep=keep, objective=objective, node_limit=node_limit,
                 backend=backend, rules=rules, opening=opening).play


def solve(
    table: Iterable[Iterable[int]],
    hand: Iterable[int],
    *,
    keep: Iterable[int] = (),
    objective: str = "points",
    node_limit: int | None = None,
    backend: str = "auto",
    rules: RuleSet | None = None,
    opening: bool = False,
) -> Solution:
    """The best legal meld action (R5) of ``hand`` on ``table``, and whether it is proven.

    Exact: the result maximises the R1.5 points of the hand cards added (or, with
    ``objective="cards"``, their number), over every legal action including every
    rearrangement of the table and the joker rules R5.6–R5.9. Ties are broken towards more
    cards (fewer points with ``"cards"``), then by a fixed search order, so the result is
    deterministic.

    Args:
        table: melds of table cards (real cards 0..51, declared jokers 53..104). The table
            need not be legal; the new table always is.
        hand: hand cards (0..51, ``JOKER`` = 52), in any order.
        keep: hand cards (a multiset) that must stay in the hand.
        objective: ``"points"`` (default) or ``"cards"``.
        node_limit: maximum number of search states to expand (a positive integer);
            ``None`` (default) for an exact search. When reached, the best play found so
            far is returned with ``optimal=False``, or ``None`` if the budget ran out
            before any play was found (a bot then simply does not meld).
        backend: ``"auto"`` (default: the compiled search when numba is installed and
            usable, else the pure one), ``"pure"`` (the reference,
            :mod:`rummy.solver.search`) or ``"compiled"`` (:mod:`rummy.solver.compiled`;
            ValueError without numba). Both return the same play, node for node.
        rules: the game's rule set (``None``: the default rules). The §11 variants that
            restrict the meld action are applied: ``ace_high=False`` (no high-ace step,
            ``*J Q K`` as the one wildcard-led start, no mirror image),
            ``joker_release="hand"`` and the opening minimum (``opening_meld_min_points``,
            when ``opening``) exactly inside the search; ``joker_moves="locked"`` exactly
            around it (:mod:`rummy.solver.locked`: every way the melds holding a joker can
            stand on the new table, the rest searched freely); ``opening_meld_per_player``
            (when ``opening`` on a non-empty table) by checking the unrestricted best play,
            which is then the best (the variant only removes plays), and otherwise falling
            back to the best legal play of a few restricted searches, with
            ``optimal=False``.
        opening: the action is the seat's opening meld (R5.5 and the opening variants).

    Returns:
        A :class:`Solution`: ``play`` is a :class:`Play` that passes ``check_action(table,
        hand, play.table)``, or ``None`` when no legal meld action adds a card (R5.1);
        ``optimal`` is False when ``node_limit`` stopped the search, so that a ``None``
        play only means that none was found within the budget.

    Raises:
        ValueError: unknown objective or backend, ``node_limit`` not a positive integer, a
            card that is not an index in range, ``keep`` not in the hand, or more than 7
            copies of one card counting every joker.
    """
    flat = _flat(table, hand, keep, objective, node_limit, backend, rules, opening)
    if flat is not None:
        return Solution(*flat)
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
    if node_limit is not None and (not isinstance(node_limit, int)
                                   or isinstance(node_limit, bool) or node_limit < 1):
        raise ValueError(f"node_limit must be a positive integer or None, got {node_limit!r}")
    if objective not in _COSTS:
        _cost_vectors(objective)  # the ValueError of an unknown objective
    for name, value in (("table", table), ("hand", hand), ("keep", keep)):
        if isinstance(value, str):
            raise ValueError(f"{name} must be card indices, not notation {value!r}: parse it "
                             "with rummy.melds.parse_table / rummy.cards.parse_cards")
    table_t = [tuple(m) for m in table]
    hand_t = tuple(hand)
    keep_t = tuple(keep)
    usable = compiled.usable()
    if backend == "pure" or not usable or not _plain_ints(table_t, hand_t, keep_t):
        _check_cards(table_t, hand_t, keep_t)
    # else the compiled search checks the ranges and copies of _check_cards itself and
    # calls it to word the error
    if backend == "compiled" and not usable:
        raise ValueError("backend 'compiled' needs numba, installed and enabled "
                         "(pip install '.[fast]'; NUMBA_DISABLE_JIT unset)")
    if backend == "auto":
        backend = "compiled" if usable else "pure"
    if rules is not None and _restricts(rules, opening):
        return _solve_under(rules, opening, table_t, hand_t, keep_t, objective, node_limit,
                            backend)
    return _solve_checked(table_t, hand_t, keep_t, objective, node_limit, backend)


#: the containers :func:`_solve_flat` takes (re-iterable, not strings)
_SEQUENCES = frozenset((tuple, list))

_INT_ONLY = frozenset((int,))

#: the kernel's cost vector (``rummy.solver.compiled._COST_ROW``; + 1: mirror image) and
#: the wildcard cost, by objective
_FIELDS = {o: (compiled._COST_ROW[o], _COSTS[o][1]) for o in _OBJECTIVES}


def _solve_flat(table: Any, hand: Any, keep: Any, objective: str,
                node_limit: int | None = None) -> tuple[Play | None, bool] | None:
    """:func:`solve` without a restricting rule set, by the compiled search, with the
    least Python around it: the cards flattened once, the race of :func:`_race` run on
    them (with a ``node_limit``, a positive ``int``: the position itself only, under that
    limit, as :func:`_race` does), the play read off the kernel's result. ``table``,
    ``hand`` and ``keep`` are tuples or lists (the table's melds too). Returns ``(play,
    optimal)`` as :class:`Solution` has them, or ``None`` when this path cannot answer
    (numba unusable, a card of another type, an input error to word, a move overflow):
    :func:`solve` then answers, with the same result or error."""
    if compiled._LOADED.get("k") is None and not compiled.usable():
        return None
    if not set(map(type, table)) <= _SEQUENCES:
        return None
    cards = list(_chain(table))
    n_table = len(cards)
    cards += hand
    cards += keep
    if not set(map(type, cards)) <= _INT_ONLY:
        return None  # solve words the error
    row, wcost = _FIELDS[objective]
    # compiled.run, inline
    ws, mv, (at_in, at_res, cap) = compiled.work()
    n = len(cards) + 10  # _kernels.I_FIELDS
    if n > cap:
        return None  # more cards than any legal input: solve words the error
    pack = compiled.packer(n)
    call = compiled._LOADED.get("e") or compiled._first_call
    limit = -1 if node_limit is None else min(node_limit, 1 << 62)
    for mirror, budget in _RACE if node_limit is None else _LIMITED:
        try:
            pack(mv, at_in, n, *([_MIRROR_ANY[c] for c in cards] if mirror else cards),
                 n_table, len(hand), len(keep), row + mirror, wcost, 0, 0, limit,
                 -1 if budget is None else budget, -1)
        except StructError:
            return None  # an integer beyond 64 bits: solve words the error
        size = call(ws)
        if size < 0:  # _kernels.R_ABORTED (-2): the next orientation; R_OVERFLOW (-3)
            if size == -2:
                continue
            return None  # solve runs the pure search
        res = mv[at_res:at_res + size].tolist()
        status = res[0]
        if status == 1:
            return _play_of(res, mirror), not res[1]
        # _kernels.ST_NONE, ST_KEEP, ST_LOST or ST_INPUT
        if status == 0:
            return None, not res[1]
        if status == 4:
            c = _mirrored(res[1]) if mirror else res[1]
            raise ValueError(f"keep card {format_card(c)} is not in the hand "
                             f"(or kept more often than it is held)")
        if status == 6:
            return None  # solve words the error
        raise RuntimeError("the solver's trace does not add up (a solver bug)")
    raise AssertionError("the last entry of _RACE has no budget")  # pragma: no cover


def _play_of(res: list[int], mirror: bool) -> Play:
    """The :class:`Play` of the result ``res`` of a play of the compiled search
    (:func:`rummy.solver.compiled.solve_position`), on the mirror image or not: the
    kernel parked the wildcards and put the melds in display order and ascending order
    (``_kernels._final_table``: as :func:`_finish_melds`, a 13-card sequence's ace
    first); here the mirror image is undone."""
    count, parked, jokers, n_added = res[3], res[4], res[5], res[6]
    q = 8 + n_added + count
    added = res[8:8 + n_added]
    if jokers + parked:
        added += [JOKER] * (jokers + parked)
    new_table: list[MeldCards] = []
    for n in res[8 + n_added:q]:
        new_table.append(tuple(res[q:q + n]))
        q += n
    if mirror:  # back to the position's own cards (_MIRROR is its own inverse)
        added = sorted(_mirrored(c) for c in added)
        new_table = sorted(canonical_meld(m) if len(m) == 13 else m
                           for m in map(_mirror_meld, new_table))
        return Play(table=tuple(new_table), cards=tuple(added), points=hand_points(added),
                    optimal=not res[1])
    # Play(table, cards, points, optimal) without the frozen dataclass's __init__ (four
    # object.__setattr__ calls): the slots set directly, the same object
    play = _new_object(Play)
    _SET_TABLE(play, tuple(new_table))
    _SET_CARDS(play, tuple(added))
    _SET_POINTS(play, res[7])
    _SET_OPTIMAL(play, not res[1])
    return play


_new_object = object.__new__
#: the slot setters of :class:`Play` (its fields, in order)
_SET_TABLE, _SET_CARDS, _SET_POINTS, _SET_OPTIMAL = (
    Play.__dict__[f.name].__set__ for f in fields(Play))


def _restricts(rules: RuleSet, opening: bool) -> bool:
    """Whether ``rules`` has a §11 variant that removes meld actions (for an opening
    action, the opening variants count too)."""
    return (rules.restricts_melds
            or (opening and (rules.opening_meld_per_player
                             or rules.opening_meld_min_points > 0)))


def _solve_checked(table_t: list[tuple[int, ...]], hand_t: tuple[int, ...],
                   keep_t: tuple[int, ...], objective: str, node_limit: int | None,
                   backend: str, by_hand: bool = False, ace_high: bool = True,
                   bound: int | None = None, nodes: list[int] | None = None) -> Solution:
    """:func:`solve` on checked inputs with a resolved backend; ``by_hand``: jokers are
    freed only by real cards from the hand (§11 ``joker_release="hand"``); without
    ``ace_high`` the ace is low only (§11 ``ace_high=false``). ``bound`` and ``nodes`` as
    in :func:`_best_play`."""
    if backend == "compiled":
        try:
            return _race(table_t, hand_t, keep_t, objective, node_limit,
                         compiled.solve_position, by_hand, ace_high, bound, nodes)
        except (compiled.Overflow, OSError):
            # a step with more moves than the compiled buffer, or numba could not write
            # its cache: the reference search gives the same answer (on checked cards:
            # solve leaves the ranges and copies to the compiled search)
            _check_cards(table_t, hand_t, keep_t)
    return _race(table_t, hand_t, keep_t, objective, node_limit, Search, by_hand, ace_high,
                 bound, nodes)


def _solve_under(rules: RuleSet, opening: bool, table_t: list[tuple[int, ...]],
                 hand_t: tuple[int, ...], keep_t: tuple[int, ...], objective: str,
                 node_limit: int | None, backend: str) -> Solution:
    """:func:`solve` under a rule set with §11 variants (see its ``rules`` argument)."""
    by_hand = rules.joker_release == "hand"
    spent = [0]
    sol = _solve_checked(table_t, hand_t, keep_t, objective, node_limit, backend, by_hand,
                         rules.ace_high, nodes=spent)
    if (rules.joker_moves == "locked" and sol.play is not None
            and any(c >= TABLE_JOKER_BASE for m in table_t for c in m)
            and not _legal_under(rules, False, table_t, hand_t, sol.play)):
        sol = _solve_locked(rules, table_t, hand_t, keep_t, objective,
                            None if node_limit is None else max(1, node_limit - spent[0]),
                            backend, sol)
        if sol.play is None and not sol.optimal:  # the budget ran out: any legal play
            sol = Solution(_fallback(rules, False, table_t, hand_t, keep_t, objective,
                                     node_limit, backend), False)
    if sol.play is not None and not _legal_under(rules, opening, table_t, hand_t, sol.play):
        sol = Solution(_fallback(rules, opening, table_t, hand_t, keep_t, objective,
                                 node_limit, backend), False)
    if opening and sol.play is not None and sol.play.points < rules.opening_meld_min_points:
        # the best play is below the opening minimum, so every play is (exact when the best
        # play was proven)
        sol = Solution(None, sol.optimal)
    return sol


def _solve_locked(rules: RuleSet, table_t: list[tuple[int, ...]], hand_t: tuple[int, ...],
                  keep_t: tuple[int, ...], objective: str, node_limit: int | None,
                  backend: str, free: Solution) -> Solution:
    """The exact best play under §11 ``joker_moves="locked"``
    (:func:`rummy.solver.locked.solve_locked`), given ``free``, the best play without the
    variant's restriction, which breaks it: its value, when proven, ends the enumeration
    as soon as a locked-legal play reaches it. ``node_limit``: the states left to spend.

    Raises:
        RuntimeError: the play built is not legal under ``rules`` (a solver bug).
    """
    cost, wcost = _cost_vectors(objective)

    def card_cost(c: int) -> int:
        return wcost if c == JOKER else cost[c]

    floor = 0
    if free.optimal and free.play is not None:
        left = Counter(hand_t)
        left.subtract(Counter(keep_t))
        left.subtract(Counter(free.play.cards))
        floor = sum(card_cost(c) * k for c, k in left.items())

    def rest(table: list[tuple[int, ...]], hand: tuple[int, ...], keep: tuple[int, ...],
             bound: int, limit: int | None) -> tuple[
                 tuple[list[tuple[int, ...]], tuple[int, ...]] | None, bool, int]:
        nodes = [0]
        sol = _solve_checked(table, hand, keep, objective, limit, backend, False,
                             rules.ace_high, bound, nodes)
        if sol.play is None:
            return None, sol.optimal, nodes[0]
        return (list(sol.play.table), sol.play.cards), sol.optimal, nodes[0]

    found = locked_search.solve_locked(table_t, hand_t, keep_t, cost, wcost, search=rest,
                                       node_limit=node_limit, ace_high=rules.ace_high,
                                       floor=floor)
    if found.table is None:
        return Solution(None, found.optimal)
    new_table = tuple(sorted(canonical_meld(m) for m in found.table))
    play = Play(table=new_table, cards=found.cards, points=hand_points(found.cards),
                optimal=found.optimal)
    try:
        added = check_action(table_t, hand_t, new_table, rules=rules)
    except IllegalMoveError as e:  # pragma: no cover - a solver bug
        raise RuntimeError(f"the locked-joker search built an illegal play: {e}") from e
    if tuple(sorted(added)) != found.cards:  # pragma: no cover - a solver bug
        raise RuntimeError("the locked-joker search miscounted the cards it adds")
    return Solution(play, found.optimal)


def _fallback(rules: RuleSet, opening: bool, table_t: list[tuple[int, ...]],
              hand_t: tuple[int, ...], keep_t: tuple[int, ...], objective: str,
              node_limit: int | None, backend: str) -> Play | None:
    """The best legal play among restricted searches, when the unrestricted best play
    breaks a variant the search checks rather than models (the per-player opening, with
    any other variant): with ``joker_moves="locked"`` the melds holding a joker stand
    aside unchanged while the rest is searched; with
    ``ace_high=False`` the hand's aces stay in the hand; and the hand's own new melds
    beside the unchanged table. Legal, not proven best (``None``: none of them is legal)."""
    by_hand = rules.joker_release == "hand"
    aces = tuple(c for c in hand_t if c < 52 and c % 13 == 0)
    keeps = [keep_t] + ([keep_t + aces] if not rules.ace_high and aces else [])
    aside: list[tuple[int, ...]] = []
    rest = table_t
    if rules.joker_moves == "locked":
        aside = [m for m in table_t if any(c >= TABLE_JOKER_BASE for c in m)]
        rest = [m for m in table_t if not any(c >= TABLE_JOKER_BASE for c in m)]
    tries: list[tuple[list[tuple[int, ...]], list[tuple[int, ...]], tuple[int, ...]]] = []
    for keep in keeps:
        if aside:
            tries.append((rest, aside, keep))
        if keep is not keep_t:
            tries.append((table_t, [], keep))
        tries.append(([], table_t, keep))  # the hand's own melds beside the table
    best: Play | None = None
    for searched, kept, keep in tries:
        try:
            own = _solve_checked(searched, hand_t, keep, objective, node_limit, backend,
                                 by_hand, rules.ace_high).play
        except ValueError:
            continue
        if own is None or (best is not None and own.points <= best.points):
            continue
        table = tuple(sorted(tuple(m) for m in kept) + list(own.table))
        play = Play(table=table, cards=own.cards, points=own.points, optimal=False)
        if _legal_under(rules, opening, table_t, hand_t, play):
            best = play
    return best


def _legal_under(rules: RuleSet, opening: bool, table_t: list[tuple[int, ...]],
                 hand_t: tuple[int, ...], play: Play) -> bool:
    """Whether ``play`` is a legal meld action under ``rules`` (check_action with the
    variants, and the hand-only meld of ``opening_meld_per_player`` when ``opening``; not
    the opening minimum)."""
    from rummy.decide import check_opening_action  # the rules of R5.5's variants
    try:
        added = check_action(table_t, hand_t, play.table, rules=rules)
        # the opening minimum is applied exactly by the caller, after this check
        check_opening_action(replace(rules, opening_meld_min_points=0), tuple(table_t),
                             play.table, added, opening=opening)
    except IllegalMoveError:
        return False
    return True


def _plain_ints(table: list[tuple[int, ...]], hand: tuple[int, ...],
                keep: tuple[int, ...]) -> bool:
    """True when every card is a plain ``int`` (not a bool, float, string, ...): the
    type part of :func:`_check_cards`, fast; the compiled search checks the rest."""
    types = set(map(type, hand))
    types.update(map(type, keep))
    for m in table:
        types.update(map(type, m))
    return types <= _INT_ONLY


def _check_cards(table: list[tuple[int, ...]], hand: tuple[int, ...],
                 keep: tuple[int, ...]) -> None:
    """ValueError unless every card is an index in range (R1.4 encoding, see
    :mod:`rummy.cards`) and no card has more than ``MAX_COUNT`` (7) copies counting every
    joker (the search packs counts in 3 bits; a two-deck game has at most 2 + 2)."""
    for meld in table:
        for c in meld:
            if not isinstance(c, int) or isinstance(c, bool) or not (
                    0 <= c < 52 or TABLE_JOKER_BASE <= c < TABLE_JOKER_BASE + 52):
                raise ValueError(f"bad table card index {c!r}")
    for c in hand + keep:
        if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c <= JOKER:
            raise ValueError(f"bad hand card index {c!r}")
    copies = Counter(c if c < 52 else c - TABLE_JOKER_BASE for m in table for c in m)
    copies.update(c for c in hand if c < 52)
    jokers = sum(1 for m in table for c in m if c >= TABLE_JOKER_BASE) + hand.count(JOKER)
    most = max(copies.values(), default=0)
    if most + jokers > MAX_COUNT:
        raise ValueError(f"more than {MAX_COUNT} copies of one card counting every joker "
                         f"({most} + {jokers} jokers; the solver packs counts in 3 bits, and "
                         "a real two-deck game has at most 2 copies + 2 jokers)")


#: a search class, or the compiled whole-position search (compiled.solve_position)
_Engine = type[Search] | Callable[..., list[int]]

#: mirror image of the line of a suit: A stays, 2 <-> K, 3 <-> Q, ..., 7 <-> 8. Sequences map
#: to sequences (A-2-3 <-> Q-K-A), groups to groups: a position and its mirror image have the
#: same best play, mirrored, when the card costs are mirrored too.
_MIRROR = tuple(s * 13 + (13 - r) % 13 for s in range(4) for r in range(13))

#: (mirror the line?, state budget) tried in turn by :func:`_race`; the last has no budget
_RACE: tuple[tuple[bool, int | None], ...] = (
    (False, 4_000), (True, 16_000), (False, 64_000), (True, 256_000), (False, None))


#: :data:`_RACE` under a node limit: the position itself, no state budget
_LIMITED: tuple[tuple[bool, int | None], ...] = ((False, None),)


def _mirrored(c: int) -> int:
    """:data:`_MIRROR` for any card index (hand joker, table joker declared c, real card)."""
    if c == JOKER:
        return c
    if c >= TABLE_JOKER_BASE:
        return TABLE_JOKER_BASE + _MIRROR[c - TABLE_JOKER_BASE]
    return _MIRROR[c]


def _race(table: list[tuple[int, ...]], hand: tuple[int, ...], keep: tuple[int, ...],
          objective: str, node_limit: int | None,
          engine: _Engine, by_hand: bool = False, ace_high: bool = True,
          bound: int | None = None, nodes: list[int] | None = None) -> Solution:
    """:func:`_best_play` on the position or on its mirror image, whichever finishes first.

    The search sweeps the line from the low ace up; on some positions (two freed table
    jokers, above all) the mirror image needs a hundredth of the states, on others more.
    Each orientation gets a state budget in turn (:data:`_RACE`, growing 4x), the last none:
    the answer is exact either way and, the budgets being counted in states, the same on
    every run and both backends. With a ``node_limit`` (bots) only the position itself is
    searched, under that limit.
    """
    if node_limit is not None:
        return _best_play(table, hand, keep, objective, node_limit, engine, by_hand=by_hand,
                          ace_high=ace_high, bound=bound, nodes=nodes)
    # the compiled whole-position search straight away (one Python frame less per call)
    play: Callable[..., Solution] = _best_play if isinstance(engine, type) \
        else _compiled_play
    for mirror, budget in _RACE:
        if mirror and not ace_high:
            continue  # the mirror image of "the ace is low only" is "high only": not here
        try:
            return play(table, hand, keep, objective, None, engine, mirror,
                        budget, by_hand, ace_high, bound, nodes)
        except Aborted:
            continue
    raise AssertionError("the last entry of _RACE has no budget")  # pragma: no cover


_chain = chain.from_iterable

#: :func:`_mirrored` of every card index 0..104
_MIRROR_ANY = tuple(_mirrored(c) for c in range(TABLE_JOKER_BASE + 52))


def _best_play(table: list[tuple[int, ...]], hand: tuple[int, ...], keep: tuple[int, ...],
               objective: str, node_limit: int | None,
               engine: _Engine, mirror: bool = False, abort: int | None = None,
               by_hand: bool = False, ace_high: bool = True, bound: int | None = None,
               nodes: list[int] | None = None) -> Solution:
    """:func:`solve` with the search class ``engine`` (or the compiled whole-position
    search, :func:`rummy.solver.compiled.solve_position`), on inputs already checked by
    :func:`_check_cards`; with ``mirror``, on the mirror image of the position (the play
    is mapped back); with ``abort``, raises :class:`Aborted` after that many states; with
    ``by_hand``, a table joker is freed only by a real card from the hand (§11
    ``joker_release="hand"``: the table's own copies free none).

    With ``bound``, only a play whose hand cards left (outside ``keep``) cost less than
    ``bound`` (costs of :func:`_cost_vectors`) is found, else ``None``; a bound above the
    cost of the whole hand admits the arrangement that adds no card (a play with empty
    ``cards``: the caller adds cards elsewhere, R5.1). ``nodes``, if given, has the states
    expanded added to its first element."""
    if not isinstance(engine, type):  # the compiled whole-position search
        return _compiled_play(table, hand, keep, objective, node_limit, engine, mirror, abort,
                              by_hand, ace_high, bound, nodes)
    cost, wcost = _cost_vectors(objective)
    if mirror:
        table = [tuple(_mirrored(c) for c in m) for m in table]
        hand = tuple(_mirrored(c) for c in hand)
        keep = tuple(_mirrored(c) for c in keep)
        cost = tuple(cost[_MIRROR[c]] for c in range(52))
    used = 0
    melds = table
    table_cards = [c for m in melds for c in m]
    hand_l = list(hand)
    real_table = Counter(c for c in table_cards if c < 52)
    before = Counter(c - TABLE_JOKER_BASE for c in table_cards if c >= TABLE_JOKER_BASE)
    hand_c = Counter(hand_l)
    keep_c = Counter(keep)
    for c, k in keep_c.items():
        if hand_c[c] < k:
            raise ValueError(f"keep card {format_card(c)} is not in the hand "
                             f"(or kept more often than it is held)")
        hand_c[c] -= k
    hand_jokers = hand_c.pop(JOKER, 0)
    real_hand = Counter({c: k for c, k in hand_c.items() if k > 0})

    all_hand_cost = sum(cost[c] * k for c, k in real_hand.items()) + wcost * hand_jokers
    # Phase A: table jokers keep their cards, hand jokers are only parked at the end; a quick
    # feasible bound. Phase B: every R5.8 choice with wildcards placed anywhere, searching
    # only for plays strictly better than the best so far (exact).
    best_left = all_hand_cost  # playing nothing (R5.1: not a play)
    if bound is not None:
        best_left = min(bound, all_hand_cost + 1)
    best: tuple[Search, int, dict[int, int]] | None = None
    exceeded = False
    phases: list[tuple[dict[int, int], bool]] = []
    if before or hand_jokers:
        phases.append(({}, False))
    releasing = Counter() if by_hand else real_table  # the real cards that free jokers
    phases += [(freed, True) for freed in _joker_options(releasing, before, real_hand)]
    for freed, fill in phases:
        if not best_left:
            break  # every hand card is played: nothing can be better
        if fill and not hand_jokers and not any(freed.values()) and phases[0][1] is False:
            continue  # no wildcard: the same search as phase A
        mand = [0] * 52
        opt = [0] * 52
        for c, k in real_table.items():
            mand[c] += k
        for c, k in before.items():
            mand[c] += k - freed.get(c, 0)
        for c, k in real_hand.items():
            opt[c] += k
        for c, f in freed.items():
            forced = max(0, f - releasing[c])
            mand[c] += forced
            opt[c] -= forced
        wm = sum(freed.values())
        wild = wm + hand_jokers if fill else 0
        dead = _prune_dead(mand, opt, wild)
        dead_cost = sum(map(mul, cost, dead))
        if dead_cost >= best_left:
            continue
        # lower bounds: with only w wildcards left, more hand cards are dead
        bounds = []
        for w in range(wild):
            dead_w = _prune_dead(mand, list(opt), w)
            bounds.append(list(map(mul, cost, dead_w)))
        if abort is not None and used >= abort:
            raise Aborted
        search = engine(mand, opt, cost, wcost, wild, node_limit, fill=fill,
                        ace_high=ace_high,
                        dead_costs=bounds, abort=None if abort is None else abort - used)
        st = pack_state(wm, hand_jokers)
        dropped = search.solve_root(st, best_left - dead_cost)
        used += search.nodes
        if nodes is not None:
            nodes[0] += search.nodes
        exceeded = exceeded or search.exceeded
        if dropped + dead_cost < best_left:
            best_left = dropped + dead_cost
            best = (search, st, freed)
    if best is None:
        return Solution(None, not exceeded)
    search, st, freed = best
    steps, end = search.trace(st)
    new_table = _build_table(search, steps, end, before, freed, ace_high)
    new_real = Counter(c for m in new_table for c in m if c < 52)
    jokers_added = sum(1 for m in new_table for c in m if c >= TABLE_JOKER_BASE) \
        - sum(before.values())
    added = list((new_real - real_table).elements()) + [JOKER] * jokers_added
    if mirror:  # back to the position's own cards (_MIRROR is its own inverse)
        added = [_mirrored(c) for c in added]
        # a sequence read backwards is in order again (2 <-> K, ...); a group stays
        new_table = [_mirror_meld(m) for m in new_table]
    # every meld is in display order already (_build_table), but a 13-card sequence, whose
    # ace the sweep may put last (R4.5 puts it first)
    new_table = [canonical_meld(m) if len(m) == 13 else m for m in new_table]
    play = Play(table=tuple(sorted(new_table)), cards=tuple(sorted(added)),
                points=hand_points(added), optimal=not exceeded)
    return Solution(play, not exceeded)


def _compiled_play(table: list[tuple[int, ...]], hand: tuple[int, ...],
                   keep: tuple[int, ...], objective: str, node_limit: int | None,
                   engine: Callable[..., list[int]], mirror: bool, abort: int | None,
                   by_hand: bool, ace_high: bool, bound: int | None = None,
                   nodes: list[int] | None = None) -> Solution:
    """:func:`_best_play` by the compiled whole-position search ``engine``
    (:func:`rummy.solver.compiled.solve_position`): the same phases, searches and play,
    with one call into machine code; here only the play is put together (wildcards
    parked, the mirror image undone, melds in display order)."""
    cards = [c for m in table for c in m]
    n_table = len(cards)
    cards += hand
    cards += keep
    if mirror:
        cards = [_mirrored(c) for c in cards]
        hand = tuple(_mirrored(c) for c in hand)
        keep = tuple(_mirrored(c) for c in keep)
    res = engine(cards, (n_table, len(hand), len(keep)), objective, mirror, by_hand,
                 ace_high, node_limit, abort, bound)
    status = res[0]
    if nodes is not None:
        nodes[0] += res[2]
    if status != 1:  # not a play: _kernels.ST_NONE, ST_KEEP, ST_LOST or ST_INPUT
        if status == 0:
            return Solution(None, not res[1])
        if status == 4:
            c = _mirrored(res[1]) if mirror else res[1]
            raise ValueError(f"keep card {format_card(c)} is not in the hand "
                             f"(or kept more often than it is held)")
        if status == 6:
            _check_cards(table, hand, keep)
            raise ValueError("a card out of range or more than 7 copies of one card")
        raise RuntimeError("the solver's trace does not add up (a solver bug)")
    play = _play_of(res, mirror)
    return Solution(play, play.optimal)


def _mirror_meld(m: MeldCards) -> MeldCards:
    """The mirror image of a meld in display order, in display order (R4.5)."""
    out = tuple(_mirrored(c) for c in m)
    a, b = (c - TABLE_JOKER_BASE if c >= TABLE_JOKER_BASE else c for c in out[:2])
    return out if a % 13 == b % 13 else out[::-1]


def _build_table(search: Search,
                 steps: list[tuple[int, tuple[int, ...]]], end: int,
                 before: Counter[int], freed: dict[int, int],
                 ace_high: bool = True) -> list[MeldCards]:
    """Turn the traced decisions into table melds with physical cards, each in display
    order (R4.5; a 13-card sequence may have its ace last): the one builder,
    :func:`rummy.solver.build.build_melds` (compiled by the compiled backend), then the
    wildcards left over parked (:func:`_finish_melds`)."""
    kept = [0] * 52  # table jokers that keep their declared card (R5.7)
    for c, k in before.items():
        kept[c] = k - freed.get(c, 0)
    return _finish_melds(search.melds(steps, kept), search.parked(end), ace_high)


def _finish_melds(done: list[list[int]], wildcards: int,
                  ace_high: bool = True) -> list[MeldCards]:
    """The melds of the sweep as table melds: A..K..A cut in two, ``wildcards`` parked,
    each meld in display order (a 13-card sequence may have its ace last)."""
    # A..K..A (14 cards) is two legal sequences (R4.3); split before parking wildcards
    melds_l: list[list[int]] = []
    for r in done:
        if len(r) == 14:
            melds_l.extend((r[:7], r[7:]))
        else:
            melds_l.append(r)
    parked = _park(melds_l, wildcards, ace_high)
    return [canonical_meld(m) if id(m) in parked else tuple(m) for m in melds_l]


def _line(m: list[int]) -> tuple[int, int, int] | None:
    """``(suit, lowest, highest)`` line position (0..13, 13 = high ace) of a sequence of
    table cards, or ``None`` for a group (R4.2/R4.3)."""
    eff = [c - TABLE_JOKER_BASE if c >= TABLE_JOKER_BASE else c for c in m]
    ranks = {e % 13 for e in eff}
    if len(ranks) == 1:
        return None
    pos = sorted(r if r or 12 not in ranks or len(m) == 13 else 13 for r in ranks)
    return eff[0] // 13, pos[0], pos[-1]


def _park(melds: list[list[int]], n: int, ace_high: bool = True) -> set[int]:
    """Add ``n`` wildcards to ``melds`` (legal melds, changed in place) where they keep
    every meld legal, as :meth:`Search.finish` counts them (R4.4, R5.6, R5.9).

    The search parks a wildcard when the new table has a sequence, or when 3 or more are
    left (a meld of jokers alone), or into a group of 3 (as its missing suit). Every
    sequence can take one more card: one of fewer than 13 cards at an end (above its
    highest card, or below its lowest when it ends with the high ace, or with the K when
    the ace is low only, §11 ``ace_high=false``), one of 13 cards
    (A..K, no free end, R4.3) after it is cut into legal pieces of 6 and 7 cards.

    Returns:
        The ``id`` of every meld it changed or added (no longer in display order).

    Raises:
        RuntimeError: no place was found (a solver bug: the search promised one).
    """
    touched: set[int] = set()
    while n:
        for seq in melds:
            ln = _line(seq) if len(seq) < 13 else None
            if ln is not None:
                suit, lo, hi = ln
                p = hi + 1 if hi < (13 if ace_high else 12) else lo - 1
                seq.append(TABLE_JOKER_BASE + suit * 13 + p % 13)
                touched.add(id(seq))
                n -= 1
                break
        else:
            ln = None
        if ln is not None:
            continue
        full = next((m for m in melds if _line(m) is not None), None)
        if full is None:
            break
        # a sequence of 13 has no free end: cut it in two (6 and 7 cards, R4.3)
        melds.remove(full)
        ordered = sorted(full, key=lambda c: (c - TABLE_JOKER_BASE if c >= TABLE_JOKER_BASE
                                              else c) % 13)
        melds.extend((ordered[:6], ordered[6:]))
        touched.update((id(melds[-2]), id(melds[-1])))
    if n >= 3:
        melds.append([TABLE_JOKER_BASE + r for r in range(n)])  # *AS *2S *3S ...
        n = 0
    while n:
        for m in melds:
            if len(m) == 3 and _line(m) is None:
                eff = [c - TABLE_JOKER_BASE if c >= TABLE_JOKER_BASE else c for c in m]
                suit = next(s for s in range(4) if all(e // 13 != s for e in eff))
                m.append(TABLE_JOKER_BASE + suit * 13 + eff[0] % 13)
                touched.add(id(m))
                n -= 1
                break
        else:
            raise RuntimeError("no room to park a wildcard")
    return touched


class Unproven(ValueError):
    """The search cannot prove the best play under a rule set's variants (those it checks
    rather than models: see :func:`solve`'s ``rules``)."""


def best_points(table: Iterable[Iterable[int]], hand: Iterable[int], *,
                rules: RuleSet | None = None, opening: bool = False) -> int:
    """The ``best_play`` conformance value: the largest R1.5 points one legal meld action
    adds to ``table`` from ``hand`` under ``rules`` (``opening``: the seat's opening meld);
    0 when no legal meld action exists.

    Raises:
        ValueError: as :func:`solve`; :class:`Unproven` when it cannot prove the value under
            ``rules`` (a variant it checks rather than models, whose unrestricted best play
            breaks it: see :func:`solve`'s ``rules``).
    """
    sol = solve(table, hand, rules=rules, opening=opening)
    if not sol.optimal:
        changed = (rules or RuleSet()).changed()
        raise Unproven("the solver cannot prove the best play under these rule variants "
                         f"({', '.join(f'{k}={v}' for k, v in changed.items())})")
    return sol.play.points if sol.play is not None else 0


def format_play(play: Play) -> str:
    """One-line text of a play's new table (melds separated by `` | ``)."""
    return table_text(play.table)


def warm() -> bool:
    """Solve one small position (a table joker to free, R5.8) under each objective, so that
    the compiled search is compiled, or loaded from numba's on-disk cache, in this process
    now rather than inside the first real call (about 1 s from the cache, up to a minute
    when it compiles on a loaded machine). Call it once in a process before forking
    workers (Celery's ``worker_init``) or before a timed loop. Returns whether the compiled
    backend is in use (False: the pure search, which has nothing to warm).

    Raises:
        Nothing for a missing numba: the pure search answers instead.
    """
    from rummy.cards import parse_cards
    from rummy.melds import parse_table

    table = parse_table(["3S 4S 5S", "7H 7D *7C"])
    hand = parse_cards("6S 7S 7C 2D 3D 4D 9C *".split())
    for objective in ("points", "cards"):
        solve(table, hand, objective=objective)
    return compiled.usable()


__all__ = ["Play", "Solution", "best_play", "best_points", "format_play", "solve", "warm"]
