"""The exact search under §11 ``joker_moves="locked"`` (rummy/solver/locked.py): its
enumeration pieces, both backends play for play, and whole games of the solver bots in
which every meld decision on a table holding a joker is proven best."""

from __future__ import annotations

import random

import pytest

import rummy.solver as solver
from rummy.cards import JOKER, TABLE_JOKER_BASE, parse_cards
from rummy.melds import check_action, parse_table
from rummy.rules import RuleSet
from rummy.simulate import play_game
from rummy.solver import compiled, solve
from rummy.solver.locked import host_slots, partitions
from rummy.solver.positions import random_position

LOCKED = RuleSet(joker_moves="locked")


def _cards(text: str) -> frozenset[int]:
    return frozenset(parse_cards(text))


def test_partitions_are_every_set_partition_singletons_first() -> None:
    assert list(partitions(0)) == [[]]
    three = list(partitions(3))
    assert len(three) == 5  # the Bell number B3
    assert three[0] == [(0,), (1,), (2,)]
    assert [(0, 1, 2)] in three and [(0, 2), (1,)] in three
    assert len(list(partitions(4))) == 15


def test_hosts_of_a_sequence_reach_two_cards_past_each_end() -> None:
    slots = host_slots(_cards("5S 6S 7S"))
    assert slots[0] == ()  # the meld itself first
    assert len(slots) == 9  # 3 low ends x 3 high ends
    assert tuple(parse_cards("3S 4S 8S 9S")) in slots
    assert tuple(parse_cards("2S 3S 4S")) not in slots  # three cards past an end split off
    # the high ace (R4.3) only with ace_high: QS KS -> AS
    assert tuple(parse_cards("AS")) in host_slots(_cards("JS QS KS"))
    assert tuple(parse_cards("AS")) not in host_slots(_cards("JS QS KS"), ace_high=False)


def test_hosts_of_a_group_and_of_joined_melds() -> None:
    assert host_slots(_cards("7S 7H 7D")) == [(), tuple(parse_cards("7C"))]
    assert host_slots(_cards("7S 7H 7D 7C")) == [()]
    # two joker melds of one suit with a gap of two between them
    joined = host_slots(_cards("5S 6S 7S TS JS QS"))
    assert tuple(parse_cards("8S 9S")) in joined
    # no legal meld holds two ranks of two suits
    assert host_slots(_cards("5S 6H")) == []


def test_locked_plays_are_legal_and_the_same_on_both_backends() -> None:
    if not compiled.usable():
        pytest.skip("numba not installed/usable")
    rng = random.Random("locked:backends")
    for _ in range(60):
        table, hand = random_position(rng, rng.choice((9, 15, 30)), rng.randint(3, 9),
                                      joker_rate=1.0)
        if rng.random() < 0.3:
            hand = tuple(sorted(hand + (JOKER,)))
        try:
            pure = solve(table, hand, rules=LOCKED, backend="pure")
        except ValueError:
            continue
        assert solve(table, hand, rules=LOCKED, backend="compiled") == pure
        assert pure.optimal
        if pure.play is not None:
            assert tuple(sorted(check_action(table, hand, pure.play.table,
                                             rules=LOCKED))) == pure.play.cards


def test_a_node_limit_still_gives_a_legal_play() -> None:
    table = parse_table(["JS QS KS", "5H 6H *7H", "8D 9D TD"])
    hand = parse_cards("AS 7H 8H JD 4H")
    exact = solve(table, hand, rules=LOCKED)
    assert exact.optimal and exact.play.points == 1 + 8 + 10 + 4
    for limit in (1, 5, 50, 5000):
        sol = solve(table, hand, rules=LOCKED, node_limit=limit)
        if sol.play is not None:
            check_action(table, hand, sol.play.table, rules=LOCKED)
            assert sol.play.points <= exact.play.points


def test_the_solver_bots_play_locked_games_with_proven_plays(monkeypatch) -> None:
    seen: list[bool] = []
    real = solver.solve

    def spy(table, hand, **kw):
        sol = real(table, hand, **kw)
        if any(c >= TABLE_JOKER_BASE for m in table for c in m):
            seen.append(sol.optimal)
        return sol

    monkeypatch.setattr(solver, "solve", spy)
    rules = RuleSet(joker_moves="locked", target_score=60)
    for seed in (2, 9):
        r = play_game(["greedy", "strategic", "greedy"], seed=seed, rules=rules)
        assert r.winners  # every command legal under the variant (play_game raises else)
    assert len(seen) > 20 and all(seen)
