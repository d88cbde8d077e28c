"""The compiled search (numba) against the pure reference search.

``rummy.solver.compiled`` mirrors ``rummy.solver.search`` move for move, so on every input
both backends must return the *same* play (the same new table, not only the same value), the
same ``optimal`` flag under a node budget, and the same errors. The MILP differential test
(test_differential.py) checks the default backend against an independent model; this file
ties the pure reference to it. Skipped without numba (the ``fast`` extra).
"""

from __future__ import annotations

import random

import pytest

from rummy.cards import JOKER, parse_cards
from rummy.melds import check_action, parse_table
from rummy.solver import best_play, compiled
from rummy.solver.positions import random_position

pytestmark = pytest.mark.skipif(not compiled.AVAILABLE, reason="numba not installed")


def _positions(seed: str, n: int) -> list[tuple[tuple, tuple]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        size = rng.choice((0, 9, 20, 30, 45, 60, 90))
        table, hand = random_position(rng, size, rng.randint(3, 16), joker_rate=0.25)
        if JOKER not in hand and rng.random() < 0.2:
            hand = tuple(sorted(hand + (JOKER,)))
        out.append((table, hand))
    return out


@pytest.mark.parametrize("chunk", range(4))
def test_same_play_as_the_pure_reference(chunk: int) -> None:
    for table, hand in _positions(f"compiled:{chunk}", 150):
        pure = best_play(table, hand, backend="pure")
        fast = best_play(table, hand, backend="compiled")
        assert fast == pure, (table, hand)
        if fast is not None:
            check_action(table, hand, fast.table)


def test_same_play_with_keep_and_cards_objective() -> None:
    rng = random.Random("compiled:options")
    for table, hand in _positions("compiled:options", 120):
        keep = (rng.choice(hand),) if hand else ()
        for objective in ("points", "cards"):
            pure = best_play(table, hand, keep=keep, objective=objective, backend="pure")
            fast = best_play(table, hand, keep=keep, objective=objective, backend="compiled")
            assert fast == pure, (table, hand, keep, objective)


def test_same_budget_limited_play_and_flag() -> None:
    """node_limit counts the same states in both backends, so even a play that is *not*
    proven optimal is the same one (bots rely on this for reproducible games)."""
    limited = 0
    for table, hand in _positions("compiled:budget", 150):
        for limit in (1, 40, 400):
            pure = best_play(table, hand, node_limit=limit, backend="pure")
            fast = best_play(table, hand, node_limit=limit, backend="compiled")
            assert fast == pure, (table, hand, limit)
            limited += pure is not None and not pure.optimal
    assert limited > 20  # the budget really bit


def test_joker_heavy_position() -> None:
    # two table jokers and a hand joker: the wildcard paths of the search
    table = parse_table("AS 2S 3S 4S | 6S *6H 6C | AH 2H 3H 4H 5H *6H | 6H 7H 8H | 6S 6H 6D")
    hand = parse_cards("* 8S 9S TS QS KD 7C 8C")
    pure = best_play(table, hand, backend="pure")
    fast = best_play(table, hand, backend="compiled")
    assert fast == pure
    # every card but KD (no diamond royals, no other king; the joker is needed elsewhere):
    # 8+9+10+10+7+8 + joker 25 = 77, the HiGHS MILP value too
    assert fast is not None and fast.points == 77
    assert JOKER in fast.cards


def test_backend_errors() -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        best_play((), parse_cards("AS 2S 3S"), backend="gpu")


def test_overflow_falls_back_to_the_pure_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """A step with more moves than the compiled buffer holds (never seen with game inputs)
    makes best_play run the reference search: same answer, no error."""
    def overflow(*args: object, **kwargs: object) -> None:
        raise compiled.Overflow

    table = parse_table("5S 6S 7S")
    hand = parse_cards("8S KD")
    expected = best_play(table, hand, backend="pure")
    monkeypatch.setattr(compiled, "CompiledSearch", overflow)
    assert best_play(table, hand) == expected
    assert expected is not None and expected.points == 8
