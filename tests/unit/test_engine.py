"""The game as events (R2, R3, R6–R9): decide/evolve on scripted situations."""

from __future__ import annotations

import pytest

from rummy.cards import JOKER, parse_card, parse_cards
from rummy.commands import CreateGame, Draw, EndTurn, Knock, Meld, Pass
from rummy.decide import decide, round_deck, step
from rummy.errors import (
    GameOverError,
    IllegalMoveError,
    InvalidRuleSetError,
    NotationError,
    NotYourTurnError,
)
from rummy.events import (
    CardDrawn,
    GameEnded,
    GameStarted,
    Knocked,
    Melded,
    Passed,
    RoundScored,
    RoundStarted,
    StockExhausted,
    TurnEnded,
)
from rummy.evolve import evolve, replay
from rummy.melds import parse_table
from rummy.rules import RuleSet
from rummy.state import DRAW, KNOCK_OR_END, MELD_OR_PASS


def new_game(players=3, seed=1, **variants):
    return step(None, CreateGame(players, seed, RuleSet.from_dict(variants)))


def with_hands(state, hands, table=(), stock=None):
    """Replace hands/table (and the stock) of a state, keeping the deck conserved."""
    deck = list(state.deck[:state.stock_pos])
    if stock is not None:
        deck = deck + list(stock)
        return state._replace(hands=tuple(tuple(sorted(h)) for h in hands), table=table,
                              deck=tuple(deck), stock_pos=len(deck) - len(stock))
    return state._replace(hands=tuple(tuple(sorted(h)) for h in hands), table=table)


def test_r2_create_game_deals_ten_each_and_records_the_deck():
    s, events = new_game(4, seed=3)
    assert [type(e) for e in events] == [GameStarted, RoundStarted]
    assert sorted(len(h) for h in s.hands) == [10, 10, 10, 10]
    assert s.stock_size == 106 - 40
    assert events[1].deck == round_deck(3, 1, 4)
    assert s.turn == (s.dealer + 1) % 4  # R2.3
    assert s.phase == DRAW


def test_r1_2_two_players_use_one_deck():
    s, events = new_game(2)
    assert len(events[1].deck) == 53
    assert s.stock_size == 33


@pytest.mark.parametrize("players", [1, 6, 0])
def test_r1_1_player_count(players):
    with pytest.raises(InvalidRuleSetError):
        step(None, CreateGame(players, 1))


def test_r11_unknown_and_out_of_range_variants_rejected():
    with pytest.raises(InvalidRuleSetError, match="unknown rule variant 'jokers_wild'"):
        RuleSet.from_dict({"jokers_wild": True})
    with pytest.raises(InvalidRuleSetError, match="out of range"):
        RuleSet.from_dict({"knock_threshold": -1})
    with pytest.raises(InvalidRuleSetError, match="must be an integer"):
        RuleSet.from_dict({"target_score": "lots"})
    assert RuleSet.from_dict({"knock_threshold": "7"}).knock_threshold == 7
    # 27 cards each would leave no stock; §11 caps hand_size at 20 (5 x 20 < 106)
    with pytest.raises(InvalidRuleSetError, match=r"hand_size=27 is out of range 1\.\.20"):
        RuleSet(hand_size=27)


def test_r11_rules_recorded_in_first_event():
    s, events = new_game(knock_threshold=7)
    assert events[0].rules.knock_threshold == 7
    assert s.rules.knock_threshold == 7


def test_r3_three_draw_turn_then_turn_passes():
    s, _ = new_game(3, knock_threshold=0)
    seat = s.turn
    s, ev = step(s, Draw(seat))
    assert [type(e) for e in ev] == [CardDrawn] and s.phase == MELD_OR_PASS
    s, ev = step(s, Pass(seat))
    assert s.phase == DRAW  # R3.2: a second draw is due
    s, _ = step(s, Draw(seat))
    s, _ = step(s, Pass(seat))
    s, ev = step(s, Draw(seat))  # R3.3: third draw ends the turn
    assert [type(e) for e in ev] == [CardDrawn, TurnEnded]
    assert s.turn == (seat + 1) % 3 and s.phase == DRAW
    assert len(s.hands[seat]) == 13


def test_r3_6_must_draw_before_meld_or_pass():
    s, _ = new_game()
    with pytest.raises(IllegalMoveError) as e:
        decide(s, Pass(s.turn))
    assert e.value.rule == "R3.6"


def test_r3_3_no_meld_after_third_draw():
    s, _ = new_game(3, knock_threshold=1000)  # every hand may knock: the choice is pending
    seat = s.turn
    for _ in range(2):
        s, _ = step(s, Draw(seat))
        s, _ = step(s, Pass(seat))
    s, _ = step(s, Draw(seat))
    assert s.phase == KNOCK_OR_END
    with pytest.raises(IllegalMoveError) as e:
        decide(s, Meld(seat, s.table))
    assert e.value.rule == "R3.3"


def test_not_your_turn_and_bad_seat():
    s, _ = new_game()
    other = (s.turn + 1) % 3
    with pytest.raises(NotYourTurnError):
        decide(s, Draw(other))
    with pytest.raises(NotationError):
        decide(s, Draw(7))


def test_rejected_command_changes_nothing():
    s, _ = new_game()
    before = s
    with pytest.raises(IllegalMoveError):
        decide(s, Knock(s.turn))
    assert s == before


def test_r5_meld_then_r3_4_turn_over():
    s, _ = new_game(3, knock_threshold=0)
    seat = s.turn
    s, _ = step(s, Draw(seat))
    hands = [list(h) for h in s.hands]
    hands[seat] = list(parse_cards("7S 7H 7D 2C 9D"))
    s = with_hands(s, hands)
    s, ev = step(s, Meld(seat, parse_table("7S 7H 7D")))
    assert [type(e) for e in ev] == [Melded, TurnEnded]
    assert ev[0].cards == parse_cards("7S 7H 7D")
    assert s.hands[seat] == parse_cards("2C 9D")
    assert s.table == parse_table("7S 7H 7D")


def test_r6_1_knock_after_turn_with_low_hand_and_r7_scoring():
    s, _ = new_game(2, seed=5)
    seat = s.turn
    other = 1 - seat
    s, _ = step(s, Draw(seat))
    hands = [None, None]
    hands[seat] = list(parse_cards("7S 7H 7D AC 2C"))
    hands[other] = list(parse_cards("KD QD"))
    s = with_hands(s, hands)
    # rebuild a conserved deck is not needed for decide; scoring uses hands only
    s, ev = step(s, Meld(seat, parse_table("7S 7H 7D")))
    assert s.phase == KNOCK_OR_END  # AC 2C = 3 points <= 5
    s, ev = step(s, Knock(seat))
    assert isinstance(ev[0], Knocked) and ev[0].points == 3
    scored = ev[1]
    assert isinstance(scored, RoundScored)
    assert scored.reason == "knock" and scored.winners == (seat,)
    assert scored.scores[seat] == 20 - 3  # R7.2
    assert isinstance(ev[2], RoundStarted) and ev[2].dealer == (s.dealer)  # next deal
    assert s.round == 2


def test_r6_2_going_out_ends_round_with_bonus():
    s, _ = new_game(2, seed=9)
    seat = s.turn
    s, _ = step(s, Draw(seat))
    hands = [None, None]
    hands[seat] = list(parse_cards("7S 7H 7D"))
    hands[1 - seat] = list(parse_cards("KD 2C"))
    s = with_hands(s, hands)
    s, ev = step(s, Meld(seat, parse_table("7S 7H 7D")))
    scored = [e for e in ev if isinstance(e, RoundScored)][0]
    assert scored.reason == "going_out" and scored.knocker == seat
    assert scored.scores[seat] == 12 + 25  # R7.7


def test_r8_stock_runs_out_then_final_turns_then_scoring():
    s, _ = new_game(3, seed=2, knock_threshold=0)
    seat = s.turn
    stock = [parse_card("2C")]  # one card left
    s = with_hands(s, [list(h) for h in s.hands], stock=stock)
    s, ev = step(s, Draw(seat))
    assert [type(e) for e in ev] == [CardDrawn, StockExhausted]
    assert s.phase == MELD_OR_PASS  # R8.1: may still meld after a first draw
    s, ev = step(s, Pass(seat))  # no further draw: the turn is over
    assert [type(e) for e in ev] == [Passed, TurnEnded]
    for k in range(3):  # R8.2: one final turn each, ending with the drawer
        assert s.phase == MELD_OR_PASS and s.turn == (seat + 1 + k) % 3
        with pytest.raises(IllegalMoveError):
            decide(s, Draw(s.turn))
        s, ev = step(s, Pass(s.turn))
    scored = [e for e in ev if isinstance(e, RoundScored)][0]
    assert scored.reason == "stock" and scored.knocker is None  # R8.3


def test_r9_game_end_with_bonuses():
    s, _ = new_game(2, seed=4, target_score=10)
    seat = s.turn
    s, _ = step(s, Draw(seat))
    hands = [None, None]
    hands[seat] = list(parse_cards("7S 7H 7D"))
    hands[1 - seat] = list(parse_cards("KD 2C"))
    s = with_hands(s, hands)
    s, ev = step(s, Meld(seat, parse_table("7S 7H 7D")))
    end = ev[-1]
    assert isinstance(end, GameEnded)
    assert end.totals[seat] == 37 and end.final[seat] == 137 and end.winners == (seat,)
    with pytest.raises(GameOverError):
        decide(s, Draw(s.turn))


def test_r5_5_opening_variant_per_player():
    s, _ = new_game(3, opening_meld_per_player=True, opening_meld_min_points=30)
    seat = s.turn
    s, _ = step(s, Draw(seat))
    hands = [list(h) for h in s.hands]
    hands[seat] = list(parse_cards("7S 7H 7D 2C 3C 4C"))
    s = with_hands(s, hands)
    with pytest.raises(IllegalMoveError, match="at least 30") as e:
        decide(s, Meld(seat, parse_table("7S 7H 7D")))
    assert e.value.rule == "R5.5"
    hands[seat] = list(parse_cards("TS TH TD KC QC JC"))
    s = with_hands(s, hands)
    s2, _ = step(s, Meld(seat, parse_table("TS TH TD | JC QC KC")))
    assert s2.opened[seat]


def test_end_turn_when_knock_allowed():
    s, _ = new_game(3, knock_threshold=1000)
    seat = s.turn
    s, _ = step(s, Draw(seat))
    s, _ = step(s, Pass(seat))
    s, _ = step(s, Draw(seat))
    s, _ = step(s, Pass(seat))
    s, _ = step(s, Draw(seat))
    s, ev = step(s, EndTurn(seat))
    assert [type(e) for e in ev] == [TurnEnded] and s.turn == (seat + 1) % 3


def test_r2_1_dealer_rotates_each_round():
    s, _ = new_game(3, seed=11, knock_threshold=1000)
    first = s.dealer
    s, ev = step(s, Draw(s.turn))
    s, ev = step(s, Pass(s.turn))
    s, ev = step(s, Draw(s.turn))
    s, ev = step(s, Pass(s.turn))
    s, ev = step(s, Draw(s.turn))
    s, ev = step(s, Knock(s.turn))
    started = [e for e in ev if isinstance(e, RoundStarted)][0]
    assert started.dealer == (first + 1) % 3 and s.round == 2


def test_i4_replay_equals_live_state():
    s, events = new_game(3, seed=8)
    log = list(events)
    for cmd in (Draw(s.turn), Pass(s.turn)):
        s, ev = step(s, cmd)
        log += ev
    assert replay(log) == s
    t = None
    for e in log:
        t = evolve(t, e)
    assert t == s


def test_hand_joker_constant():
    assert JOKER == 52


@pytest.mark.parametrize("cmd", [
    CreateGame(3, 1, rules=None),  # type: ignore[arg-type]
    CreateGame(3, 1, names=None),  # type: ignore[arg-type]
    CreateGame(3, 1, names=(1, 2, 3)),  # type: ignore[arg-type]
    CreateGame(3, "seed"),  # type: ignore[arg-type]
])
def test_malformed_create_game_is_a_rummy_error(cmd):
    with pytest.raises(NotationError):
        step(None, cmd)


@pytest.mark.parametrize("table", [None, "5S 6S 7S", ((28, 29, 30, -21),), ((1, 2, 3.5),)])
def test_malformed_meld_tables_are_rejected_without_change(table):
    s, _ = new_game(3, seed=42)
    s, _ = step(s, Draw(s.turn))
    with pytest.raises(NotationError):
        decide(s, Meld(s.turn, table))


def test_a_seat_of_an_int_subclass_acts_as_its_int() -> None:
    # the deciders' inline check of the usual case (a plain int seat) falls back to the
    # full seat check, which accepts any int but a bool: the same events either way
    class Seat(int):
        pass

    s, _ = new_game(players=3, seed=4)
    for make in (Draw, Pass, Draw):
        plain = step(s, make(s.turn))
        assert step(s, make(Seat(s.turn))) == plain
        s = plain[0]
    rules = []
    for seat in (s.turn, Seat(s.turn)):  # the same refusal: nothing added (R5.1)
        with pytest.raises(IllegalMoveError) as e:
            step(s, Meld(seat, s.table))
        rules.append(e.value.rule)
    assert rules == ["R5.1", "R5.1"]
    with pytest.raises(NotationError):
        step(s, Draw(True))
