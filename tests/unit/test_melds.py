"""R4 melds and the R5 meld action: rule edges, and the fast validator against the slow
reference on random positions."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from rummy.cards import JOKER, TABLE_JOKER_BASE, new_deck, parse_cards
from rummy.errors import IllegalMoveError, NotationError
from rummy.melds import (
    VALID_MELDS,
    _check_and_canonical_reference,
    canonical_meld,
    canonical_table,
    check_action,
    check_action_slow,
    check_and_canonical,
    format_meld,
    is_valid_meld,
    meld_problem,
    parse_meld,
    parse_table,
)
from rummy.rules import RuleSet


def test_r4_number_of_legal_melds():
    # 13 ranks x (4 groups of 3 + 1 of 4) + 4 suits x 76 sequences (A..K == 2..A as a set)
    assert len(VALID_MELDS) == 13 * 5 + 4 * 76


@pytest.mark.parametrize("text,ok", [
    ("AS 2S 3S", True), ("QS KS AS", True), ("KS AS 2S", False),  # R4.3 no wrap
    ("8S 8H 8D 8C", True), ("8S 8S 8H", False), ("8S 8H", False),  # R4.2, R4.1
    ("2S *3S 4S", True), ("*7S 7S 7H", False), ("*KD AD QD", True),  # R4.4
    ("AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS", True),
    ("AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", False),
])
def test_r4_melds(text, ok):
    assert is_valid_meld(parse_meld(text)) is ok


def test_r4_5_display_order_high_ace_last_and_jokers_in_place():
    assert format_meld(canonical_meld(parse_meld("AS QS KS"))) == ["QS", "KS", "AS"]
    assert format_meld(canonical_meld(parse_meld("*4S 2S 3S"))) == ["2S", "3S", "*4S"]
    assert format_meld(canonical_meld(parse_meld("3S AS 2S"))) == ["AS", "2S", "3S"]


def test_meld_problem_explains():
    assert meld_problem(parse_meld("8S 8H"))[0] == "R4.1"
    assert meld_problem(parse_meld("KS AS 2S"))[0] == "R4.3"
    assert meld_problem(parse_meld("*7S 7S 7H"))[0] == "R4.4"
    assert meld_problem(parse_meld("7S 7H 7D")) is None


def _check(table, hand, new):
    return check_action(parse_table(table), parse_cards(hand), parse_table(new))


def test_r5_order_of_checks_r5_2_before_r5_1():
    with pytest.raises(IllegalMoveError) as e:
        _check("5S 6S 7S | 9H 9D 9C", "8S", "5S 6S 7S")
    assert e.value.rule == "R5.2"


def test_r5_returns_cards_from_hand():
    added = _check("5S 6S 7S", "8S KD", "5S 6S 7S 8S")
    assert added == parse_cards("8S")


def test_r5_4_card_not_in_hand_is_named():
    with pytest.raises(IllegalMoveError, match="8S is not in the hand") as e:
        _check("5S 6S 7S", "KD", "5S 6S 7S 8S")
    assert e.value.rule == "R5.4"


def test_r5_3_names_the_bad_meld():
    with pytest.raises(IllegalMoveError) as e:
        _check("", "7S 7H 2C", "7S 7H")
    assert e.value.rule == "R5.3" and e.value.meld == ["7S", "7H"]


def test_r5_8_two_jokers_one_freed():
    # a-013/a-014 of the shared cases, here with the message checked
    with pytest.raises(IllegalMoveError, match=r"\*7S may change") as e:
        _check("5S 6S *7S | *7S 8S 9S", "7S TS", "5S 6S 7S | 8S 9S TS *JS *QS")
    assert e.value.rule == "R5.8"


def test_r5_8_joker_freed_by_a_table_card():
    # the real card may come from another meld on the table (R5.8, §12)
    added = _check("7C 8C 9C TC | 7H 7D *7C", "7S", "8C 9C TC *JC | 7H 7D 7C 7S")
    assert added == parse_cards("7S")


def test_r1_4_undeclared_joker_on_new_table_is_notation_error():
    with pytest.raises(NotationError):
        check_action((), (JOKER,), ((parse_meld("5H 6H")[0], parse_meld("6H")[0], JOKER),))


def test_canonical_table_is_order_independent():
    a = canonical_table(parse_table("7S 7H 7D | 5S 6S *7S"))
    b = canonical_table(parse_table("6S *7S 5S | 7D 7S 7H"))
    assert a == b


def _random_position(rng: random.Random):
    """A legal random table from a shuffled two-deck, a hand, and a random proposal."""
    deck = list(new_deck(2))
    rng.shuffle(deck)
    melds = [m for m in VALID_MELDS if rng.random() < 0.02]
    table = []
    pool = list(deck)
    for m in melds:
        cards = [i for i in range(52) if m >> i & 1]
        if all(c in pool for c in cards):
            meld = []
            for c in cards:
                pool.remove(c)
                if JOKER in pool and rng.random() < 0.1:
                    pool.remove(JOKER)
                    meld.append(TABLE_JOKER_BASE + c)
                else:
                    meld.append(c)
            table.append(tuple(meld))
    hand = tuple(sorted(pool[:rng.randint(0, 15)]))
    # proposal: a random rearrangement drawn from table + some hand cards
    cards = [c for m in table for c in m] + [c for c in hand if rng.random() < 0.3]
    if rng.random() < 0.2 and cards:
        cards.pop(rng.randrange(len(cards)))
    if rng.random() < 0.2:
        cards.append(rng.randrange(52))
    cards = [TABLE_JOKER_BASE + rng.randrange(52) if c == JOKER else c for c in cards]
    rng.shuffle(cards)
    new, i = [], 0
    while i < len(cards):
        k = rng.randint(3, 5)
        new.append(tuple(cards[i:i + k]))
        i += k
    if rng.random() < 0.5:  # often propose the old table plus a legal meld from the hand
        hm = sum(1 << c for c in set(hand) if c < 52)
        fits = [m for m in VALID_MELDS if m & hm == m]
        if fits:
            m = rng.choice(sorted(fits))
            new = list(table) + [tuple(i for i in range(52) if m >> i & 1)]
    return tuple(table), hand, tuple(new)


def _outcome(fn, *args):
    try:
        return ("ok", tuple(sorted(fn(*args))))
    except IllegalMoveError as e:
        return ("err", e.rule)
    except NotationError:
        return ("notation", None)


def test_fast_validator_matches_reference_on_random_positions():
    rng = random.Random(2026)
    outcomes = {}
    for _ in range(4000):
        table, hand, new = _random_position(rng)
        fast = _outcome(check_action, table, hand, new)
        slow = _outcome(check_action_slow, table, hand, new)
        assert fast == slow, (table, hand, new)
        outcomes[fast[0] if fast[0] != "err" else fast[1]] = 1
    # the generator reaches accepted actions and several rejection rules
    assert {"ok", "R5.2", "R5.3"} <= set(outcomes)


@pytest.mark.parametrize("new", [
    ((4, 5, 6, -21),),          # a negative index once read as *6D (attack review)
    ((4, 5, JOKER),),           # undeclared joker: both validators say R1.4 first
    ((1.0, 2, 3),), ((1, 2.5, 3),), ((1, "a", 3),), ((),), None, "5S 6S 7S", ((200, 1, 2),),
])
def test_malformed_new_tables_are_notation_errors_in_both_validators(new):
    for fn in (check_action, check_action_slow):
        with pytest.raises(NotationError):
            fn(((4, 5, 6),), (JOKER, 7), new)


def test_field_overflow_falls_back_to_the_reference():
    # 256 copies of one card would overflow an 8-bit field of the fast path (attack review)
    table = [(4,)] * 256 + [(5, 6, 7)]
    new = [(5, 6, 7), (5, 6, 7)]
    for fn in (check_action, check_action_slow):
        with pytest.raises(IllegalMoveError) as e:
            fn(table, (6, 7), new)
        assert e.value.rule == "R5.2"


def test_canonical_meld_matches_its_reference() -> None:
    """The keyed sort of canonical_meld orders every input like the reference:
    legal melds with and without jokers, illegal ones, ties, hand jokers, odd integers."""
    import random

    from rummy.cards import TABLE_JOKER_BASE
    from rummy.melds import VALID_MELDS, _canonical_meld_reference

    rng = random.Random(15)
    masks = list(VALID_MELDS)
    for _ in range(5000):
        m = rng.choice(masks)
        cards = [i for i in range(52) if m >> i & 1]
        if rng.random() < 0.3:
            cards[rng.randrange(len(cards))] += TABLE_JOKER_BASE
        if rng.random() < 0.2:
            cards = rng.choices(range(105), k=rng.randrange(1, 15))
        rng.shuffle(cards)
        assert canonical_meld(cards) == _canonical_meld_reference(cards)
        assert canonical_meld(iter(cards)) == _canonical_meld_reference(tuple(cards))
    for odd in [(), (-1, 2, 3), (200, 5, 1), (5, 5, 5), (0, 12, 11, 10)]:
        assert canonical_meld(odd) == _canonical_meld_reference(odd)


# -- messages of refused tables name the meld and the rule (found by an attack) --


@pytest.mark.parametrize("fn", [check_action, check_action_slow])
@pytest.mark.parametrize("new, rule, message", [
    ([[], [3]], "R4.1", "meld 1 of the table is empty: a meld has at least three cards"),
    ([[0, 1, 2], []], "R4.1", "meld 2 of the table is empty"),
    ([["x"]], "R1.4", "meld 1 of the table holds 'x', which is not a card"),
    ([[0, 900]], "R1.4", "meld 1 of the table holds 900, which is not a card"),
])
def test_a_malformed_new_table_names_its_meld(fn, new, rule, message):
    with pytest.raises(NotationError, match=message) as e:
        fn((), (0, 1, 2), new)
    assert e.value.rule == rule and "((" not in str(e.value)


@pytest.mark.parametrize("fn", [check_action, check_action_slow])
def test_r5_4_says_how_many_copies_the_hand_holds(fn):
    with pytest.raises(IllegalMoveError, match="the new table adds 3 x 4S but the hand "
                       "holds 1") as e:
        fn((), parse_cards("4S 5S 6S"), parse_table([["4S", "4S", "4S"]]))
    assert e.value.rule == "R5.4"


# -- the engine's fast path (check_and_canonical) against its reference --


def _joker_table(rng: random.Random):
    """A legal two-deck table (a joker for about one card in six), the cards left."""
    pool = list(new_deck(2))
    rng.shuffle(pool)
    table = []
    for m in rng.sample(sorted(VALID_MELDS), rng.randint(0, 9)):
        cards = [i for i in range(52) if m >> i & 1]
        if not all(c in pool for c in cards):
            continue
        meld = []
        for c in cards:
            pool.remove(c)
            if JOKER in pool and rng.random() < 0.15:
                pool.remove(JOKER)
                meld.append(TABLE_JOKER_BASE + c)
            else:
                meld.append(c)
        table.append(tuple(meld))
    return table, pool


def _fits(meld, card: int) -> bool:
    """``meld`` plus the table card ``card`` is a legal meld."""
    return is_valid_meld(tuple(meld) + (card,))


def _meld_from_hand(rng: random.Random, hand, new: list) -> None:
    """Append to ``new`` a legal meld of real cards from ``hand``, if there is one, else
    lay a real hand card off on a meld of ``new`` where it fits, if one does."""
    hm = sum(1 << c for c in set(hand) if c < 52)
    fits = [m for m in VALID_MELDS if m & hm == m]
    if fits:
        m = rng.choice(sorted(fits))
        new.append(tuple(i for i in range(52) if m >> i & 1))
        return
    for i, meld in enumerate(new):
        for c in hand:
            if c < JOKER and _fits(meld, c):
                new[i] = meld + (c,)
                return


def _engine_position(rng: random.Random):
    """(canonical legal table, sorted hand, proposed new table): a lay-off, a new meld from
    the hand, a joker swapped for its real card and laid elsewhere, a rearrangement, or a
    random mix; the proposals are legal often enough to reach every accepting branch."""
    table, pool = _joker_table(rng)
    table = list(canonical_table(table))
    hand = sorted(pool[:rng.randint(1, 14)])
    new = list(table)
    move = rng.randrange(6)
    if move == 0 and table:  # lay off hand cards (a joker declared as whatever fits)
        for _ in range(rng.randint(1, 2)):
            i = rng.randrange(len(new))
            for c in hand:
                cand = TABLE_JOKER_BASE + rng.randrange(52) if c == JOKER else c
                if _fits(new[i], cand):
                    new[i] = new[i] + (cand,)
                    break
    elif move == 2:  # swap a table joker for its real card; lay the joker elsewhere
        with_joker = [i for i, m in enumerate(new) if any(c >= TABLE_JOKER_BASE for c in m)]
        if with_joker:
            i = rng.choice(with_joker)
            tj = next(c for c in new[i] if c >= TABLE_JOKER_BASE)
            real = tj - TABLE_JOKER_BASE
            if rng.random() < 0.8 and real not in hand:
                hand = sorted([*hand, real])
            without = tuple(c for c in new[i] if c != tj)
            if rng.random() < 0.4 and is_valid_meld(without):  # the joker just leaves (R5.8)
                new[i] = without
            else:
                new[i] = tuple(real if c == tj else c for c in new[i])
            others = [j for j in range(len(new)) if j != i]
            rng.shuffle(others)
            for j in others:
                fit = [TABLE_JOKER_BASE + d for d in range(52)
                       if _fits(new[j], TABLE_JOKER_BASE + d)]
                if fit:
                    new[j] = new[j] + (rng.choice(fit),)
                    break
            else:
                new[i] = new[i] + (tj,)  # nowhere to go: keep it (an R5.1 or legal action)
        if rng.random() < 0.7:
            _meld_from_hand(rng, hand, new)
    elif move in (3, 4) and table:  # take melds apart and lay their cards out again
        k = rng.randint(1, min(3, len(new)))
        taken = [new.pop(rng.randrange(len(new))) for _ in range(k)]
        cards = [c for m in taken for c in m] + [c for c in hand if rng.random() < 0.3]
        if move == 4 and rng.random() < 0.5:  # re-declare a joker
            cards = [TABLE_JOKER_BASE + rng.randrange(52) if c >= JOKER else c for c in cards]
        if rng.random() < 0.5:  # keep whole melds where possible
            new.extend(taken)
            new.append(tuple(c for c in cards if c < JOKER)[:3])
        else:
            if rng.random() < 0.2:  # a card leaves the table (R5.2)
                cards.pop(rng.randrange(len(cards)))
            rng.shuffle(cards)
            i = 0
            while i < len(cards):
                step = rng.randint(3, 5)
                new.append(tuple(cards[i:i + step]))
                i += step
    elif move == 1:
        _meld_from_hand(rng, hand, new)
    else:  # the old table and a random proposal
        new.append(tuple(rng.choice(hand) for _ in range(3)))
    if rng.random() < 0.3:  # written in another order
        new = [tuple(reversed(m)) if rng.random() < 0.5 else m for m in new]
    rng.shuffle(new)
    return tuple(table), tuple(hand), tuple(new)


def _full_outcome(fn, *args):
    try:
        return ("ok", repr(fn(*args)))
    except (IllegalMoveError, NotationError) as e:
        return (type(e).__name__, e.rule, str(e))


@pytest.mark.parametrize("rules", [None, RuleSet(ace_high=False),
                                   RuleSet(joker_release="hand"), RuleSet(joker_moves="locked")])
def test_engine_fast_path_gives_the_reference_result(rules) -> None:
    """check_and_canonical (a fast path for actions that break no rule, else the reference)
    gives the reference's added cards and canonical table, or its error (type, rule,
    message), on random engine positions with jokers moved, swapped and re-declared."""
    rng = random.Random(31)
    seen: dict[str, int] = {}
    for _ in range(6000):
        table, hand, new = _engine_position(rng)
        got = _full_outcome(check_and_canonical, table, hand, new, rules)
        assert got == _full_outcome(_check_and_canonical_reference, table, hand, new, rules), \
            (table, hand, new)
        key = got[0] if got[0] == "ok" else got[1]
        moved = got[0] == "ok" and any(c >= TABLE_JOKER_BASE for m in table for c in m
                                       if m not in new)
        seen[key] = seen.get(key, 0) + 1
        seen["ok, a joker's meld gone"] = seen.get("ok, a joker's meld gone", 0) + moved
    # the generator reaches accepted actions (with a joker's meld taken apart) and refusals
    assert seen["ok"] > 500 and seen["ok, a joker's meld gone"] > 50, seen
    assert {"R5.1", "R5.2", "R5.3", "R5.4"} <= set(seen), seen
    if rules is None or rules.joker_moves == "free":
        assert seen.get("R5.8", 0) > 10, seen


@pytest.mark.parametrize("new", [
    ((0, 1, 2), (False, 1, 2, 3)), ((0, True, 2),), ((0, 1, 2), (True, 2, 3)),
    ((1.0, 2, 3),), ((1, 2.0, 3),), ((4, 5, 6, -21),), ((4, 5, JOKER),), ((),),
    [[1, 2, 3]], [(1, 2, 3), [4, 5, 6]], ((200, 1, 2),), ((0, 1, 2), (3, 4, 5)),
    ((0, 1, 2), (4, 5, 6, 7)), ((0, 1, 2), (3, 4, 5, 53)),
])
def test_engine_fast_path_gives_the_reference_result_on_odd_values(new) -> None:
    table = ((0, 1, 2),)
    hand = (1, 3, 4, 5, 6, 7, JOKER)
    assert _full_outcome(check_and_canonical, table, hand, new, None) == \
        _full_outcome(_check_and_canonical_reference, table, hand, new, None)


def test_engine_fast_path_gives_the_reference_result_on_arrays() -> None:
    # a meld whose == gives an array (numpy) is no truth value: the reference's answer
    np = pytest.importorskip("numpy")
    for new in [(np.array([0, 1, 2]),), ((0, 1, 2), np.array([3, 4, 5]))]:
        assert _full_outcome(check_and_canonical, ((0, 1, 2),), (3, 4, 5), new, None) == \
            _full_outcome(_check_and_canonical_reference, ((0, 1, 2),), (3, 4, 5), new, None)


@pytest.mark.parametrize("kept", [(0.0, 1, 2), (False, 1, 2), [0, 1, 2], (0, True, 2)])
def test_an_unchanged_meld_is_recorded_as_the_old_tables_own(kept: Sequence[int]) -> None:
    # found by an attack: a kept meld given as values equal to the table's (0.0 == 0,
    # False == 0) went onto the new table as given, floats and bools among the cards (I2)
    table = (parse_meld("AS 2S 3S"),)
    hand = parse_meld("4H 4D 4C")
    new_table = [kept, hand]
    for result in (check_and_canonical(table, hand, new_table),
                   _check_and_canonical_reference(table, hand, new_table)):
        assert result == ((16, 29, 42), ((0, 1, 2), (16, 29, 42)))
        assert all(type(c) is int for m in result[1] for c in m)
    known = canonical_table([kept], table)
    assert known == ((0, 1, 2),) and all(type(c) is int for c in known[0])
