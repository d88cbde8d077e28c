"""The mirror image of a position and the race between the two orientations
(rummy/solver/__init__.py, ``_race``): the mirror image (A stays, 2 <-> K, 3 <-> Q, ...) has
the same best value; whichever orientation finishes within its state budget answers, and
the answer is exact and the same on both backends."""

from __future__ import annotations

import random

import pytest

import rummy.solver as solver
from rummy.cards import JOKER
from rummy.melds import check_action
from rummy.solver import compiled
from rummy.solver.positions import random_position
from rummy.solver.search import Aborted, Search


def _positions(seed: str, n: int) -> list[tuple[list[tuple[int, ...]], tuple[int, ...]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        table, hand = random_position(rng, rng.choice((0, 15, 30, 45, 60)),
                                      rng.randint(4, 14), joker_rate=0.3)
        if JOKER not in hand and rng.random() < 0.2:
            hand = tuple(sorted(hand + (JOKER,)))
        out.append(([tuple(m) for m in table], tuple(hand)))
    return out


def test_mirror_is_an_involution_that_keeps_points() -> None:
    from rummy.cards import POINTS
    assert all(solver._MIRROR[solver._MIRROR[c]] == c for c in range(52))
    assert sorted(POINTS[c] for c in range(52)) == sorted(POINTS[solver._MIRROR[c]]
                                                          for c in range(52))
    assert solver._mirrored(JOKER) == JOKER
    assert solver._mirrored(53 + 1) == 53 + 12  # *2S <-> *KS


def test_mirror_image_has_the_same_value_and_a_legal_play() -> None:
    for table, hand in _positions("race:mirror", 150):
        plain = solver._best_play(table, hand, (), "points", None, Search)
        mirror = solver._best_play(table, hand, (), "points", None, Search, mirror=True)
        assert (plain.play.points if plain.play else 0) == \
            (mirror.play.points if mirror.play else 0), (table, hand)
        if mirror.play is not None:
            assert tuple(sorted(check_action(table, hand, mirror.play.table))) == \
                mirror.play.cards


def test_abort_budget_raises() -> None:
    with pytest.raises(Aborted):
        solver._best_play([(0, 1, 2), (13, 14, 15)], (3, 16, 29, 42), (), "points", None,
                          Search, abort=1)


@pytest.mark.parametrize("backend", ["pure", "compiled"])
def test_race_with_tiny_budgets_is_still_exact(monkeypatch: pytest.MonkeyPatch,
                                               backend: str) -> None:
    """Budgets of a few states make most positions run through every orientation: the
    values must not change, and both backends must still agree play for play."""
    if backend == "compiled" and not compiled.usable():
        pytest.skip("numba not installed/usable")
    positions = _positions("race:tiny", 80)
    expected = [solver.best_play(t, h, backend=backend) for t, h in positions]
    monkeypatch.setattr(solver, "_RACE", ((False, 3), (True, 12), (False, 48), (True, 192),
                                          (False, None)))
    for (t, h), exp in zip(positions, expected, strict=True):
        got = solver.best_play(t, h, backend=backend)
        assert (got.points if got else 0) == (exp.points if exp else 0), (t, h)
        if compiled.usable():
            assert solver.best_play(t, h, backend="pure") == \
                solver.best_play(t, h, backend="compiled")
