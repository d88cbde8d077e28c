"""``check_action`` (the fast validator) gives the answer of ``check_action_slow`` on every
input, including old tables that are not legal (conformance case a-027).

The old table is any list of cards: the case format (tests/conformance/cases/README.md)
does not promise a legal one, so a meld that stands unchanged on the new table must be
checked like any other (R5.3).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy.cards import JOKER, TABLE_JOKER_BASE, parse_cards
from rummy.errors import IllegalMoveError, NotationError
from rummy.melds import (
    VALID_MELDS,
    _check_and_canonical_reference,
    canonical_table,
    check_action,
    check_action_slow,
    check_and_canonical,
    parse_table,
)
from rummy.rules import RuleSet

_REAL = st.integers(0, 51)
_TABLE_CARD = st.one_of(_REAL, _REAL, _REAL, st.integers(0, 51).map(lambda c: c + TABLE_JOKER_BASE))
_LEGAL = sorted(VALID_MELDS)


def _outcome(fn, *args, **kw):
    try:
        return ("ok", tuple(sorted(fn(*args, **kw))))
    except IllegalMoveError as e:
        return ("err", e.rule)
    except NotationError:
        return ("notation", None)


@st.composite
def positions(draw, illegal: bool = True):
    """(old table, hand, new table): an old table of legal melds (and, with ``illegal``,
    of any lists of cards), a hand, and a new table that keeps some old melds unchanged and
    rearranges or adds the rest."""
    legal = draw(st.lists(st.sampled_from(_LEGAL), max_size=5))
    table = [tuple(i for i in range(52) if m >> i & 1) for m in legal]
    if illegal:
        table += draw(st.lists(st.lists(_TABLE_CARD, min_size=1, max_size=5).map(tuple),
                               max_size=3))
    table = draw(st.permutations(table)) if table else []
    hand = draw(st.lists(st.integers(0, JOKER), max_size=12))
    if draw(st.booleans()):  # keep the old table as it is: only the hand meld is new
        keep = [True] * len(table)
        from_hand = []
    else:
        keep = draw(st.lists(st.booleans(), min_size=len(table), max_size=len(table)))
        from_hand = [c if c != JOKER else TABLE_JOKER_BASE + draw(_REAL)
                     for c in hand if draw(st.booleans())]
    new = [m for m, k in zip(table, keep, strict=True) if k]
    loose = [c for m, k in zip(table, keep, strict=True) if not k for c in m] + from_hand
    if draw(st.booleans()) and hand:  # a meld from the hand, often legal
        hm = sum(1 << c for c in set(hand) if c < 52)
        fits = [m for m in _LEGAL if m & hm == m]
        if fits:
            new.append(tuple(i for i in range(52) if draw(st.sampled_from(fits)) >> i & 1))
    loose = draw(st.permutations(loose)) if loose else []
    i = 0
    while i < len(loose):
        k = draw(st.integers(3, 5))
        new.append(tuple(loose[i:i + k]))
        i += k
    new = draw(st.permutations(new)) if new else []
    return tuple(table), tuple(hand), tuple(new)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions())
def test_fast_and_slow_checks_agree_on_any_old_table(position):
    table, hand, new = position
    assert _outcome(check_action, table, hand, new) == \
        _outcome(check_action_slow, table, hand, new)


def test_a027_an_illegal_meld_kept_unchanged_is_r5_3():
    # conformance a-027: [5S 6S 8S] is not a meld; keeping it is no excuse (R5.3)
    table = parse_table("5S 6S 8S")
    hand = parse_cards("JD QD KD")
    new = parse_table("5S 6S 8S | JD QD KD")
    for fn in (check_action, check_action_slow):
        with pytest.raises(IllegalMoveError) as e:
            fn(table, hand, new)
        assert e.value.rule == "R5.3"


def test_the_engine_may_promise_a_legal_table():
    # table_is_legal=True skips unchanged melds (the engine's tables are legal, I2)
    table = parse_table("5S 6S 7S")
    new = parse_table("5S 6S 7S | JD QD KD")
    assert check_action(table, parse_cards("JD QD KD"), new, table_is_legal=True) == \
        tuple(sorted(parse_cards("JD QD KD")))


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(illegal=False))
def test_the_engine_path_agrees_on_legal_tables(position):
    # table_is_legal=True (the engine's call, I2) skips unchanged melds: on a legal old
    # table it must still give the slow check's answer (the tables are drawn legal, not
    # filtered: a filter threw most examples away and took minutes on a loaded machine)
    from rummy.melds import is_valid_meld
    table, hand, new = position
    assert all(is_valid_meld(m) for m in table)
    assert _outcome(check_action, table, hand, new, table_is_legal=True) == \
        _outcome(check_action_slow, table, hand, new)


def _full_outcome(fn, *args):
    """Everything a caller sees: the result (``repr``: ``True`` is not ``1``) or the
    error's type, rule and message."""
    try:
        return ("ok", repr(fn(*args)))
    except (IllegalMoveError, NotationError) as e:
        return (type(e).__name__, e.rule, str(e))


_VARIANTS = [None, RuleSet(), RuleSet(ace_high=False), RuleSet(joker_release="hand"),
             RuleSet(joker_moves="locked")]


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions(illegal=False), st.sampled_from(_VARIANTS))
def test_the_engine_fast_path_gives_the_reference_result(position, rules):
    # check_and_canonical (the engine's call: a fast path for actions that break no rule,
    # else the reference) gives what the reference gives: the same added cards and
    # canonical table, or the same error (type, rule, message), under every variant
    table, hand, new = position
    table = canonical_table(table)  # as the engine records it (I2)
    assert _full_outcome(check_and_canonical, table, hand, new, rules) == \
        _full_outcome(_check_and_canonical_reference, table, hand, new, rules)
