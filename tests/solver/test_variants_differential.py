"""The solver under the §11 variants that restrict the meld action (``ace_high=false``,
``joker_release="hand"``, ``joker_moves="locked"``) against the independent MILP reference
(tests/solver/milp_reference.py), on random positions, on both backends: the same value,
a play legal under the variant, and proven.

Positions: :data:`PER_RULE` (120) random ones per rule set (tables of 0–30 cards, a third of
melds holding a joker when the deck has one left); under ``joker_moves="locked"`` a further
:data:`PER_LOCKED` (150) whose tables put a joker in every meld while the two decks' jokers
last and whose hands hold cards next to the table's melds, so that extending, joining and
breaking joker melds is what the best play turns on. 6 × 120 + 3 × 150 = 1170 positions per
backend.
"""

from __future__ import annotations

import random

import pytest

from rummy.cards import JOKER, TABLE_JOKER_BASE, format_cards
from rummy.melds import check_action, table_text
from rummy.rules import RuleSet
from rummy.solver import solve
from rummy.solver.positions import random_position

pytest.importorskip("highspy")

from tests.solver.milp_reference import milp_best  # noqa: E402

RULES = {
    "ace-low": RuleSet(ace_high=False),
    "hand-release": RuleSet(joker_release="hand"),
    "both": RuleSet(ace_high=False, joker_release="hand"),
    "locked": RuleSet(joker_moves="locked"),
    "locked-ace-low": RuleSet(joker_moves="locked", ace_high=False),
    "locked-hand-release": RuleSet(joker_moves="locked", joker_release="hand"),
}
PER_RULE = 120
PER_LOCKED = 150


def _positions(name: str) -> list[tuple[tuple, tuple]]:
    rng = random.Random(f"variants-differential:{name}")
    out = []
    for _ in range(PER_RULE):
        size = rng.choice((0, 9, 15, 20, 30))
        table, hand = random_position(rng, size, rng.randint(3, 10), joker_rate=0.35)
        if JOKER not in hand and rng.random() < 0.3:
            hand = tuple(sorted(hand + (JOKER,)))
        if rng.random() < 0.5:  # aces and the top of the line, where ace_high matters
            hand = tuple(sorted(hand + tuple(rng.choice((0, 11, 12, 13, 24, 25)) for _ in
                                             range(2))))
        out.append((table, hand))
    if RULES[name].joker_moves == "locked":
        out += _joker_positions(random.Random(f"variants-differential:joker-melds:{name}"))
    return out


def _joker_positions(rng: random.Random) -> list[tuple[tuple, tuple]]:
    """:data:`PER_LOCKED` positions whose table melds hold the deck's jokers and whose hand
    holds cards that extend them, join them or stand for their jokers."""
    out = []
    for _ in range(PER_LOCKED):
        table, hand = random_position(rng, rng.choice((6, 9, 15, 20, 30)),
                                      rng.randint(2, 8), joker_rate=1.0)
        near = []
        for m in table:
            for c in m:
                e = c - TABLE_JOKER_BASE if c >= TABLE_JOKER_BASE else c
                near += [e - 1 if e % 13 else e + 12, e + 1 if e % 13 != 12 else e - 12,
                         (e + 13) % 52, e]
        hand += tuple(rng.sample(near, min(len(near), rng.randint(1, 5))))
        if rng.random() < 0.3:
            hand += (JOKER,)
        out.append((table, tuple(sorted(hand))))
    return out


def test_the_joker_positions_hold_locked_melds():
    positions = _joker_positions(random.Random("count"))
    with_joker = sum(1 for table, _ in positions
                     if any(c >= TABLE_JOKER_BASE for m in table for c in m))
    two = sum(1 for table, _ in positions
              if sum(1 for m in table if any(c >= TABLE_JOKER_BASE for c in m)) == 2)
    assert len(positions) == PER_LOCKED and with_joker == PER_LOCKED and two > PER_LOCKED // 2


@pytest.mark.parametrize("backend", ["pure", "compiled"])
@pytest.mark.parametrize("name", sorted(RULES))
def test_the_solver_matches_milp_under_a_variant(name: str, backend: str) -> None:
    rules = RULES[name]
    if backend == "compiled":
        pytest.importorskip("numba")
    for table, hand in _positions(name):
        where = f"{name}: table {table_text(table)!r} hand {' '.join(format_cards(hand))!r}"
        try:
            sol = solve(table, hand, rules=rules, backend=backend)
        except ValueError:
            continue  # more copies than the solver packs (a random position's artefact)
        assert sol.optimal, where
        mine = 0
        if sol.play is not None:
            check_action(table, hand, sol.play.table, rules=rules)
            mine = sol.play.points
        assert mine == milp_best(table, hand, ace_high=rules.ace_high,
                                 joker_release=rules.joker_release,
                                 joker_moves=rules.joker_moves), where
