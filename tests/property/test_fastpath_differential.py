"""Adversarial differential tests of the engine's fast paths (exactness).

* :func:`rummy.melds.check_and_canonical` (a fast path for meld actions that break no
  rule) against :func:`rummy.melds._check_and_canonical_reference` on positions built to
  reach every branch: legal tables of two decks with declared jokers and equal melds,
  fresh melds, lay-offs, joker swaps (R5.8), whole-table rearrangements, splits, and
  mutations of each (cards missing, moved, doubled, undeclared jokers, values that are
  not cards, empty melds, lists for tuples), under every §11 variant that changes R5.
* :func:`rummy.decide.step` (dispatch by command class, the turn passing on without the
  automatic-event loop) against the first written algorithm: the command's direct events
  (``_primary``), evolved, then :func:`rummy.decide.settle`; over random games under
  every rule variant with random illegal, lifecycle (R13) and subclassed commands mixed
  in, and seats given as an ``int`` subclass.

The bounded versions run in the normal suite (a few seconds each); the ``slow`` ones run
many more positions and games.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

import pytest

from rummy.cards import JOKER, TABLE_JOKER_BASE, physical
from rummy.commands import CreateGame, Draw, EndTurn, Knock, Leave, Meld, Pass, Reclaim
from rummy.decide import _primary, default_command, settle, step, timeout_step
from rummy.errors import IllegalMoveError, NotationError
from rummy.evolve import evolve
from rummy.lifecycle import timeout_events
from rummy.melds import (
    VALID_MELDS,
    VALID_MELDS_ACE_LOW,
    _check_and_canonical_reference,
    canonical_meld,
    check_and_canonical,
    is_valid_meld,
)
from rummy.rules import RuleSet

TJ = TABLE_JOKER_BASE
_MASKS = sorted(VALID_MELDS)
_MASKS_ACE_LOW = sorted(VALID_MELDS_ACE_LOW)
_MELD_RULES = [None, RuleSet(), RuleSet(ace_high=False), RuleSet(joker_release="hand"),
               RuleSet(joker_moves="locked"),
               RuleSet(joker_moves="locked", joker_release="hand", ace_high=False)]


def _outcome(f: Any, *args: Any) -> tuple[Any, ...]:
    try:
        r = f(*args)
    except Exception as e:  # noqa: BLE001 - every error must be the same
        return ("err", type(e).__name__, getattr(e, "rule", None), str(e),
                repr(getattr(e, "meld", None)))
    return ("ok", r, [type(m) for m in r[1]])


def _coverable(mask: int, pool: dict[int, int]) -> bool:
    missing = sum(1 for c in range(52) if mask >> c & 1 and pool.get(c, 0) <= 0)
    return missing <= pool.get(JOKER, 0)


def _realize(rng: random.Random, mask: int, pool: dict[int, int]) -> tuple[int, ...]:
    """The cards of a meld of effective-card ``mask``, taken from ``pool`` (physical card
    counts, ``JOKER`` for jokers) where it can, else made up (real or declared joker)."""
    cards = []
    for c in range(52):
        if mask >> c & 1:
            if pool.get(c, 0) > 0 and rng.random() < 0.85:
                pool[c] -= 1
                cards.append(c)
            elif pool.get(JOKER, 0) > 0:
                pool[JOKER] -= 1
                cards.append(TJ + c)
            else:
                cards.append(c if rng.random() < 0.5 else TJ + c)
    rng.shuffle(cards)
    return tuple(cards)


def _mutate(rng: random.Random, table: Any) -> list[list[Any]]:
    t = [list(m) for m in table]
    if not t:
        return t
    k = rng.randrange(10)
    m = rng.choice(t)
    if k == 0 and m:
        m.pop(rng.randrange(len(m)))
    elif k == 1 and len(t) > 1:
        a, b = rng.sample(range(len(t)), 2)
        if t[a]:
            t[b].append(t[a].pop(rng.randrange(len(t[a]))))
    elif k == 2:
        m.append(rng.randrange(TJ + 52))
    elif k == 3 and m:
        m[rng.randrange(len(m))] = rng.choice(
            [JOKER, TJ + rng.randrange(52), rng.randrange(52), -1, TJ + 52, 2.0, True, None])
    elif k == 4:
        t.append([])
    elif k == 5:
        t.pop(rng.randrange(len(t)))
    elif k == 6:
        t.append(list(m))
    elif k == 8 and m:
        m[rng.randrange(len(m))] = rng.choice(m)
    else:  # a joker redeclared (7) or replaced by its real card (9)
        for i, c in enumerate(m):
            if type(c) is int and c >= TJ:
                m[i] = TJ + rng.randrange(52) if k == 7 else c - TJ
                break
    return t


def _new_table(rng: random.Random, table: tuple[tuple[int, ...], ...],
               hand: tuple[int, ...], depth: int = 0) -> Any:
    k = rng.randrange(6) if depth == 0 else rng.randrange(5)
    t: list[Any] = list(table)
    if k == 0:  # fresh melds from the hand
        pool: dict[int, int] = {}
        for c in hand:
            pool[c] = pool.get(c, 0) + 1
        for _ in range(rng.randrange(1, 3)):
            ok = [m for m in _MASKS if _coverable(m, pool)]
            if ok:
                t.append(_realize(rng, rng.choice(ok), pool))
    elif k == 1:  # lay-offs
        for _ in range(rng.randrange(1, 3)):
            if not t or not hand:
                break
            i = rng.randrange(len(t))
            c = rng.choice(hand)
            for x in ([c] if c != JOKER else [TJ + d for d in range(52)]):
                if is_valid_meld(t[i] + (x,)):
                    t[i] = t[i] + (x,)
                    break
    elif k == 2:  # the whole table rearranged, with some hand cards
        pool = {}
        for m in table:
            for c in m:
                pool[physical(c)] = pool.get(physical(c), 0) + 1
        for c in hand:
            if rng.random() < 0.5:
                pool[c] = pool.get(c, 0) + 1
        t = []
        for _ in range(rng.randrange(1, len(table) + 3)):
            ok = [m for m in _MASKS if _coverable(m, pool)]
            if not ok:
                break
            t.append(_realize(rng, rng.choice(ok), pool))
        if rng.random() < 0.5:
            t += [m for m in table if rng.random() < 0.6]
    elif k == 3:  # a joker swapped for its real card from the hand, laid elsewhere
        for i, m in enumerate(t):
            j = next((j for j, c in enumerate(m) if c >= TJ and c - TJ in hand), None)
            if j is not None:
                t[i] = m[:j] + (m[j] - TJ,) + m[j + 1:]
                target = rng.randrange(len(t))
                for d in rng.sample(range(52), 52):
                    if is_valid_meld(t[target] + (TJ + d,)):
                        t[target] = t[target] + (TJ + d,)
                        break
                else:
                    t.append((TJ + rng.randrange(52),))
                break
    elif k == 4:  # a long meld split, a meld added
        for i, m in enumerate(t):
            if len(m) >= 6 and rng.random() < 0.7:
                cm = canonical_meld(m)
                cut = rng.randrange(3, len(m) - 2)
                t[i:i + 1] = [cm[:cut], cm[cut:]]
                break
        if hand:
            pool = {c: hand.count(c) for c in hand}
            t.append(_realize(rng, rng.choice(_MASKS), pool))
    else:
        t = _mutate(rng, _new_table(rng, table, hand, depth + 1))
    if rng.random() < 0.2:
        t = _mutate(rng, t)
    r = rng.random()
    if r < 0.1:
        t = [list(m) for m in t]
    elif r < 0.2:
        t = [tuple(rng.sample(m, len(m))) for m in t]
    elif r < 0.25:  # some melds of a tuple subclass, some lists
        t = [rng.choice((_Named, list, tuple))(m) for m in t]
    rng.shuffle(t)
    return t if rng.random() < 0.5 else tuple(t)


class _Named(tuple):  # type: ignore[type-arg]
    """A client's named tuple standing for a meld."""


def _position(rng: random.Random, masks: list[int]) -> tuple[Any, Any]:
    """A legal table (I2: of melds legal under the rules, ``masks``) and a hand."""
    table = tuple(sorted(canonical_meld(_realize(rng, rng.choice(masks), {}))
                         for _ in range(rng.randrange(0, 9))))
    if table and rng.random() < 0.3:  # two decks: two equal melds
        table = tuple(sorted(table + (rng.choice(table),)))
    hand = [rng.randrange(53) for _ in range(rng.randrange(0, 20))]
    hand += [c - TJ for m in table for c in m if c >= TJ and rng.random() < 0.5]
    if rng.random() < 0.3:
        hand.append(JOKER)
    return table, (tuple(sorted(hand)) if rng.random() < 0.8 else hand)


def _meld_differential(n: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    seen: dict[str, int] = {}
    for _ in range(n):
        rules = rng.choice(_MELD_RULES)
        table, hand = _position(rng, _MASKS if rules is None or rules.ace_high
                                else _MASKS_ACE_LOW)
        new = _new_table(rng, table, tuple(hand))
        got = _outcome(check_and_canonical, table, hand, new, rules)
        want = _outcome(_check_and_canonical_reference, table, hand, new, rules)
        assert got == want, (table, hand, new, rules)
        key = "ok" if got[0] == "ok" else str(got[2])
        seen[key] = seen.get(key, 0) + 1
    return seen


def test_meld_fast_path_is_the_reference_on_adversarial_positions() -> None:
    """R5.1-R5.8, R1.4, R4.x: accept/refuse, canonical table, added cards, error class,
    rule and message are the reference's on every position."""
    seen = _meld_differential(2500, 1)
    assert seen["ok"] > 200
    assert {"R5.1", "R5.2", "R5.3", "R5.4", "R5.7", "R1.4"} <= set(seen)


@pytest.mark.slow
def test_meld_fast_path_is_the_reference_on_many_positions() -> None:
    for seed in range(2, 8):
        _meld_differential(20000, seed)


def test_list_melds_are_accepted_on_every_path() -> None:
    """I2, R5.7: melds given as lists (a JSON client's) are put in display order whether
    the fast path or the reference decides (the reference used to raise TypeError from
    ``canonical_table`` when it accepted one, e.g. under ``joker_moves="locked"`` with a
    joker meld changed, or with a dict for a meld)."""
    table = ((0, 1, TJ + 2),)  # AS 2S *3S
    hand = (3, 13, 26, 39)  # 4S AH AD AC
    new = [[3, 0, TJ + 2, 1]]  # 4S laid off on the joker meld, as a list
    want = ((3,), ((0, 1, TJ + 2, 3),))
    for rules in (None, RuleSet(joker_moves="locked"), RuleSet(joker_release="hand")):
        assert check_and_canonical(table, hand, new, rules) == want
        assert _check_and_canonical_reference(table, hand, new, rules) == want
    both = [list(table[0]), [39, 13, 26]]
    assert _check_and_canonical_reference(table, hand, both, None) == \
        ((13, 26, 39), ((0, 1, TJ + 2), (13, 26, 39)))


def test_an_unchanged_meld_of_a_tuple_subclass_is_recorded_as_a_tuple() -> None:
    """I2: a meld of the new table equal to one of the table but of a tuple subclass (a
    client's named tuple) is recorded as a plain tuple on both paths (the fast path kept
    the subclass instance)."""
    class Named(tuple):  # type: ignore[type-arg]
        pass

    table = ((0, 1, 2),)
    hand = (13, 26, 39)
    for new in ([Named((0, 1, 2)), (13, 26, 39)], [Named((0, 1, 2)), [13, 26, 39]]):
        for f in (check_and_canonical, _check_and_canonical_reference):
            added, got = f(table, hand, new, None)
            assert (added, got) == ((13, 26, 39), ((0, 1, 2), (13, 26, 39)))
            assert [type(m) for m in got] == [tuple, tuple]


# ------------------------------------------------------------------------ the engine step


@dataclass(frozen=True, slots=True)
class _Draw(Draw):
    pass


@dataclass(frozen=True, slots=True)
class _Meld(Meld):
    pass


@dataclass(frozen=True, slots=True)
class _Pass(Pass):
    pass


class _Seat(int):
    pass


_GAME_RULES = [
    {}, {"ace_high": False}, {"joker_release": "hand"}, {"joker_moves": "locked"},
    {"opening_meld_per_player": True}, {"opening_meld_min_points": 30},
    {"opening_meld_per_player": True, "opening_meld_min_points": 20},
    {"knock_timing": "start"}, {"max_draws_per_turn": 1}, {"max_draws_per_turn": 10},
    {"hand_size": 20, "knock_threshold": 1000}, {"knock_threshold": 0}, {"target_score": 1},
    {"hand_size": 3, "knock_threshold": 50, "target_score": 30},
]


def _reference_step(state: Any, cmd: Any) -> tuple[Any, list[Any]]:
    """The step as first written: direct events, evolved, then every automatic event."""
    events = _primary(state, cmd)
    s = state
    for e in events:
        s = evolve(s, e)
    s, more = settle(s)
    return s, events + more


def _reference_timeout(state: Any, limit: int) -> tuple[Any, list[Any]]:
    """:func:`rummy.decide.timeout_step` on :func:`_reference_step`."""
    s, events = _reference_step(state, default_command(state))
    for e in timeout_events(state, s, limit, "basic"):
        events.append(e)
        s = evolve(s, e)
    return s, events


def _result(f: Any, s: Any, cmd: Any) -> tuple[Any, ...]:
    try:
        return ("ok",) + tuple(f(s, cmd))
    except Exception as e:  # noqa: BLE001 - every error must be the same
        return ("err", type(e).__name__, getattr(e, "rule", None), str(e))


def _melds_of(rng: random.Random, s: Any) -> list[Any]:
    hand = s.hands[s.turn]
    table = list(s.table)
    real = sorted({c for c in hand if c != JOKER})
    out: list[Any] = [table + [m] for m in itertools.combinations(real, 3) if is_valid_meld(m)]
    if JOKER in hand:
        for a, b in itertools.combinations(real[:8], 2):
            out += [table + [(a, b, TJ + d)] for d in range(52)
                    if is_valid_meld((a, b, TJ + d))]
    for i, m in enumerate(table):
        for c in set(hand):
            x = next((x for x in ([c] if c != JOKER else [TJ + d for d in range(52)])
                      if is_valid_meld(m + (x,))), None)
            if x is not None:
                out.append(table[:i] + [m + (x,)] + table[i + 1:])
        for j, c in enumerate(m):  # a joker swapped, laid on another meld
            if c >= TJ and c - TJ in hand:
                base = table[:i] + [m[:j] + (c - TJ,) + m[j + 1:]] + table[i + 1:]
                for k, m2 in enumerate(base):
                    d = next((d for d in range(52) if is_valid_meld(m2 + (TJ + d,))), None)
                    if d is not None:
                        out.append(base[:k] + [m2 + (TJ + d,)] + base[k + 1:])
    rng.shuffle(out)
    res = []
    for t in out[:6]:
        if rng.random() < 0.15:
            t = _mutate(rng, t)
        elif rng.random() < 0.1:
            t = [list(m) for m in t]
        res.append(t if rng.random() < 0.7 else tuple(t))
    return res


def _random_command(rng: random.Random, s: Any, players: int) -> Any:
    seat = rng.randrange(-1, players + 1)
    turn = s.turn
    return rng.choice([
        Draw(seat), Pass(seat), Knock(seat), EndTurn(seat),
        Leave(seat, resign=rng.random() < 0.3,
              humans=tuple(range(players)) if rng.random() < 0.5 else ()),
        Reclaim(seat, allowed=rng.random() < 0.7, wait=rng.random() < 0.5),
        Meld(seat, _mutate(rng, s.table)), _Draw(turn), _Pass(turn), Meld(True, ()),
        CreateGame(2, 1), Draw(_Seat(turn)), _Meld(turn, s.table), Knock(_Seat(turn)),
    ])


def _play(game: int, variant: dict[str, Any], moves: int) -> int:
    rng = random.Random(f"{game}-{sorted(variant.items())}")
    players = rng.randrange(2, 6)
    s, _ = step(None, CreateGame(players, rng.randrange(10**9), RuleSet(**variant)))
    checked = 0
    for _ in range(moves):
        if rng.random() < 0.12 or s.phase == "game_over":
            cmd = _random_command(rng, s, players)
        else:
            seat, phase = s.turn, s.phase
            cmds: list[Any] = [Draw(seat), Knock(seat)]
            if phase == "meld_or_pass":
                cmds = [Pass(seat)] + [Meld(seat, t) for t in _melds_of(rng, s)]
            elif phase == "knock_or_end":
                cmds = [Knock(seat), EndTurn(seat)]
            cmd = rng.choice(cmds)
        if rng.random() < 0.05 and s.phase != "game_over":  # a turn timer ran out (R13.2)
            limit = rng.choice((0, 1, 2))
            got = _result(lambda st, _, n=limit: timeout_step(st, n), s, None)
            assert got == _result(lambda st, _, n=limit: _reference_timeout(st, n), s, None), s
        else:
            got = _result(step, s, cmd)
            assert got == _result(_reference_step, s, cmd), (s, cmd)
        checked += 1
        if got[0] == "ok":
            s = got[1]
            if s.phase == "game_over" and rng.random() < 0.1:
                break
    return checked


@pytest.mark.parametrize("variant", _GAME_RULES, ids=lambda v: ",".join(map(str, v)) or "default")
def test_step_is_the_reference_step_in_random_games(variant: dict[str, Any]) -> None:
    """R3, R5, R6, R7, R8, R9, R13: the same events, states and errors as the step's
    first algorithm, legal and illegal commands, subclasses and int-subclass seats."""
    assert sum(_play(game, variant, 400) for game in range(4)) > 600


@pytest.mark.slow
@pytest.mark.parametrize("variant", _GAME_RULES, ids=lambda v: ",".join(map(str, v)) or "default")
def test_step_is_the_reference_step_in_many_games(variant: dict[str, Any]) -> None:
    for game in range(2, 40):
        _play(game, variant, 600)


def test_errors_are_declared_types() -> None:
    """The step's refusals of malformed meld commands are rule errors, not crashes."""
    s, _ = step(None, CreateGame(2, 7))
    s, _ = step(s, Draw(s.turn))
    for table in ([[]], [[None, 1, 2]], [(0, 1, 2.5)], [[JOKER, 1, 2]], [[-1, 0, 1]]):
        with pytest.raises((IllegalMoveError, NotationError)):
            step(s, Meld(s.turn, table))
