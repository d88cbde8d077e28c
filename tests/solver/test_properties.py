"""Property tests (hypothesis): every play is legal, its fields are consistent, and the
options behave (keep, objective, node_limit) on random legal positions."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy.cards import JOKER, POINTS
from rummy.melds import check_action
from rummy.solver import best_play
from rummy.solver.positions import random_position

position = st.builds(
    lambda seed, size, hand, decks, jr: random_position(
        random.Random(seed), size, hand, decks=decks, joker_rate=jr),
    st.integers(0, 2**32), st.sampled_from((0, 6, 12, 20, 30, 40)), st.integers(0, 12),
    st.sampled_from((1, 2)), st.sampled_from((0.0, 0.2, 0.5)))

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _legal(table, hand, play) -> None:
    added = check_action(table, hand, play.table)
    assert tuple(sorted(added)) == play.cards
    assert play.points == sum(POINTS[c] for c in play.cards)


@SETTINGS
@given(position)
def test_every_play_is_legal_and_consistent(pos) -> None:
    table, hand = pos
    play = best_play(table, hand)
    if play is not None:
        _legal(table, hand, play)
        assert play.optimal
        assert play.cards  # R5.1


@SETTINGS
@given(position, st.data())
def test_keep_cards_stay_in_hand(pos, data) -> None:
    table, hand = pos
    if not hand:
        return
    keep = tuple(data.draw(st.lists(st.sampled_from(hand), max_size=3, unique=True)))
    play = best_play(table, hand, keep=keep)
    full = best_play(table, hand)
    if play is not None:
        _legal(table, hand, play)
        left = list(hand)
        for c in play.cards:
            left.remove(c)
        for c in keep:
            assert c in left
            left.remove(c)
        assert full is not None and play.points <= full.points


@SETTINGS
@given(position)
def test_cards_objective_plays_at_least_as_many_cards(pos) -> None:
    table, hand = pos
    by_points = best_play(table, hand)
    by_cards = best_play(table, hand, objective="cards")
    assert (by_points is None) == (by_cards is None)
    if by_cards is not None and by_points is not None:
        _legal(table, hand, by_cards)
        assert len(by_cards.cards) >= len(by_points.cards)
        assert by_cards.points <= by_points.points


@SETTINGS
@given(position, st.integers(1, 200))
def test_node_limit_gives_legal_plays_no_better_than_exact(pos, limit) -> None:
    table, hand = pos
    exact = best_play(table, hand)
    limited = best_play(table, hand, node_limit=limit)
    if limited is not None:
        _legal(table, hand, limited)
        assert exact is not None and limited.points <= exact.points
        if limited.optimal:
            assert limited.points == exact.points


def test_hand_joker_counts_25() -> None:
    table, hand = random_position(random.Random(3), 30, 8)
    play = best_play(table, hand + (JOKER,))
    assert play is not None and JOKER in play.cards
