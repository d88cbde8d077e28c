"""``rummy.advice``: legal moves and hints from the seat's own view (I3), on positions with
known answers."""

from __future__ import annotations

import dataclasses

import pytest

from rummy.advice import hint, legal_moves
from rummy.cards import parse_cards
from rummy.commands import CreateGame, Draw, Meld
from rummy.decide import step
from rummy.errors import GameOverError, NotYourTurnError
from rummy.melds import check_action, format_table, parse_table
from rummy.rules import RuleSet
from rummy.state import DRAW, GAME_OVER, KNOCK_OR_END, GameState
from rummy.views import PlayerView, view


def _meld_phase(hand: str, table: str = "", rules: RuleSet | None = None,
                opened: bool = False) -> tuple[GameState, PlayerView]:
    """A two-seat game in which the seat to act has drawn and holds ``hand`` on ``table``
    (a position edited into a real game's state)."""
    state, _ = step(None, CreateGame(2, 5, rules or RuleSet()))
    state, _ = step(state, Draw(state.turn))
    seat = state.turn
    hands = list(state.hands)
    hands[seat] = tuple(sorted(parse_cards(hand)))
    state = state._replace(hands=tuple(hands), table=parse_table(table) if table else (),
                           opened=tuple(opened if s == seat else False
                                        for s in range(state.players)))
    return state, view(state, seat)


def test_a_meld_is_possible_and_the_hint_is_the_best_play() -> None:
    state, v = _meld_phase("5S 6S 7S 8S KD QC 2H", "9H 9D 9C")
    moves = legal_moves(v)
    assert moves.actions == ("meld", "pass") and moves.meld == "possible"
    h = hint(v)
    assert h.kind == "meld" and h.optimal
    assert h.points == 5 + 6 + 7 + 8 and sorted(h.cards) == sorted(parse_cards("5S 6S 7S 8S"))
    assert sorted(map(sorted, format_table(h.table))) == sorted(
        [sorted(["5S", "6S", "7S", "8S"]), sorted(["9H", "9D", "9C"])])
    assert check_action(v.table, v.hand, h.table) == h.cards  # legal for the seat
    after, _ = step(state, Meld(v.seat, h.table))  # and the engine takes it
    assert len(after.hands[v.seat]) == 3


def test_no_meld_means_impossible_and_a_pass_hint() -> None:
    _, v = _meld_phase("2S 9H KD", "5C 6C 7C")
    assert legal_moves(v).meld == "impossible"
    h = hint(v)
    assert (h.kind, h.optimal, h.cards, h.table) == ("pass", True, (), ())
    assert h.reason.startswith("R3.2")


def test_the_opening_minimum_is_applied() -> None:
    """R5.5 variant opening_meld_min_points=30: a run of 12 points may not open."""
    rules = dataclasses.replace(RuleSet(), opening_meld_min_points=30)
    _, v = _meld_phase("2S 3S 4S 9H KD", rules=rules)
    assert legal_moves(v).meld == "impossible"
    _, v = _meld_phase("KS KH KD 9H", rules=rules)
    assert legal_moves(v).meld == "possible" and hint(v).points == 30


def test_a_budget_too_small_to_find_a_play_says_unknown() -> None:
    _, v = _meld_phase("5S 6S 7S 8S KD QC 2H", "9H 9D 9C")
    moves = legal_moves(v, node_limit=1)
    assert moves.meld in ("unknown", "possible")
    if moves.meld == "unknown":
        assert hint(v, node_limit=1).optimal is False


def test_not_the_seats_turn_and_other_phases() -> None:
    state, v = _meld_phase("2S 9H KD")
    other = view(state, 1 - v.seat)
    assert legal_moves(other).actions == () and legal_moves(other).meld == "not_now"
    with pytest.raises(NotYourTurnError):
        hint(other)
    draw = view(state._replace(draws=0, phase=DRAW), v.seat)
    assert hint(draw).kind == "draw" and legal_moves(draw).meld == "not_now"
    low = state._replace(phase=KNOCK_OR_END,
                         hands=tuple(parse_cards("AS") if s == v.seat else h
                                     for s, h in enumerate(state.hands)))
    assert hint(view(low, v.seat)).kind in ("knock", "end_turn")
    with pytest.raises(GameOverError):
        hint(view(state._replace(phase=GAME_OVER), v.seat))
    with pytest.raises(ValueError):
        legal_moves(view(state, None))


def test_the_advice_reads_only_the_seats_view() -> None:
    """Two states that differ only in hidden cards (the other hand, the stock order) give
    the same legal moves and the same hint (I3)."""
    state, v = _meld_phase("5S 6S 7S 8S KD QC 2H", "9H 9D 9C")
    other = 1 - v.seat
    hidden = state._replace(
        hands=tuple(tuple(reversed(h)) if s == other else h for s, h in enumerate(state.hands)),
        deck=tuple(reversed(state.deck)))
    assert legal_moves(view(hidden, v.seat)) == legal_moves(v)
    assert hint(view(hidden, v.seat)) == hint(v)


def test_the_per_player_opening_needs_a_meld_from_the_hand() -> None:
    """R5.5 variant opening_meld_per_player: before the seat has opened, laying 8S off on
    the table's run is not enough; after, it is."""
    rules = dataclasses.replace(RuleSet(), opening_meld_per_player=True)
    _, v = _meld_phase("8S KD 2H", "5S 6S 7S", rules=rules, opened=False)
    assert legal_moves(v).meld == "impossible"
    _, v = _meld_phase("8S KD 2H", "5S 6S 7S", rules=rules, opened=True)
    assert legal_moves(v).meld == "possible" and hint(v).points == 8
