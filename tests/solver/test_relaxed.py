"""The relaxed search that bounds the exact one (rummy/solver/search.py, "Cost of the
search"): it forgets the aces kept back for high sequences, so its value must never exceed
the exact value of the same state (admissible), and ``solve_root`` must return the exact
value whichever way it settles it (relaxed bound, relaxed solution, tight bound, full
search)."""

from __future__ import annotations

import random

import pytest

from rummy.cards import POINTS, parse_cards
from rummy.melds import parse_table
from rummy.solver import best_play
from rummy.solver.positions import random_position
from rummy.solver.search import INF, Search, pack_state

COST = [POINTS[c] * 256 + 1 for c in range(52)]
WCOST = 25 * 256 + 1


def _counts(table, hand):
    mand, opt = [0] * 52, [0] * 52
    for meld in table:
        for c in meld:
            mand[c if c < 52 else c - 53] += 1  # table jokers kept as their card
    jokers = 0
    for c in hand:
        if c == 52:
            jokers += 1
        else:
            opt[c] += 1
    return mand, opt, jokers


def _positions(n: int):
    rng = random.Random("relaxed")
    out = []
    while len(out) < n:
        size = rng.choice((20, 30, 45, 60))
        table, hand = random_position(rng, size, rng.randint(6, 14), joker_rate=0.2)
        mand, opt, jokers = _counts(table, hand)
        exact = Search(mand, opt, COST, WCOST, jokers, None)
        if exact.relaxed is not None:  # two or more suits can keep aces back
            out.append((mand, opt, jokers))
    return out


def test_relaxed_value_never_exceeds_the_exact_value() -> None:
    for mand, opt, jokers in _positions(60):
        exact = Search(mand, opt, COST, WCOST, jokers, None, bounded=False)
        relaxed = Search(mand, opt, COST, WCOST, jokers, None, relax=True)
        st = pack_state(0, jokers)
        e = exact.solve(0, st)
        r = relaxed.solve(0, st)
        assert r <= e
        # and from the states after the aces (step 4) with aces kept back: cleared field
        for (dc, ns) in exact.options(0, st)[:5]:
            if dc < INF:
                assert relaxed.solve(1, ns & ~(255 << 44)) <= exact.solve(1, ns)


@pytest.mark.parametrize("seed", range(3))
def test_solve_root_equals_the_unbounded_search(seed: int) -> None:
    rng = random.Random(seed)
    for mand, opt, jokers in _positions(40)[seed::3]:
        st = pack_state(0, jokers)
        plain = Search(mand, opt, COST, WCOST, jokers, None, bounded=False).solve(0, st)
        for beta in (INF, plain + 1, plain, max(plain - rng.randint(1, 3000), 0)):
            root = Search(mand, opt, COST, WCOST, jokers, None)
            v = root.solve_root(st, beta)
            if plain < beta:
                assert v == plain
                steps, _ = root.trace(st)  # a solution of the exact search
                assert len(steps) == 56
            else:
                assert v >= beta


def test_double_use_of_an_ace_is_not_a_play() -> None:
    """The relaxation may end a high sequence with an ace that a low meld already uses
    (and the relaxed search is built here: spades and hearts can both keep aces back); the
    play returned never does: every ace on the table is needed low, so Q K of spades and
    of hearts have no ace to end on."""
    table = parse_table("AS 2S 3S | AS AH AD | AH 2H 3H")
    hand = parse_cards("QS KS QH KH")
    mand, opt, jokers = _counts(table, hand)
    exact = Search(mand, opt, COST, WCOST, jokers, None)
    assert exact.relaxed is not None
    st = pack_state(0, 0)
    assert exact.relaxed.solve(0, st) < exact.solve(0, st)  # the relaxation is loose here
    assert best_play(table, hand) is None
    assert best_play(table, hand, backend="pure") is None
