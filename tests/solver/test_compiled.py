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
from rummy.solver.positions import edge_position, random_position

pytestmark = pytest.mark.skipif(not compiled.usable(), reason="numba not installed/usable")


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


def test_threads_solving_at_once_get_the_plays_of_one_thread() -> None:
    """The kernel releases the GIL and reuses scratch arrays: each thread has its own
    (compiled.py), so plays solved in several threads at once are those of one thread,
    and a play does not change when later calls reuse the scratch it came from."""
    from concurrent.futures import ThreadPoolExecutor
    positions = _positions("compiled:threads", 80)
    expected = [best_play(t, h, backend="compiled") for t, h in positions]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(2):
            got = list(pool.map(lambda p: best_play(p[0], p[1], backend="compiled"),
                                positions))
            assert got == expected
    assert [best_play(t, h, backend="pure") for t, h in positions[:20]] == expected[:20]


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
    best_play(table, hand)  # the kernel's entry is known from here on
    # the kernel's answer to a move overflow, on the flat path and in compiled.run
    monkeypatch.setitem(compiled._LOADED, "e", lambda ws: -3)
    assert best_play(table, hand) == expected
    monkeypatch.setattr(compiled, "solve_position", overflow)
    assert best_play(table, hand) == expected
    assert expected is not None and expected.points == 8


@pytest.mark.parametrize("objective", ["points", "cards"])
def test_flat_path_gives_the_play_of_the_general_path(objective: str) -> None:
    """best_play's flat path (the race run inline on one card list) and the general
    compiled path (_race over _compiled_play and compiled.solve_position) give the same
    Solution, keep cards and mirror-image answers included."""
    from rummy.solver import _solve_checked, _solve_flat
    rng = random.Random(f"flat:{objective}")
    positions = _positions(f"flat:{objective}", 150)
    positions += [edge_position(rng, "full") for _ in range(100)]
    mirrored = 0
    for table, hand in positions:
        keep = tuple(rng.sample(hand, min(len(hand), rng.choice((0, 0, 1, 2)))))
        flat = _solve_flat(table, hand, keep, objective)
        assert flat is not None
        general = _solve_checked([tuple(m) for m in table], tuple(hand), keep, objective,
                                 None, "compiled")
        assert flat == tuple(general)
        nodes = [0]
        _solve_checked([tuple(m) for m in table], tuple(hand), keep, objective, None,
                       "compiled", nodes=nodes)
        mirrored += nodes[0] > 4_000  # the first orientation was aborted
    assert mirrored  # the race reached the mirror image on some positions


@pytest.mark.parametrize("objective", ["points", "cards"])
@pytest.mark.parametrize("limit", [1, 40, 40_000])
def test_flat_path_under_a_node_limit_gives_the_general_paths_solution(
        objective: str, limit: int) -> None:
    """Under a node limit (the bots' and the RL environment's searches) the flat path
    searches the position itself as _race does: the same Solution as the general compiled
    path, a budget-stopped search (optimal False, or no play found) included."""
    from rummy.solver import _solve_checked, _solve_flat
    rng = random.Random(f"flat-limit:{objective}:{limit}")
    positions = _positions(f"flat-limit:{objective}", 120)
    positions += [edge_position(rng, "full") for _ in range(60)]
    stopped = 0
    for table, hand in positions:
        keep = tuple(rng.sample(hand, min(len(hand), rng.choice((0, 0, 1)))))
        flat = _solve_flat(table, hand, keep, objective, limit)
        assert flat is not None
        general = _solve_checked([tuple(m) for m in table], tuple(hand), keep, objective,
                                 limit, "compiled")
        assert flat == tuple(general)
        assert best_play(table, hand, keep=keep, objective=objective, node_limit=limit) \
            == general.play
        stopped += not general.optimal
    if limit == 1:
        assert stopped  # the limit stopped some searches


# --- found by the attack review (robustness of the compiled path and input checks) -------

@pytest.mark.parametrize("limit", [0, -1, -5, True, 1.5, "10"])
def test_bad_node_limit_is_a_value_error_on_both_backends(limit: object) -> None:
    for backend in ("pure", "compiled"):
        with pytest.raises(ValueError, match="node_limit must be a positive integer"):
            best_play((), parse_cards("AS 2S 3S"), node_limit=limit, backend=backend)


def test_huge_node_limit_is_no_limit() -> None:
    hand = parse_cards("AS 2S 3S")
    assert best_play((), hand, node_limit=2**64, backend="compiled") == \
        best_play((), hand, node_limit=2**64, backend="pure")


@pytest.mark.parametrize("hand", [(2.0, 3, 4), ("AS",), (None,), (True, 1, 2)])
def test_card_that_is_not_an_index_is_a_value_error(hand: tuple) -> None:
    with pytest.raises(ValueError, match="bad hand card"):
        best_play((), hand)


@pytest.mark.parametrize(("table", "hand"), [
    ((), (44, 44, 44, 52, 52, 52, 52, 52)),          # 3 copies + 5 jokers
    (((0, 1, 2),) * 7, (0,) * 7 + (1,) * 7),          # 14 copies of AS
    ((), (0,) * 8),                                   # 8 copies, none of them usable
])
def test_more_than_seven_copies_counting_jokers_is_a_value_error(table, hand) -> None:
    """The search packs per-card counts in 3 bits; past 7 (real copies plus every joker)
    it used to give wrong answers or crash; a game never has more than 2 + 2."""
    for backend in ("pure", "compiled"):
        with pytest.raises(ValueError, match="more than 7 copies"):
            best_play(table, hand, backend=backend)


def test_seven_copies_counting_jokers_still_solve() -> None:
    hand = (44, 44, 44, 52, 52, 52, 52)  # 6C 6C 6C * * * *
    pure = best_play((), hand, backend="pure")
    assert best_play((), hand, backend="compiled") == pure
    assert pure is not None and pure.points == 112  # two runs 6C *7C *8C, one 6C left


def test_no_writable_cache_compiles_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba raises RuntimeError when decorating with cache=True and no cache location is
    writable (read-only install, no home); the kernels are then compiled without cache
    instead of breaking ``import rummy.solver``."""
    from rummy.solver import _kernels

    calls = []

    def fake_njit(**options):
        calls.append(options)
        if options.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return lambda fn: ("compiled", fn)

    monkeypatch.setattr(_kernels, "njit", fake_njit)
    kind, fn = _kernels._jit(len)
    assert (kind, fn) == ("compiled", len)
    assert calls == [{"cache": True, "nogil": True}, {"nogil": True}]


def test_disabled_jit_falls_back_to_the_pure_search() -> None:
    import subprocess
    import sys

    code = ("from rummy.solver import best_play, compiled\n"
            "print(compiled.usable(), best_play([(4, 5, 6)], [7, 20]).points)\n"
            "try:\n    best_play([(4, 5, 6)], [7, 20], backend='compiled')\n"
            "except ValueError as e:\n    print('ValueError', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "NUMBA_DISABLE_JIT": "1"},
                         timeout=120, check=True).stdout
    assert out.splitlines()[0] == "False 8"
    assert "ValueError backend 'compiled' needs numba" in out


def test_cache_write_error_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """numba may fail to save its cache after import (disk full, directory made
    read-only): best_play answers with the pure search instead of raising."""
    def failing(*args: object, **kwargs: object) -> None:
        raise PermissionError("[Errno 13] Permission denied: '__pycache__/x.nbi'")

    monkeypatch.setattr(compiled, "solve_position", failing)
    table, hand = parse_table("5S 6S 7S"), parse_cards("8S KD")
    assert best_play(table, hand) == best_play(table, hand, backend="pure")
